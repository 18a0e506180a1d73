"""Handing out a found block (split) and taking freed blocks back (merge).

Mixin of :class:`~.caching.CachingAllocator`: c10's ``alloc_found_block``, ``free``,
``free_block`` and ``try_merge_blocks``.  These run on every tensor creation and destruction,
so the stat updates are written out inline (Note [Stat layout]) and the sorted free lists
are updated in place where the order allows (Note [Free-set layout]).
"""

from __future__ import annotations

from bisect import bisect_left

from .blocks import K_SMALL_SIZE, KEY_SHIFT, Block, BlockPool, FreeList
from .history import ALLOC, FREE_COMPLETED, FREE_REQUESTED
from .stats import (
    ALLOCATED_BYTES,
    INACTIVE_SPLIT,
    INACTIVE_SPLIT_BYTES,
    OVERSIZE_ALLOCATIONS,
    REQUESTED_BYTES,
)

__all__ = ["SplitMergeMixin"]


class SplitMergeMixin:
    """The split/allocate and free/merge paths of the allocator."""

    def _alloc_found_block(
        self,
        block: Block,
        pool: BlockPool,
        rsize: int,
        orig: int,
        stream: int,
        ctx: object,
        fl: FreeList | None,
        i: int,
    ) -> Block:
        """Split if worthwhile, mark allocated, count (c10 ``alloc_found_block``).

        With ``fl`` given, ``block`` still sits at index ``i`` of that free list: a split then
        rewrites the slot's key in place for the remainder (the same object), the cheapest
        update of the sorted list (Note [Free-set layout]).
        """
        t = pool.stat_type
        cur = self._cur
        peak = self._peak
        rest = block.size - rsize
        already_split = block.prev is not None or block.next is not None
        if pool.is_small or self._expandable_on:
            split = rest >= 512
        else:
            split = rsize < self._max_split and rest > K_SMALL_SIZE
        if split:
            remaining = block
            block = Block(remaining.ptr, rsize, stream, pool, self)
            block.segment = seg = remaining.segment
            prev = remaining.prev
            block.prev = prev
            if prev is not None:
                prev.next = block
            block.next = remaining
            remaining.prev = block
            remaining.ptr += rsize
            remaining.size = rest
            if fl is None:
                pool.insert(remaining)
            else:
                # the remainder's key is smaller than the found block's: if it still sorts after
                # the left neighbour it takes the same slot (Note [Free-set layout])
                remaining.gc_count_base = pool.get_free_blocks_call_count
                key = rest << KEY_SHIFT | remaining.ptr
                keys = fl.keys
                if i == 0 or keys[i - 1] < key:
                    keys[i] = key
                else:
                    fl.replace_at(i, remaining)
            if seg is None:
                if already_split:  # Note [Stat layout]: all's freed is derived
                    cur[INACTIVE_SPLIT_BYTES] -= rsize
                    j = INACTIVE_SPLIT_BYTES + t
                    cur[j] -= rsize
                    self._fre[j] += rsize
                else:
                    j = INACTIVE_SPLIT
                    v = cur[j] + 1
                    cur[j] = v
                    if v > peak[j]:
                        peak[j] = v
                    j += t
                    v = cur[j] + 1
                    cur[j] = v
                    if v > peak[j]:
                        peak[j] = v
                    j = INACTIVE_SPLIT_BYTES
                    v = cur[j] + rest
                    cur[j] = v
                    if v > peak[j]:
                        peak[j] = v
                    j += t
                    v = cur[j] + rest
                    cur[j] = v
                    if v > peak[j]:
                        peak[j] = v
        else:
            if fl is not None:
                fl.pop_at(i)
            if already_split and block.segment is None:
                self.stats.decrease2(INACTIVE_SPLIT_BYTES, t, block.size)
                self.stats.decrease2(INACTIVE_SPLIT, t, 1)
            if block.handed_out:
                block = self._fresh_copy(block)
        block.handed_out = True
        block.allocated = True
        block.requested_size = orig
        block.context = ctx
        ptr = block.ptr
        size = block.size
        if self._recording:
            self._record(ALLOC, ptr, orig, stream, ctx)
        self._active[ptr] = block
        # Note [Stat layout]: allocation, allocated_bytes and requested_bytes, for all + type t
        v = cur[0] + 1
        cur[0] = v
        if v > peak[0]:
            peak[0] = v
        v = cur[t] + 1
        cur[t] = v
        if v > peak[t]:
            peak[t] = v
        j = ALLOCATED_BYTES
        v = cur[j] + size
        cur[j] = v
        if v > peak[j]:
            peak[j] = v
        j += t
        v = cur[j] + size
        cur[j] = v
        if v > peak[j]:
            peak[j] = v
        j = REQUESTED_BYTES
        v = cur[j] + orig
        cur[j] = v
        if v > peak[j]:
            peak[j] = v
        j += t
        v = cur[j] + orig
        cur[j] = v
        if v > peak[j]:
            peak[j] = v
        if self.stats.pend[0]:
            self.stats.note_active_peak(t)
        if size >= self._max_split:
            self.stats.increase(OVERSIZE_ALLOCATIONS, 1)
        return block

    def _fresh_copy(self, old: Block) -> Block:
        """Put a new Block object in ``old``'s place in its segment.

        Note [Never hand out a Block twice]: a caller that frees a Block it already freed must get
        an error, not free whoever holds that memory now.  So a Block object handed out once is
        never handed out again: reusing a cached block without a split swaps in a new object.
        """
        new = Block(old.ptr, old.size, old.stream, old.pool, self)
        new.segment = old.segment
        new.segment_context = old.segment_context
        new.gc_count_base = old.gc_count_base
        prev = new.prev = old.prev
        nxt = new.next = old.next
        if prev is not None:
            prev.next = new
        if nxt is not None:
            nxt.prev = new
        old.prev = old.next = None
        old.owner = None
        if self._eager_unmap:
            self._recycle_merge(new, old)
        return new

    # -- free ------------------------------------------------------------------------------
    def free(self, block: Block | None) -> None:
        """Return ``block`` to the cache (c10 ``free``).  ``None`` is ignored.

        Raises
        ------
        ValueError
            If ``block`` was already freed or belongs to another allocator.
        """
        if block is None:
            return
        ctx = self._gather(4) if self._context_level >= 4 else None
        lock = self._lock
        lock.acquire()  # Note [Lock calls]
        try:
            if block.__class__ is not Block or not block.allocated or block.owner is not self:
                self._bad_free(block)
            block.allocated = False
            t = block.pool.stat_type
            size = block.size
            cur = self._cur
            fre = self._fre
            cur[0] -= 1  # Note [Stat layout]: all's freed is derived
            cur[t] -= 1
            fre[t] += 1
            cur[ALLOCATED_BYTES] -= size
            j = ALLOCATED_BYTES + t
            cur[j] -= size
            fre[j] += size
            if self._recording:
                self._record(
                    FREE_REQUESTED, block.ptr, block.requested_size, block.stream, ctx or block.context
                )
            if size >= self._max_split:
                self.stats.decrease(OVERSIZE_ALLOCATIONS, 1)
            if block.stream_uses:
                self.stats.add_pending(t, size, 1)
                if self._captures:
                    self._deferred.append(block)
                else:
                    self._insert_events(block)
            else:
                self._free_block(block, ctx)
        finally:
            lock.release()

    # Note [Finalizer frees]
    # A CUDA storage's memory comes back through its owner's ``__del__``. Python runs finalizers
    # whenever the cyclic garbage collector runs, and that happens when an allocation crosses the
    # collector's threshold: possibly inside a malloc or free of this allocator, on this thread,
    # between two steps of a split or a merge (the RLock lets the nested call in). A free there
    # would edit the free lists under the outer call. So a finalizer that finds this thread inside
    # the allocator queues its block; the next malloc (or empty_cache) frees it.
    def free_from_finalizer(self, block: Block) -> None:
        """:meth:`free` for an owner's ``__del__`` (Note [Finalizer frees])."""
        if self._lock._is_owned():
            self._late.append(block)
        else:
            self.free(block)

    def _free_late(self) -> None:
        """Free the blocks queued by :meth:`free_from_finalizer`."""
        late = self._late
        while late:
            self.free(late.pop())

    def _bad_free(self, block: object) -> None:
        if not isinstance(block, Block):
            raise TypeError(f"free: expected a Block, got {type(block).__name__}")
        if block.owner is not self and block.owner is not None:
            raise ValueError(f"free: {block!r} belongs to another allocator (device {block.owner.device})")
        raise ValueError(f"free: {block!r} was already freed (double free)")

    def _free_block(self, block: Block, ctx: object) -> None:
        """Put a freed block back into its pool, merging free neighbours (c10 ``free_block``)."""
        if self._recording:
            self._record(FREE_COMPLETED, block.ptr, block.requested_size, block.stream, ctx or block.context)
        block.context = None
        req = block.requested_size
        pool = block.pool
        del self._active[block.ptr]
        fl = pool.free.get(block.stream)
        slot = -1  # index in fl of a merged neighbour whose slot the merged block can take
        merged = 0
        merged_bytes = 0
        src = block.prev
        if (
            src is not None
            and not src.allocated
            and not src.event_count
            and src.stream_uses is None
            and src.mapped
        ):
            slot = bisect_left(fl.keys, src.size << KEY_SHIFT | src.ptr)
            block.ptr = src.ptr
            prev = block.prev = src.prev
            if prev is not None:
                prev.next = block
            block.segment_context = src.segment_context
            block.size += src.size
            merged -= 1
            merged_bytes -= src.size
            src.owner = None
        src = block.next
        if (
            src is not None
            and not src.allocated
            and not src.event_count
            and src.stream_uses is None
            and src.mapped
        ):
            q = bisect_left(fl.keys, src.size << KEY_SHIFT | src.ptr)
            if slot < 0:
                slot = q
            else:
                fl.pop_at(q)
                if q < slot:
                    slot -= 1
            nxt = block.next = src.next
            if nxt is not None:
                nxt.prev = block
            block.size += src.size
            merged -= 1
            merged_bytes -= src.size
            src.owner = None
        block.gc_count_base = pool.get_free_blocks_call_count
        if slot >= 0:
            # the merged key is larger than the absorbed neighbour's: same slot if it still sorts
            # before the right neighbour
            keys = fl.keys
            key = block.size << KEY_SHIFT | block.ptr
            if slot + 1 == len(keys) or key < keys[slot + 1]:
                keys[slot] = key
                fl.blocks[slot] = block
            else:
                fl.replace_at(slot, block)
        else:
            pool.insert(block)
        t = pool.stat_type
        cur = self._cur
        fre = self._fre
        if block.segment is None:
            if block.prev is not None or block.next is not None:
                merged += 1
                merged_bytes += block.size
            if merged == -1 and merged_bytes < 0:  # the common case: one split piece absorbed
                n = -merged_bytes
                cur[INACTIVE_SPLIT] -= 1
                j = INACTIVE_SPLIT + t
                cur[j] -= 1
                fre[j] += 1
                cur[INACTIVE_SPLIT_BYTES] -= n
                j = INACTIVE_SPLIT_BYTES + t
                cur[j] -= n
                fre[j] += n
            elif merged == 0 and merged_bytes > 0:  # joined one free split neighbour: only bytes grow
                peak = self._peak
                j = INACTIVE_SPLIT_BYTES
                v = cur[j] + merged_bytes
                cur[j] = v
                if v > peak[j]:
                    peak[j] = v
                j += t
                v = cur[j] + merged_bytes
                cur[j] = v
                if v > peak[j]:
                    peak[j] = v
            else:  # inactive_split counts change by merged / merged_bytes (an allocated neighbour stays)
                peak = self._peak
                for j, n in ((INACTIVE_SPLIT, merged), (INACTIVE_SPLIT_BYTES, merged_bytes)):
                    if n > 0:
                        v = cur[j] + n
                        cur[j] = v
                        if v > peak[j]:
                            peak[j] = v
                        j += t
                        v = cur[j] + n
                        cur[j] = v
                        if v > peak[j]:
                            peak[j] = v
                    elif n < 0:
                        cur[j] += n
                        j += t
                        cur[j] += n
                        fre[j] -= n
        elif self._eager_unmap:
            self._recycle_candidate(block)
        cur[REQUESTED_BYTES] -= req
        j = REQUESTED_BYTES + t
        cur[j] -= req
        fre[j] += req

    def _try_merge(self, dst: Block, src: Block | None, pool: BlockPool) -> int:
        """Merge free neighbour ``src`` into ``dst`` (c10 ``try_merge_blocks``); bytes merged."""
        if (
            src is None
            or src.allocated
            or src.event_count
            or src.stream_uses is not None
            or dst.mapped != src.mapped
        ):
            return 0
        if src.mapped:
            pool.remove(src)
        else:
            pool.remove_unmapped(src)
        if dst.prev is src:
            dst.ptr = src.ptr
            prev = dst.prev = src.prev
            if prev is not None:
                prev.next = dst
            dst.segment_context = src.segment_context
        else:
            nxt = dst.next = src.next
            if nxt is not None:
                nxt.prev = dst
        dst.size += src.size
        src.owner = None
        if self._eager_unmap:
            self._recycle_merge(dst, src)
        return src.size
