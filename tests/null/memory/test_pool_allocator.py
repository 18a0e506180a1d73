"""Private pools whose segments come from their own allocator (``MemPool(allocator=...)``)."""

from __future__ import annotations

import pytest

MiB = 1 << 20


class CountingAllocator:
    """A segment allocator over a separate address range, counting its calls."""

    def __init__(self, capacity: int = 1 << 40):
        self.next = 0x7000_0000_0000
        self.capacity = capacity
        self.live: dict[int, tuple[int, int]] = {}
        self.mallocs: list[tuple[int, int]] = []
        self.frees: list[tuple[int, int, int]] = []

    def malloc(self, nbytes, stream):
        if sum(n for n, _ in self.live.values()) + nbytes > self.capacity:
            return None
        ptr = self.next
        self.next += nbytes
        self.live[ptr] = (nbytes, stream)
        self.mallocs.append((nbytes, stream))
        return ptr

    def free(self, ptr, nbytes, stream):
        assert self.live.pop(ptr) == (nbytes, stream)
        self.frees.append((ptr, nbytes, stream))


def test_pool_segments_come_from_its_allocator(make):
    alloc, dev = make()
    seg = CountingAllocator()
    pool = alloc.create_pool(allocator=seg)
    alloc.begin_allocate_to_pool(pool, lambda s: s == 5)
    a = alloc.malloc(4 * MiB, stream=5)  # a 20 MiB segment from `seg`
    b = alloc.malloc(1 * MiB, stream=5)  # a small-pool request: its own 2 MiB segment from `seg`
    c = alloc.malloc(4 * MiB, stream=5)  # carved from a's segment (blocks are still split and cached)
    outside = alloc.malloc(4 * MiB, stream=6)  # not routed: the device provides it
    alloc.end_allocate_to_pool(pool)
    assert seg.mallocs == [(20 * MiB, 5), (2 * MiB, 5)]
    assert a.ptr in seg.live and b.ptr in seg.live and c.ptr == a.ptr + 4 * MiB
    assert outside.ptr not in seg.live
    key = f"reserved_bytes_by_private_pools.{pool[0]}_{pool[1]}.all.current"
    assert alloc.memory_stats()[key] == 22 * MiB
    for blk in (a, b, c, outside):
        alloc.free(blk)
    alloc.empty_cache()  # the pool is still in use: its segments stay
    assert seg.frees == [] and len(seg.live) == 2
    alloc.release_pool(pool)
    alloc.release_pool(pool)
    alloc.empty_cache()
    assert sorted(n for _, n, _ in seg.frees) == [2 * MiB, 20 * MiB] and not seg.live
    assert alloc.memory_reserved() == 0 and pool not in alloc._graph_pools


def test_pool_allocator_oom_and_expandable_bypass(make):
    alloc, dev = make("expandable_segments:True")
    seg = CountingAllocator(capacity=30 * MiB)
    pool = alloc.create_pool(allocator=seg)
    alloc.begin_allocate_to_pool(pool, lambda s: True)
    a = alloc.malloc(25 * MiB)  # a plain 26 MiB segment from `seg`, never VMM pages
    assert seg.mallocs == [(26 * MiB, 0)] and a.segment is None
    with pytest.raises(Exception, match="out of memory"):
        alloc.malloc(10 * MiB)  # `seg` is full; the device still has room
    alloc.end_allocate_to_pool(pool)
    alloc.free(a)
    alloc.release_pool(pool)
    alloc.release_pool(pool)
    alloc.empty_cache()
    assert seg.frees and not seg.live
