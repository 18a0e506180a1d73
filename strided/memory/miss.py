"""malloc's slow path: the best fit under every c10 rule, and what happens when nothing fits.

Mixin of :class:`~.caching.CachingAllocator` (c10 ``get_free_block``, the miss handling of
``malloc``, and ``alloc_block``).  ``malloc`` itself (``caching.py``) serves the common case, a
cached block of the same stream with no size limits in force, without calling in here.
"""

from __future__ import annotations

from bisect import bisect_left

from .blocks import KEY_SHIFT, Block, BlockPool, get_allocation_size
from .history import SEGMENT_ALLOC
from .stats import OVERSIZE_SEGMENTS, RESERVED_BYTES, SEGMENT

__all__ = ["MissMixin", "FREE_MEMORY_CALLBACKS", "register_free_memory_callback"]

FREE_MEMORY_CALLBACKS: list = []
"""c10's ``FreeCudaMemoryCallbacksRegistry``: called on a cache miss; True = memory was freed."""


def register_free_memory_callback(fn) -> None:
    """Register ``fn`` to run when a malloc misses the cache (all devices), before new memory
    is requested.  ``fn()`` returns True when it freed something, and the search is retried."""
    if not callable(fn):
        raise TypeError(f"register_free_memory_callback: expected a callable, got {fn!r}")
    FREE_MEMORY_CALLBACKS.append(fn)


class MissMixin:
    """Best fit with all rules, new segments, and the OOM fallbacks."""

    def _get_free_block(self, pool: BlockPool, rsize: int, stream: int) -> Block | None:
        """Best fit on the same stream with every c10 rule (``get_free_block``); removes it."""
        if self._gc_active:
            pool.get_free_blocks_call_count += 1
        fl = pool.free.get(stream)
        if fl is None:
            return None
        keys = fl.keys
        i = bisect_left(keys, rsize << KEY_SHIFT)
        if i == len(keys):
            return None
        blocks = fl.blocks
        block = blocks[i]
        if block.segment is not None:
            if self._expandable_on:
                # Note [Expandable best fit]: a free block followed by unmapped space counts as
                # big as it could grow, so prefer a later block that would grow less.
                def grow(b: Block) -> int:
                    n = b.next
                    return b.size + (n.size if n is not None and not n.mapped else 0)

                while block.segment is not None and i + 1 < len(keys) and grow(blocks[i + 1]) < grow(block):
                    i += 1
                    block = blocks[i]
            else:
                # expandable segments were switched off: serve only ordinary blocks
                while block.segment is not None:
                    i += 1
                    if i == len(keys):
                        return None
                    block = blocks[i]
        if self._split_limited:
            max_split = self._max_split
            if rsize < max_split and block.size >= max_split:
                return None
            if rsize >= max_split and block.size >= rsize + self.config.max_non_split_rounding_size:
                return None
        del keys[i]
        del blocks[i]
        return block

    def _malloc_miss(self, pool: BlockPool, rsize: int, orig: int, stream: int, ctx: object) -> Block:
        """No cached block fits: callbacks, GC, new device memory, the OOM fallbacks."""
        if FREE_MEMORY_CALLBACKS:
            freed = False
            for fn in list(FREE_MEMORY_CALLBACKS):
                freed |= bool(fn())
            if freed:
                block = self._get_free_block(pool, rsize, stream)
                if block is not None:
                    return block
        alloc_size = get_allocation_size(rsize, self._large_segment)
        if self._gc_active:
            self._garbage_collect_cached_blocks(ctx)
        block = self._alloc_block(pool, rsize, alloc_size, stream, False, ctx)
        if block is None and self._release_available_cached_blocks(pool, rsize, stream, ctx):
            block = self._alloc_block(pool, rsize, alloc_size, stream, False, ctx)
        if block is None and not self._captures:
            self._release_cached_blocks(ctx)
            block = self._alloc_block(pool, rsize, alloc_size, stream, True, ctx)
        if block is None:
            self._raise_oom(orig, rsize, alloc_size, stream, ctx)
        return block

    def _alloc_block(
        self, pool: BlockPool, rsize: int, alloc_size: int, stream: int, is_retry: bool, ctx: object
    ) -> Block | None:
        """Get new device memory for ``pool`` (c10 ``alloc_block``); None when the device is full."""
        st = self.stats
        if is_retry:
            st.num_alloc_retries += 1
        if self._set_fraction and self._total_allocated + alloc_size > self._allowed_max:
            if self.config.throw_on_cudamalloc_oom:
                st.num_oom_rejections += 1
            return None
        owner = pool.owner
        if owner is not None and owner.allocator is not None:  # Note [Pool allocators]
            ptr = owner.allocator.malloc(alloc_size, stream)
        elif self._expandable_on:
            block = self._try_allocate_expandable_block(pool, rsize, stream, ctx)
            if block is not None and owner is not None:
                owner.malloc_count += 1
            return block
        elif self.config.release_lock_on_cudamalloc:
            self._lock.release()
            try:
                ptr = self.provider.malloc(alloc_size)
            finally:
                self._lock.acquire()
        else:
            ptr = self.provider.malloc(alloc_size)
        if ptr is None:
            return None
        if pool.owner is not None:
            pool.owner.malloc_count += 1
            pool.owner.reserve(pool.stat_type, alloc_size)
        self._total_allocated += alloc_size
        block = Block(ptr, alloc_size, stream, pool, self)
        t = pool.stat_type
        st.increase2(SEGMENT, t, 1)
        st.increase2(RESERVED_BYTES, t, alloc_size)
        if alloc_size >= self._max_split:
            st.increase(OVERSIZE_SEGMENTS, 1)
        st.num_device_alloc += 1
        if self._recording:
            self._record(SEGMENT_ALLOC, ptr, alloc_size, stream, ctx)
        block.segment_context = ctx
        return block
