"""Pinned (page-locked) host memory: PyTorch's CachingHostAllocator.

Requests are rounded up to a power of two and served from one free list per power.  A block is
never split.  When a freed block was used by asynchronous copies (``record_event``), one event
is recorded per stream that used it and the block goes back to its free list only after all of
them have completed (checked on every ``allocate``), so a host buffer is never overwritten while
a DMA still reads or writes it.
"""

from __future__ import annotations

import threading
from collections import deque

import numpy as np

from ...device import CPU
from ...storage import UntypedStorage, host_byte_view
from . import capture as _capture
from . import driver
from .driver import check, cu

__all__ = ["HostAllocator", "host_allocator", "allocate_pinned_storage", "record_event",
           "host_memory_stats", "empty_host_cache"]


class PinnedBlock:
    __slots__ = ("ptr", "size", "streams", "event_count", "allocated")

    def __init__(self, ptr: int, size: int):
        self.ptr = ptr
        self.size = size
        self.streams: set[tuple[int, int]] | None = None  # (device, stream handle)
        self.event_count = 0
        self.allocated = False


class _Owner:
    """A pinned storage's owner: frees the block (event-ordered) when the storage dies."""

    __slots__ = ("alloc", "block", "__weakref__")

    def __init__(self, alloc, block):
        self.alloc, self.block = alloc, block

    def __del__(self):
        b = self.block
        if b is not None:
            self.block = None
            try:
                self.alloc.free_from_finalizer(b)
            except Exception:  # noqa: BLE001 - interpreter shutdown
                pass


_STAT_KEYS = ("allocations", "allocated_bytes", "active_requests", "active_bytes")


class HostAllocator:
    """Caching allocator of pinned host memory (one per process)."""

    def __init__(self):
        self._lock = threading.RLock()  # re-entered only by finalizers, which queue (free_from_finalizer)
        self._late: list[PinnedBlock] = []
        self._free: list[list[PinnedBlock]] = [[] for _ in range(64)]
        self._blocks: dict[int, PinnedBlock] = {}
        self._events: deque = deque()  # (event, device, block), newest on the left
        self._event_pool: dict[int, list[int]] = {}
        self.stats = {k: [0, 0, 0, 0] for k in _STAT_KEYS}  # current, peak, allocated, freed
        self.num_host_alloc = 0
        self.num_host_free = 0

    @staticmethod
    def _inc(s, n):
        s[0] += n
        s[2] += n
        if s[0] > s[1]:
            s[1] = s[0]

    @staticmethod
    def _dec(s, n):
        s[0] -= n
        s[3] += n

    def allocate(self, nbytes: int) -> PinnedBlock | None:
        if nbytes == 0:
            return None
        size = 1 << (nbytes - 1).bit_length()
        k = size.bit_length() - 1
        with self._lock:
            if self._late:
                self._free_late()
            if self._events:
                self._process_events()
            fl = self._free[k]
            if fl:
                b = fl.pop()
            else:
                driver.ensure_context(_ctx_device())
                ptr = int(check(cu().cuMemHostAlloc(size, cu().CU_MEMHOSTALLOC_PORTABLE)))
                b = PinnedBlock(ptr, size)
                self._blocks[ptr] = b
                self.num_host_alloc += 1
                self._inc(self.stats["allocations"], 1)
                self._inc(self.stats["allocated_bytes"], size)
            b.allocated = True
            self._inc(self.stats["active_requests"], 1)
            self._inc(self.stats["active_bytes"], size)
            return b

    def record_event(self, block: PinnedBlock, device_index: int, stream: int) -> None:
        """Note that ``stream`` of ``device_index`` uses ``block`` (an async copy was queued)."""
        with self._lock:
            if block.streams is None:
                block.streams = set()
            block.streams.add((device_index, stream))

    def free_from_finalizer(self, block: PinnedBlock) -> None:
        """``free`` for ``_Owner.__del__``: a finalizer run by the garbage collector inside a call of
        this allocator on this thread queues the block for the next call (Note [Finalizer frees] in
        ``strided/memory/splitting.py``; with a plain lock it would deadlock); one run inside a CUDA graph
        capture waits until the capture ends (recording an event on the legacy stream would invalidate it)."""
        if self._lock._is_owned():
            self._late.append(block)
        else:  # Note [Finalizers during capture]: the events free records would touch the capturing process
            _capture.run_or_defer(self.free, block)

    def _free_late(self) -> None:
        while self._late:
            self.free(self._late.pop())

    def free(self, block: PinnedBlock) -> None:
        with self._lock:
            block.allocated = False
            self._dec(self.stats["active_requests"], 1)
            self._dec(self.stats["active_bytes"], block.size)
            streams = block.streams
            block.streams = None
            if not streams:
                self._free[block.size.bit_length() - 1].append(block)
                return
            d = cu()
            for dev, s in streams:
                driver.ensure_context(dev)
                pool = self._event_pool.setdefault(dev, [])
                ev = pool.pop() if pool else int(check(d.cuEventCreate(self._event_flags(d))))
                check(d.cuEventRecord(ev, s))
                block.event_count += 1
                self._events.appendleft((ev, dev, block))

    @staticmethod
    def _event_flags(d) -> int:
        return int(d.CUevent_flags.CU_EVENT_DISABLE_TIMING)

    def _process_events(self) -> None:
        d = cu()
        while self._events:
            ev, dev, block = self._events[-1]
            r = d.cuEventQuery(ev)[0]
            if r != 0:
                if int(r) == 600:
                    break
                check((r,))
            self._events.pop()
            self._event_pool.setdefault(dev, []).append(ev)
            block.event_count -= 1
            if block.event_count == 0:
                self._free[block.size.bit_length() - 1].append(block)

    def empty_cache(self) -> None:
        """Free every cached (unused, event-free) block with ``cuMemFreeHost``."""
        with self._lock:
            if self._late:
                self._free_late()
            if self._events:
                self._process_events()
            d = cu()
            for fl in self._free:
                for b in fl:
                    check(d.cuMemFreeHost(b.ptr))
                    del self._blocks[b.ptr]
                    self.num_host_free += 1
                    self._dec(self.stats["allocations"], 1)
                    self._dec(self.stats["allocated_bytes"], b.size)
                fl.clear()

    def cached_blocks(self) -> int:
        return sum(len(fl) for fl in self._free)

    def memory_stats(self) -> dict:
        out = {}
        for k, (cur, peak, a, f) in self.stats.items():
            out[f"{k}.current"], out[f"{k}.peak"], out[f"{k}.allocated"], out[f"{k}.freed"] = cur, peak, a, f
        out["num_host_alloc"] = self.num_host_alloc
        out["num_host_free"] = self.num_host_free
        return out

    def reset_peak(self) -> None:
        for s in self.stats.values():
            s[1] = s[0]

    def reset_accumulated(self) -> None:
        """The allocated / freed totals and the block counts start again from zero."""
        for s in self.stats.values():
            s[2] = s[3] = 0
        self.num_host_alloc = self.num_host_free = 0


def _ctx_device() -> int:
    from .device import current_device

    return current_device()


host_allocator = HostAllocator()


def allocate_pinned_storage(nbytes: int) -> UntypedStorage:
    """A CPU storage over pinned memory (``allocator="pinned"``)."""
    driver.require()
    block = host_allocator.allocate(nbytes)
    if block is None:
        return UntypedStorage(0, CPU, 0, owner=None, buffer=np.empty(0, np.uint8), allocator="pinned")
    owner = _Owner(host_allocator, block)
    # the bytes as an array that keeps the block's owner alive: a NumPy array made from a pinned tensor
    # (``numpy()``) cannot outlive the block into its reuse, and no ctypes array class is made per size
    buf = host_byte_view(owner, block.ptr, nbytes)
    return UntypedStorage(nbytes, CPU, block.ptr, owner=owner, buffer=buf, allocator="pinned")


def record_event(storage: UntypedStorage, device_index: int, stream: int) -> None:
    """Protect a pinned storage's block from reuse until ``stream``'s queued work completes."""
    owner = storage.owner
    if isinstance(owner, _Owner) and owner.block is not None:
        host_allocator.record_event(owner.block, device_index, stream)


def host_memory_stats() -> dict:
    return host_allocator.memory_stats()


def empty_host_cache() -> None:
    if driver.is_initialized():
        host_allocator.empty_cache()
