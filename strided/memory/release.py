"""Giving memory back to the device: OOM fallbacks, garbage collection, ``empty_cache``.

Mixin of :class:`~.caching.CachingAllocator` (shares its state); c10 names kept.
"""

from __future__ import annotations

from bisect import bisect_left

from .blocks import KEY_SHIFT, Block, BlockPool
from .errors import OutOfMemoryError
from .history import OOM, SEGMENT_FREE
from .stats import ALLOCATED_BYTES, OVERSIZE_SEGMENTS, RESERVED_BYTES, SEGMENT

__all__ = ["ReleaseMixin"]


class ReleaseMixin:
    """``release_*``, ``garbage_collect_cached_blocks``, ``empty_cache`` and the OOM error."""

    def empty_cache(self) -> None:
        """Release every unused cached segment to the device (``torch.cuda.empty_cache``).

        Waits for outstanding cross-stream events first.  Segments holding a live block stay;
        expandable segments give back their fully free pages.
        """
        ctx = self._gather(4) if self._context_level >= 4 else None
        with self._lock:
            if self._captures:
                raise RuntimeError("empty_cache: not allowed while allocations are routed to a private pool")
            if self._late:
                self._free_late()
            self._release_cached_blocks(ctx)

    def _release_cached_blocks(self, ctx: object) -> bool:
        """c10 ``release_cached_blocks``: sync events, free all unsplit cached segments."""
        self._synchronize_and_free_events(ctx)
        if self._recycle:
            self._drain_recycle()
        self._release_blocks(self.large_blocks, ctx)
        self._release_blocks(self.small_blocks, ctx)
        for pid in list(self._graph_pools_freeable):
            pp = self._graph_pools[pid]
            self._release_blocks(pp.small, ctx)
            self._release_blocks(pp.large, ctx)
            if pp.malloc_count == 0:
                del self._graph_pools[pid]
                del self._graph_pools_freeable[pid]
        return True

    def _release_blocks(self, pool: BlockPool, ctx: object) -> None:
        to_unmap = []
        for block in pool.all_blocks():
            if block.segment is not None:
                to_unmap.append(block)
            elif block.prev is None and block.next is None:
                self._release_block(block, ctx)
        for block in to_unmap:
            if block.owner is not self or block.allocated or not block.mapped:
                continue  # merged into a neighbour that was unmapped before it
            self._unmap_block(block, ctx, sync=True)
            if block.prev is None and block.next is None:
                self._release_expandable_segment(block)

    def _release_block(self, block: Block, ctx: object) -> None:
        """cudaFree one whole cached segment (c10 ``release_block``)."""
        st = self.stats
        st.num_device_free += 1
        if self._recording:
            self._record(SEGMENT_FREE, block.ptr, block.size, block.stream, ctx or block.segment_context)
        pool = block.pool
        if pool.owner is not None and pool.owner.allocator is not None:  # Note [Pool allocators]
            pool.owner.allocator.free(block.ptr, block.size, block.stream)
        else:
            self.provider.free(block.ptr)
        self._total_allocated -= block.size
        if pool.owner is not None:
            pool.owner.malloc_count -= 1
            pool.owner.reserve(pool.stat_type, -block.size)
        t = pool.stat_type
        st.decrease2(SEGMENT, t, 1)
        st.decrease2(RESERVED_BYTES, t, block.size)
        if block.size >= self._max_split:
            st.decrease(OVERSIZE_SEGMENTS, 1)
        pool.remove(block)
        block.owner = None

    def _release_available_cached_blocks(self, pool: BlockPool, rsize: int, stream: int, ctx: object) -> bool:
        """Free just enough oversize cached blocks for this request (only with max_split_size)."""
        if not self._split_limited:
            return False
        fl = pool.free.get(stream)
        if fl is None:
            return False
        key_size = max(rsize, self._max_split)
        blocks = [b for b in fl.blocks if b.segment is None]
        keys = [b.size << KEY_SHIFT | b.ptr for b in blocks]
        i = bisect_left(keys, key_size << KEY_SHIFT)
        if i < len(blocks):
            self._release_block(blocks[i], ctx)
            return True
        released = 0
        j = i - 1
        while released < key_size and j >= 0 and blocks[j].size >= self._max_split:
            released += blocks[j].size
            self._release_block(blocks[j], ctx)
            j -= 1
        return released >= key_size

    def _garbage_collect_cached_blocks(self, ctx: object) -> None:
        """Free old unsplit large blocks while reserved memory exceeds the GC threshold."""
        threshold = int(self.config.garbage_collection_threshold * self._allowed_max)
        if self._total_allocated <= threshold:
            return
        target = self._total_allocated - threshold
        pool = self.large_blocks
        count = pool.get_free_blocks_call_count

        def freeable() -> list[Block]:
            return [b for b in pool.all_blocks() if b.segment is None and b.prev is None and b.next is None]

        candidates = freeable()
        if not candidates:
            return
        total_age = sum(count - b.gc_count_base for b in candidates)
        n = len(candidates)
        reclaimed = 0
        freed = True
        while reclaimed < target and freed and n > 0:
            age_threshold = total_age / n
            freed = False
            for block in freeable():
                age = count - block.gc_count_base
                if age >= age_threshold:
                    freed = True
                    reclaimed += block.size
                    total_age -= age
                    n -= 1
                    self._release_block(block, ctx)

    def _raise_oom(self, orig: int, rsize: int, alloc_size: int, stream: int, ctx: object) -> None:
        free, total = self.provider.mem_get_info()
        st = self.stats
        if self._recording:
            self._record(OOM, free, rsize, stream, ctx)
        st.num_ooms += 1
        allocated = st.cur[ALLOCATED_BYTES]
        reserved = st.cur[RESERVED_BYTES]
        private = sum(pp.small.total_free() + pp.large.total_free() for pp in self._graph_pools.values())
        allowed = self._allowed_max if self._set_fraction else None
        observers = list(self._oom_observers)
        err = OutOfMemoryError.from_state(
            requested=orig,
            alloc_size=alloc_size,
            device=self.device,
            total=total,
            free=free,
            allocated=allocated,
            reserved=reserved,
            private_pool_bytes=private,
            allowed=allowed,
        )
        for fn in observers:
            fn(self.device, alloc_size, allowed if allowed is not None else total, free)
        raise err
