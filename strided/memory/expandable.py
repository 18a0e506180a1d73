"""Expandable segments: one virtual range per (stream, pool), grown by mapping pages.

See c10's Note [Expandable Segments].  A segment reserves virtual address space for 1 1/8
of the device's memory (or ``expandable_segments_reserve``) and maps physical pages on
demand: 2 MiB pages for the small pool, ``large_segment_size`` (20 MiB) pages for the large
pool -- or ``strided_large_page_mb``.  Unmapped ranges are Blocks with ``mapped = False`` kept
in the pool's ``unmapped`` set; a malloc that finds no cached block maps pages at the lowest
address with enough free-or-unmapped room.  Pages are unmapped only by ``empty_cache`` / the
OOM retry, or -- with ``strided_eager_unmap`` -- when the stream's use of a free page is over.

Note [Eager page recycling]
~~~~~~~~~~~~~~~~~~~~~~~~~~~
With ``strided_eager_unmap:True`` a block freed into an expandable segment that covers at
least one whole page (and at least ``strided_eager_unmap_min_mb`` of them) becomes a *recycle
candidate* stamped with a sequence number, and an event
is recorded on its stream.  Streams are ordered, so when that event completes every use of
memory freed up to the stamp is over, and the candidate's whole free pages can be unmapped
without the ``cudaStreamSynchronize`` that ``empty_cache`` pays.  Events are polled at the start
of malloc (like cross-stream frees).  A merge keeps the newest stamp of the pieces; a piece
that was never a candidate (or was already processed) is safe by construction.  A split keeps
the candidate object as the free remainder (the allocated front is a new Block), so the stamp
still covers exactly the free part.
"""

from __future__ import annotations

from collections import deque

from .blocks import K_SMALL_BUFFER, Block, BlockPool
from .history import SEGMENT_MAP, SEGMENT_UNMAP
from .stats import RESERVED_BYTES

__all__ = ["ExpandableSegment", "ExpandableMixin"]


class ExpandableSegment:
    """A reserved virtual range whose pages are mapped on demand (c10 ``ExpandableSegment``)."""

    __slots__ = ("provider", "stream", "segment_size", "ptr", "max_handles", "handles")

    def __init__(self, provider: object, stream: int, segment_size: int, reserve: int) -> None:
        self.provider = provider
        self.stream = stream
        self.segment_size = segment_size
        self.max_handles = -(-reserve // segment_size)
        self.ptr = provider.reserve_address(segment_size * self.max_handles)
        self.handles: list[bool] = []  # handles[i]: page i is mapped

    def size(self) -> int:
        return self.max_handles * self.segment_size

    def map(self, ptr: int, size: int) -> tuple[int, int]:
        """Map the pages covering ``[ptr, ptr + size)``; ``ptr`` is page aligned.

        Returns the mapped range ``(ptr, nbytes)``; ``nbytes == 0`` means out of memory.
        """
        ss = self.segment_size
        begin = (ptr - self.ptr) // ss
        end = -(-(ptr + size - self.ptr) // ss)
        handles = self.handles
        if begin == end:
            return self.ptr + begin * ss, 0
        if end > len(handles):
            handles.extend([False] * (end - len(handles)))
        for i in range(begin, end):
            if handles[i]:
                raise AssertionError(f"page {i} of segment {self.ptr:#x} is already mapped")
            if not self.provider.map_page(self.ptr + i * ss, ss):
                for j in range(begin, i):
                    self.provider.unmap_page(self.ptr + j * ss, ss)
                    handles[j] = False
                self._trim()
                return self.ptr + begin * ss, 0
            handles[i] = True
        return self.ptr + begin * ss, (end - begin) * ss

    def unmap(self, ptr: int, size: int, sync: bool = True) -> tuple[int, int]:
        """Unmap the pages lying wholly inside ``[ptr, ptr + size)``; returns that range."""
        ss = self.segment_size
        begin = -(-(ptr - self.ptr) // ss)
        end = (ptr + size - self.ptr) // ss
        if begin >= end:
            return ptr, 0
        if sync:
            # unlike cudaFree, unmapping does not wait for queued work on the stream
            self.provider.synchronize_stream(self.stream)
        for i in range(begin, end):
            self.provider.unmap_page(self.ptr + i * ss, ss)
            self.handles[i] = False
        self._trim()
        return self.ptr + begin * ss, (end - begin) * ss

    def whole_pages(self, ptr: int, size: int) -> int:
        """Bytes of the whole pages inside ``[ptr, ptr + size)``."""
        ss = self.segment_size
        n = (ptr + size - self.ptr) // ss - -(-(ptr - self.ptr) // ss)
        return n * ss if n > 0 else 0

    def release(self) -> None:
        """Unmap what is still mapped and give the address range back."""
        ss = self.segment_size
        if any(self.handles):
            self.provider.synchronize_stream(self.stream)
        for i, mapped in enumerate(self.handles):
            if mapped:
                self.provider.unmap_page(self.ptr + i * ss, ss)
        self.handles = []
        self.provider.free_address(self.ptr, self.size())

    def _trim(self) -> None:
        while self.handles and not self.handles[-1]:
            self.handles.pop()


def _splice(block: Block, before: Block | None, after: Block | None) -> None:
    if before is not None:
        before.next = block
    block.prev = before
    if after is not None:
        after.prev = block
    block.next = after


class ExpandableMixin:
    """The expandable-segment and eager-recycling methods of the allocator."""

    def _init_expandable(self) -> None:
        self._expandable_segments: list[ExpandableSegment] = []
        self._recycle: dict[int, deque] = {}  # stream -> deque of (event, seq)
        self._recycle_stamp: dict[Block, int] = {}  # candidate block -> seq of its newest free
        self._recycle_queue: dict[int, deque] = {}  # stream -> deque of (seq, block), about seq order
        self._recycle_seq = 0

    def _segment_page_size(self, pool: BlockPool) -> int:
        if pool.is_small:
            return K_SMALL_BUFFER
        page = self.config.strided_large_page_size
        return self.config.large_segment_size if page is None else page

    def _reserve_size(self) -> int:
        total = self.provider.total_memory
        spec = self.config.expandable_segments_reserve
        if spec is None:
            return total + total // 8
        is_fraction, value = spec
        return int(value * total) if is_fraction else int(value * (1 << 30))

    def _find_expandable_block(self, pool: BlockPool, stream: int, size: int) -> Block:
        """Lowest-address free-or-unmapped run with ``size`` bytes of room, else a new segment."""

        def allocatable(b: Block | None) -> bool:
            return b is not None and not b.allocated and not b.event_count and b.stream_uses is None

        entry = pool.unmapped.get(stream)
        if entry is not None:
            for c in list(entry[1]):
                if allocatable(c.prev):
                    c = c.prev
                room = 0
                b = c
                while room < size and allocatable(b):
                    room += b.size
                    b = b.next
                if room >= size:
                    return c
        seg = ExpandableSegment(self.provider, stream, self._segment_page_size(pool), self._reserve_size())
        self._expandable_segments.append(seg)
        candidate = Block(seg.ptr, seg.size(), stream, pool, self)
        candidate.mapped = False
        candidate.segment = seg
        pool.insert_unmapped(candidate)
        return candidate

    def _map_block(self, to_map: Block, size: int, ctx: object) -> bool:
        ptr, mapped = to_map.segment.map(to_map.ptr, size)
        if mapped == 0:
            return False
        pool = to_map.pool
        pool.remove_unmapped(to_map)
        to_map.mapped = True
        if mapped < to_map.size:
            rest = Block(to_map.ptr + mapped, to_map.size - mapped, to_map.stream, pool, self)
            rest.mapped = False
            rest.segment = to_map.segment
            _splice(rest, to_map, to_map.next)
            pool.insert_unmapped(rest)
            to_map.size = mapped
        self._try_merge(to_map, to_map.prev, pool)
        self._try_merge(to_map, to_map.next, pool)
        pool.insert(to_map)
        self._total_allocated += mapped
        if pool.owner is not None:
            pool.owner.reserve(pool.stat_type, mapped)
        self.stats.increase2(RESERVED_BYTES, pool.stat_type, mapped)
        self.stats.num_device_alloc += 1
        if self._recording:
            self._record(SEGMENT_MAP, ptr, mapped, to_map.stream, ctx)
        if to_map.prev is None and to_map.segment_context is None:
            to_map.segment_context = ctx
        return True

    def _try_allocate_expandable_block(
        self, pool: BlockPool, size: int, stream: int, ctx: object
    ) -> Block | None:
        c = self._find_expandable_block(pool, stream, size)
        if not c.mapped and not self._map_block(c, min(c.size, size), ctx):
            return None
        while c.size < size:
            nxt = c.next
            if not self._map_block(nxt, min(size - c.size, nxt.size), ctx):
                return None
            c = nxt
        pool.remove(c)
        return c

    def _unmap_block(self, block: Block, ctx: object, sync: bool) -> None:
        seg = block.segment
        ptr, size = seg.unmap(block.ptr, block.size, sync)
        if size == 0:
            return
        pool = block.pool
        pool.remove(block)
        before = ptr - block.ptr
        if before > 0:
            bf = Block(block.ptr, before, block.stream, pool, self)
            bf.segment = seg
            _splice(bf, block.prev, block)
            pool.insert(bf)
        after = block.size - before - size
        if after > 0:
            af = Block(ptr + size, after, block.stream, pool, self)
            af.segment = seg
            _splice(af, block, block.next)
            pool.insert(af)
        block.ptr = ptr
        block.size = size
        block.mapped = False
        self._recycle_stamp.pop(block, None)
        self._try_merge(block, block.prev, pool)
        self._try_merge(block, block.next, pool)
        pool.insert_unmapped(block)
        self._total_allocated -= size
        if pool.owner is not None:
            pool.owner.malloc_count = max(0, pool.owner.malloc_count - 1)
            pool.owner.reserve(pool.stat_type, -size)
        self.stats.decrease2(RESERVED_BYTES, pool.stat_type, size)
        self.stats.num_device_free += 1
        if self._recording:
            self._record(SEGMENT_UNMAP, ptr, size, block.stream, ctx or block.segment_context)

    def _release_expandable_segment(self, block: Block) -> None:
        seg = block.segment
        if block.size != seg.size() or block.mapped:
            raise AssertionError("block disagrees with segment")
        self._expandable_segments.remove(seg)
        block.pool.remove_unmapped(block)
        block.owner = None
        self._recycle_stamp.pop(block, None)
        seg.release()

    # -- Note [Eager page recycling] -------------------------------------------------------
    def _recycle_candidate(self, block: Block) -> None:
        """A block was just freed into an expandable segment."""
        whole = block.segment.whole_pages(block.ptr, block.size)
        if not whole or whole < self.config.strided_eager_unmap_min_size:
            self._recycle_stamp.pop(block, None)
            return
        self._recycle_seq += 1
        seq = self._recycle_seq
        self._recycle_stamp[block] = seq
        self._queue_candidate(block, seq)
        event = self.provider.record_event(block.stream)
        q = self._recycle.get(block.stream)
        if q is None:
            q = self._recycle[block.stream] = deque()
        q.append((event, seq))

    def _recycle_merge(self, dst: Block, src: Block) -> None:
        stamps = self._recycle_stamp
        s = stamps.pop(src, None)
        if s is not None and s > stamps.get(dst, 0):
            stamps[dst] = s
            self._queue_candidate(dst, s)

    def _queue_candidate(self, block: Block, seq: int) -> None:
        q = self._recycle_queue.get(block.stream)
        if q is None:
            q = self._recycle_queue[block.stream] = deque()
        q.append((seq, block))

    def _drain_recycle(self) -> None:
        """Wait for every recycle event: ``release_cached_blocks`` is about to unmap all free pages."""
        for q in self._recycle.values():
            for event, _ in q:
                self.provider.synchronize_event(event)
                self.provider.release_event(event)
        self._recycle.clear()
        self._recycle_stamp.clear()
        self._recycle_queue.clear()

    def _process_recycle(self, ctx: object) -> None:
        provider = self.provider
        done: dict[int, int] = {}
        for s in list(self._recycle):
            q = self._recycle[s]
            while q and provider.query_event(q[0][0]):
                event, seq = q.popleft()
                provider.release_event(event)
                done[s] = seq
            if not q:
                del self._recycle[s]
        stamps = self._recycle_stamp
        for s, last in done.items():
            q = self._recycle_queue.get(s)
            # a merge can queue an older stamp behind newer ones: it then waits a little longer
            while q and q[0][0] <= last:
                seq, block = q.popleft()
                if stamps.get(block) != seq:
                    continue  # superseded by a newer free, or gone
                del stamps[block]
                self._recycle_now(block, ctx)

    def _recycle_now(self, block: Block, ctx: object) -> None:
        """Unmap the whole free pages of a candidate whose stream work is over."""
        if (
            block.owner is self
            and not block.allocated
            and block.mapped
            and not block.event_count
            and block.stream_uses is None
        ):
            self._unmap_block(block, ctx, sync=False)
            if block.prev is None and block.next is None and not block.mapped:
                self._release_expandable_segment(block)
