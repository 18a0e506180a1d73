"""A simulated device: the :class:`~.provider.Provider` used by tests and trace replay.

It has an address space, a capacity (so the out-of-memory paths run), events that complete
only when told (or at once, with ``auto_complete``), and VMM pages for expandable segments.
With ``recorded`` segment addresses it hands out, in order, the addresses a recorded run got
from ``cudaMalloc``; as PyTorch breaks best-fit ties by address, that makes a faithful replay
land every allocation at its recorded address.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterable

__all__ = ["SimulatedDevice", "SimEvent"]

GIB = 1 << 30
GRANULARITY = 2 << 20  # VMM granularity and cudaMalloc alignment used here
_MALLOC_BASE = 0x1000_0000_0000
_VA_BASE = 0x2000_0000_0000


class SimEvent:
    """An event handle of the simulated device."""

    __slots__ = ("stream", "seq", "done")

    def __init__(self, stream: int, seq: int, done: bool) -> None:
        self.stream = stream
        self.seq = seq
        self.done = done

    def __repr__(self) -> str:
        return f"SimEvent(stream={self.stream}, seq={self.seq}, done={self.done})"


class _Space:
    """First-fit address allocator over ``[base, inf)`` with merging of freed ranges."""

    __slots__ = ("top", "holes")

    def __init__(self, base: int) -> None:
        self.top = base
        self.holes: list[tuple[int, int]] = []  # sorted (start, size)

    def take(self, size: int) -> int:
        for k, (start, hsize) in enumerate(self.holes):
            if hsize >= size:
                if hsize == size:
                    del self.holes[k]
                else:
                    self.holes[k] = (start + size, hsize - size)
                return start
        ptr = self.top
        self.top += size
        return ptr

    def give(self, start: int, size: int) -> None:
        insort(self.holes, (start, size))
        merged: list[tuple[int, int]] = []
        for s, n in self.holes:
            if merged and merged[-1][0] + merged[-1][1] == s:
                merged[-1] = (merged[-1][0], merged[-1][1] + n)
            else:
                merged.append((s, n))
        if merged and merged[-1][0] + merged[-1][1] == self.top:
            self.top = merged.pop()[0]
        self.holes = merged


class SimulatedDevice:
    """An in-memory device implementing the allocator's provider protocol.

    Parameters
    ----------
    capacity : int
        Bytes of device memory; allocations beyond it fail (return None / False).
    device_index : int
        Reported device index.
    supports_expandable : bool
        Whether the VMM methods may be used.
    auto_complete : bool
        Events complete as soon as they are recorded (no other work in flight), except on
        streams passed to :meth:`hold_stream`.
    recorded : iterable of (addr, size), optional
        Segment addresses to hand out, in order, from :meth:`malloc` while sizes match.
    """

    def __init__(
        self,
        capacity: int = 80 * GIB,
        device_index: int = 0,
        supports_expandable: bool = True,
        auto_complete: bool = False,
        recorded: Iterable[tuple[int, int]] | None = None,
    ) -> None:
        if capacity <= 0:
            raise ValueError(f"SimulatedDevice: capacity must be positive, got {capacity}")
        self.total_memory = capacity
        self.device_index = device_index
        self.supports_expandable = supports_expandable
        self.auto_complete = auto_complete
        self.used = 0
        self.peak_used = 0
        self.allocations: dict[int, int] = {}  # malloc'd ptr -> size
        self.reservations: dict[int, int] = {}  # reserved va -> size
        self.pages: dict[int, int] = {}  # mapped page va -> size
        self._space = _Space(_MALLOC_BASE)
        self._va = _Space(_VA_BASE)
        self._recorded = list(recorded or ())
        self._recorded_next = 0
        self.recorded_ok = bool(self._recorded)
        self._event_seq = 0
        self.pending_events: list[SimEvent] = []
        self.held_streams: set[int] = set()
        self.num_malloc = self.num_free = self.num_map = self.num_unmap = 0
        self.num_stream_syncs = 0

    # -- memory ------------------------------------------------------------------------------
    def _charge(self, nbytes: int) -> bool:
        if self.used + nbytes > self.total_memory:
            return False
        self.used += nbytes
        if self.used > self.peak_used:
            self.peak_used = self.used
        return True

    def malloc(self, nbytes: int) -> int | None:
        if nbytes <= 0:
            raise ValueError(f"SimulatedDevice.malloc: nbytes must be positive, got {nbytes}")
        if not self._charge(nbytes):
            return None
        self.num_malloc += 1
        ptr = self._recorded_ptr(nbytes)
        if ptr is None:
            ptr = self._space.take(-(-nbytes // GRANULARITY) * GRANULARITY)
        self.allocations[ptr] = nbytes
        return ptr

    def _recorded_ptr(self, nbytes: int) -> int | None:
        if not self.recorded_ok:
            return None
        if self._recorded_next < len(self._recorded):
            addr, size = self._recorded[self._recorded_next]
            if size == nbytes and addr not in self.allocations:
                self._recorded_next += 1
                return addr
        self.recorded_ok = False  # diverged from the recording: plain addresses from now on
        return None

    def free(self, ptr: int) -> None:
        size = self.allocations.pop(ptr, None)
        if size is None:
            raise ValueError(f"SimulatedDevice.free: {ptr:#x} was not allocated")
        self.used -= size
        self.num_free += 1
        if ptr >= _MALLOC_BASE and ptr < _VA_BASE:
            self._space.give(ptr, -(-size // GRANULARITY) * GRANULARITY)

    def mem_get_info(self) -> tuple[int, int]:
        return self.total_memory - self.used, self.total_memory

    # -- events ------------------------------------------------------------------------------
    def record_event(self, stream: int) -> SimEvent:
        self._event_seq += 1
        event = SimEvent(stream, self._event_seq, self.auto_complete and stream not in self.held_streams)
        if not event.done:
            self.pending_events.append(event)
        return event

    def query_event(self, event: SimEvent) -> bool:
        return event.done

    def synchronize_event(self, event: SimEvent) -> None:
        self._complete(lambda e: e is event)

    def release_event(self, event: SimEvent) -> None:
        if not event.done:
            raise ValueError(f"SimulatedDevice.release_event: {event!r} is still pending")

    def synchronize_stream(self, stream: int) -> None:
        self.num_stream_syncs += 1
        self.complete_stream(stream)

    def hold_stream(self, stream: int) -> None:
        """Keep events on ``stream`` pending (work in flight) until :meth:`complete_stream`."""
        self.held_streams.add(stream)

    def complete_stream(self, stream: int) -> None:
        """Finish all work queued on ``stream`` (its events complete, the hold ends)."""
        self.held_streams.discard(stream)
        self._complete(lambda e: e.stream == stream)

    def complete_all(self) -> None:
        """Finish all queued work."""
        self._complete(lambda e: True)

    def _complete(self, pred) -> None:
        keep = []
        for e in self.pending_events:
            if pred(e):
                e.done = True
            else:
                keep.append(e)
        self.pending_events = keep

    # -- virtual memory ----------------------------------------------------------------------
    def reserve_address(self, nbytes: int) -> int:
        if nbytes <= 0 or nbytes % GRANULARITY:
            raise ValueError(f"reserve_address: size must be a positive multiple of 2 MiB, got {nbytes}")
        va = self._va.take(nbytes)
        self.reservations[va] = nbytes
        return va

    def free_address(self, va: int, nbytes: int) -> None:
        if self.reservations.get(va) != nbytes:
            raise ValueError(f"free_address: no reservation of {nbytes} bytes at {va:#x}")
        if any(va <= p < va + nbytes for p in self.pages):
            raise ValueError(f"free_address: range at {va:#x} still has mapped pages")
        del self.reservations[va]
        self._va.give(va, nbytes)

    def _check_range(self, va: int, nbytes: int) -> None:
        if nbytes <= 0 or nbytes % GRANULARITY or va % GRANULARITY:
            raise ValueError(f"page {va:#x}+{nbytes} is not 2 MiB aligned")
        starts = sorted(self.reservations)
        k = bisect_left(starts, va + 1) - 1
        if k < 0 or va + nbytes > starts[k] + self.reservations[starts[k]]:
            raise ValueError(f"page {va:#x}+{nbytes} is outside every reserved range")

    def map_page(self, va: int, nbytes: int) -> bool:
        self._check_range(va, nbytes)
        if va in self.pages:
            raise ValueError(f"map_page: {va:#x} is already mapped")
        if not self._charge(nbytes):
            return False
        self.pages[va] = nbytes
        self.num_map += 1
        return True

    def unmap_page(self, va: int, nbytes: int) -> None:
        if self.pages.get(va) != nbytes:
            raise ValueError(f"unmap_page: no {nbytes}-byte page mapped at {va:#x}")
        del self.pages[va]
        self.used -= nbytes
        self.num_unmap += 1
