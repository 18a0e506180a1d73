"""A full consistency check of an allocator, for tests and debugging.

:func:`check_invariants` walks every segment and recounts everything the allocator tracks
incrementally.  It is O(blocks): never called by the allocator itself.
"""

from __future__ import annotations

from .blocks import KEY_SHIFT, Block
from .stats import (
    ACTIVE,
    ACTIVE_BYTES,
    ALLOCATED_BYTES,
    ALLOCATION,
    INACTIVE_SPLIT,
    INACTIVE_SPLIT_BYTES,
    REQUESTED_BYTES,
    RESERVED_BYTES,
    SEGMENT,
)

__all__ = ["check_invariants"]


def _free(b: Block) -> bool:
    return not b.allocated and not b.event_count and b.stream_uses is None


def check_invariants(alloc) -> None:  # noqa: C901 - one linear list of checks
    """Raise AssertionError if ``alloc`` (a CachingAllocator) is inconsistent.

    Checks: segments are contiguous chains that tile their memory exactly; no two blocks
    overlap; free neighbours are merged; the free sets hold exactly the free blocks, in
    order; stats equal a recount; and the device holds exactly the reserved bytes.
    """
    with alloc._lock:
        pools = [alloc.small_blocks, alloc.large_blocks]
        for pp in alloc._graph_pools.values():
            pools += [pp.small, pp.large]
        heads: set[int] = set()
        listed: set[int] = set()
        for pool in pools:
            for stream, fl in pool.free.items():
                assert fl.keys == sorted(fl.keys), "free list out of order"
                assert len(set(fl.keys)) == len(fl.keys), "duplicate free-list key"
                for key, b in zip(fl.keys, fl.blocks):
                    assert key == b.size << KEY_SHIFT | b.ptr, f"stale key for {b!r}"
                    assert b.pool is pool and b.stream == stream and b.mapped and _free(b), f"bad free {b!r}"
                    assert b.owner is alloc, f"dead block {b!r} in free list"
                    listed.add(id(b))
            for stream, (ptrs, blocks) in pool.unmapped.items():
                assert ptrs == sorted(ptrs) and ptrs == [b.ptr for b in blocks], "unmapped set out of order"
                for b in blocks:
                    assert not b.mapped and b.segment is not None and b.stream == stream
                    listed.add(id(b))
        starts = []
        for pool in pools:
            for b in pool.all_blocks() + [x for _, bl in pool.unmapped.values() for x in bl]:
                while b.prev is not None:
                    b = b.prev
                heads.add(id(b))
                starts.append(b)
        for b in alloc._active.values():
            assert alloc._active[b.ptr] is b
            assert b.allocated or b.event_count or b.stream_uses, f"inactive {b!r} in active set"
            while b.prev is not None:
                b = b.prev
            starts.append(b)
        n_types = 3
        count = {
            k: [0] * n_types
            for k in ("alloc", "abytes", "active", "actbytes", "seg", "res", "isplit", "isbytes", "req")
        }
        ranges = []
        seen_heads = set()
        seen_segments = set()
        for head in starts:
            if id(head) in seen_heads:
                continue
            seen_heads.add(id(head))
            t = head.pool.stat_type
            seg = head.segment
            total = 0
            b = head
            prev = None
            split = head.next is not None
            while b is not None:
                assert b.prev is prev, f"broken prev link at {b!r}"
                assert b.owner is alloc, f"dead block {b!r} in a segment"
                assert b.segment is seg and b.pool is head.pool and b.stream == head.stream
                if prev is not None:
                    assert prev.ptr + prev.size == b.ptr, f"gap or overlap between {prev!r} and {b!r}"
                    if _free(prev) and _free(b) and prev.mapped == b.mapped:
                        raise AssertionError(f"free neighbours not merged: {prev!r} {b!r}")
                assert b.size > 0, f"empty block {b!r}"
                if b.mapped:
                    ranges.append((b.ptr, b.ptr + b.size))
                    if b.allocated:
                        assert b.ptr in alloc._active, f"allocated {b!r} missing from the active set"
                    elif _free(b):
                        assert id(b) in listed, f"free {b!r} missing from its free list"
                    else:
                        assert alloc._active.get(b.ptr) is b, f"pending {b!r} missing from the active set"
                else:
                    assert id(b) in listed, f"unmapped {b!r} missing from the unmapped set"
                if b.allocated:
                    for j in (0, t):
                        count["alloc"][j] += 1
                        count["abytes"][j] += b.size
                if b.allocated or b.event_count or b.stream_uses:
                    for j in (0, t):
                        count["active"][j] += 1
                        count["actbytes"][j] += b.size
                        count["req"][j] += b.requested_size
                elif seg is None and split:
                    for j in (0, t):
                        count["isplit"][j] += 1
                        count["isbytes"][j] += b.size
                if b.mapped:
                    for j in (0, t):
                        count["res"][j] += b.size
                total += b.size
                prev = b
                b = b.next
            if seg is None:
                for j in (0, t):
                    count["seg"][j] += 1
                size = getattr(alloc.provider, "allocations", {}).get(head.ptr)
                if size is not None:
                    assert size == total, f"segment at {head.ptr:#x} tiles {total} of {size} bytes"
            else:
                assert head.ptr == seg.ptr and total == seg.size(), (
                    "expandable chain does not cover its range"
                )
                seen_segments.add(id(seg))
                ss = seg.segment_size
                b = head
                while b is not None:
                    if b.mapped:
                        for k in range((b.ptr - seg.ptr) // ss, (b.ptr + b.size - seg.ptr - 1) // ss + 1):
                            assert k < len(seg.handles) and seg.handles[k], f"{b!r} lies on an unmapped page"
                    b = b.next
        assert seen_segments == {id(s) for s in alloc._expandable_segments}, "lost expandable segment"
        ranges.sort()
        for (_, e1), (s2, _) in zip(ranges, ranges[1:]):
            assert e1 <= s2, f"blocks overlap at {s2:#x}"
        st = alloc.stats
        for name, stat in (
            ("alloc", ALLOCATION),
            ("abytes", ALLOCATED_BYTES),
            ("active", ACTIVE),
            ("actbytes", ACTIVE_BYTES),
            ("seg", SEGMENT),
            ("res", RESERVED_BYTES),
            ("isplit", INACTIVE_SPLIT),
            ("isbytes", INACTIVE_SPLIT_BYTES),
            ("req", REQUESTED_BYTES),
        ):
            for j in range(n_types):
                got = st.stat(stat + j)[0]
                assert got == count[name][j], f"stat {name}[{j}] = {got}, recount {count[name][j]}"
            for j in range(n_types):
                cur, peak, acc, fre = st.stat(stat + j)
                assert 0 <= cur <= peak and acc >= 0 and fre >= 0, f"stat {name}[{j}] fields inconsistent"
            if n_types == 3:  # all = small + large for current, allocated and freed (Note [Stat layout])
                whole, small, large = (st.stat(stat + j) for j in range(3))
                for f in (0, 2, 3):
                    assert whole[f] == small[f] + large[f], f"stat {name}: all != small + large (field {f})"
        assert alloc._total_allocated == st.cur[RESERVED_BYTES], (
            "reserved bytes disagree with the device total"
        )
        used = getattr(alloc.provider, "used", None)
        if used is not None:
            assert used == st.cur[RESERVED_BYTES], (
                f"device holds {used} bytes, allocator reserved {st.cur[RESERVED_BYTES]}"
            )
