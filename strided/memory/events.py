"""Cross-stream lifetimes: ``record_stream`` and the events that hold freed blocks.

Mixin of :class:`~.caching.CachingAllocator`.  A block used on streams other than its
allocation stream is not reusable when freed: one event is recorded per such stream (c10
``insert_events``) and the block goes back to its pool when they have all completed, checked
at the start of each malloc (``process_events``) or waited for by ``empty_cache`` and the OOM
retry (``synchronize_and_free_events``).  During a private-pool capture, events cannot be
queried, so such frees are deferred until no capture is underway.
"""

from __future__ import annotations

from collections import deque

from .blocks import Block

__all__ = ["EventsMixin"]


class EventsMixin:
    """record_stream / insert_events / process_events of the allocator."""

    def record_stream(self, block: Block, stream: int) -> None:
        """Mark ``block`` as used on ``stream`` (``Tensor.record_stream``).

        When the block is freed, an event is recorded on each such stream and the memory is
        reused only after they complete.  Uses on the allocation stream are ignored.
        """
        with self._lock:
            if not block.allocated or block.owner is not self:
                raise ValueError(f"record_stream: {block!r} is not allocated by this allocator")
            if stream == block.stream:
                return
            if block.stream_uses is None:
                block.stream_uses = {stream}
            else:
                block.stream_uses.add(stream)
            if self._captures:
                self._capture_stream_uses.setdefault(block, set()).add(stream)

    def _insert_events(self, block: Block) -> None:
        streams = block.stream_uses
        block.stream_uses = None
        for s in sorted(streams):
            event = self.provider.record_event(s)
            block.event_count += 1
            q = self._events.get(s)
            if q is None:
                q = self._events[s] = deque()
            q.append((event, block))

    def _insert_deferred(self, ctx: object) -> None:
        if not self._deferred:
            return
        for block in self._deferred:
            uses = self._capture_stream_uses.pop(block, None)
            if uses and block.stream_uses:
                block.stream_uses -= uses
                if not block.stream_uses:
                    block.stream_uses = None
            if block.stream_uses:
                self._insert_events(block)
            else:
                block.stream_uses = None
            if block.event_count == 0:
                self.stats.add_pending(block.pool.stat_type, block.size, -1)
                self._free_block(block, ctx)
        self._deferred.clear()

    def _process_events(self, ctx: object) -> None:
        """Return blocks whose cross-stream events completed (c10 ``process_events``)."""
        self._insert_deferred(ctx)
        provider = self.provider
        for s in list(self._events):
            q = self._events[s]
            while q:
                event, block = q[0]
                if not provider.query_event(event):
                    break
                q.popleft()
                provider.release_event(event)
                block.event_count -= 1
                if block.event_count == 0:
                    self.stats.add_pending(block.pool.stat_type, block.size, -1)
                    self._free_block(block, ctx)
            if not q:
                del self._events[s]
        if self._recycle:
            self._process_recycle(ctx)

    def _synchronize_and_free_events(self, ctx: object) -> None:
        """Wait for every outstanding event, then free their blocks (c10 name)."""
        self.stats.num_sync_all_streams += 1
        self._insert_deferred(ctx)
        provider = self.provider
        for q in self._events.values():
            for event, block in q:
                provider.synchronize_event(event)
                provider.release_event(event)
                block.event_count -= 1
                if block.event_count == 0:
                    self.stats.add_pending(block.pool.stat_type, block.size, -1)
                    self._free_block(block, ctx)
        self._events.clear()
