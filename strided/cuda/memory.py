"""``strided.cuda.memory``: torch.cuda's memory API over strided's caching allocators."""

from __future__ import annotations

import contextlib
import pickle
import threading
import warnings
from collections import OrderedDict

from ..backends.cuda import allocator as _alloc
from ..backends.cuda import capture as _capture
from ..backends.cuda import driver as _driver
from ..backends.cuda import host_allocator as _host
from ..backends.cuda.allocator import (
    CUDAPluggableAllocator,
    caching_allocator_enable,
    change_current_allocator,
    get_current_allocator,
)
from ..backends.cuda.device import _index, mem_get_info
from ..backends.cuda.nvml_queries import list_gpu_processes
from ..backends.cuda.streams import Stream, current_stream_handle

__all__ = [
    "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
    "reset_peak_memory_stats", "reset_accumulated_memory_stats", "memory_stats", "memory_summary",
    "memory_snapshot", "_record_memory_history", "_snapshot", "_dump_snapshot", "empty_cache",
    "mem_get_info", "set_per_process_memory_fraction", "get_per_process_memory_fraction",
    "caching_allocator_alloc", "caching_allocator_delete", "caching_allocator_enable", "caching_allocator_disabled",
    "list_gpu_processes",
    "MemPool", "use_mem_pool",
    "CUDAPluggableAllocator", "change_current_allocator", "get_current_allocator",
    "host_memory_stats", "empty_host_cache", "get_allocator_backend", "memory_stats_as_nested_dict",
    "host_memory_stats_as_nested_dict", "reset_peak_host_memory_stats", "reset_accumulated_host_memory_stats",
    "reset_max_memory_allocated", "reset_max_memory_cached", "memory_cached", "max_memory_cached",
]


@contextlib.contextmanager
def caching_allocator_disabled():
    """Inside the block each new CUDA storage is its own ``cuMemAlloc`` (:func:`caching_allocator_enable`
    ``(False)``); the previous setting comes back after it, as torch's."""
    prev = not _alloc.NO_CACHING
    caching_allocator_enable(False)
    try:
        yield
    finally:
        caching_allocator_enable(prev)


def _a(device=None):
    return _alloc.get_allocator(_index(device))


def _initialized(device=None):
    if not _driver.is_initialized() or not _driver.is_available():
        return None
    i = _index(device)
    return _alloc._allocators[i] if i < len(_alloc._allocators) else None


def memory_stats(device=None) -> OrderedDict:
    """Flattened allocator statistics (torch's keys); empty before the device is used."""
    a = _initialized(device)
    return OrderedDict() if a is None else a.memory_stats()


def _stat(device, key):
    return memory_stats(device).get(key, 0)


def memory_allocated(device=None) -> int:
    return _stat(device, "allocated_bytes.all.current")


def max_memory_allocated(device=None) -> int:
    return _stat(device, "allocated_bytes.all.peak")


def memory_reserved(device=None) -> int:
    return _stat(device, "reserved_bytes.all.current")


def max_memory_reserved(device=None) -> int:
    return _stat(device, "reserved_bytes.all.peak")


def reset_peak_memory_stats(device=None) -> None:
    a = _initialized(device)
    if a is not None:
        a.reset_peak_memory_stats()


def reset_accumulated_memory_stats(device=None) -> None:
    a = _initialized(device)
    if a is not None:
        a.reset_accumulated_memory_stats()


def memory_summary(device=None, abbreviated: bool = False) -> str:
    return _a(device).memory_summary(abbreviated)


def _snapshot(device=None) -> dict:
    return _a(device).snapshot()


def memory_snapshot(mempool_id=None, include_traces: bool = True) -> list:
    """The segments of every initialized device, or of the pool ``mempool_id`` names (torch.cuda.memory_snapshot).

    ``include_traces`` is torch's switch for collecting the trace entries; this function returns only the
    segments (as torch's does), so it changes nothing in the result.
    """
    if not isinstance(include_traces, bool):
        raise TypeError(f"memory_snapshot: include_traces must be a bool, got {type(include_traces).__name__}")
    pool = None
    if mempool_id is not None:
        if not (isinstance(mempool_id, (tuple, list)) and len(mempool_id) == 2
                and all(isinstance(v, int) and not isinstance(v, bool) for v in mempool_id)):
            raise TypeError(f"memory_snapshot: mempool_id must be a pair of ints (a MemPool's id), got {mempool_id!r}")
        pool = tuple(mempool_id)
    segs = []
    for a in _alloc.initialized_allocators():
        segs.extend(a.snapshot()["segments"])
    if pool is not None and pool != (0, 0):  # (0, 0): every segment, as c10's default id
        segs = [s for s in segs if tuple(s.get("segment_pool_id", ())) == pool]
    return segs


def _record_memory_history(enabled="all", context="all", stacks="python", max_entries=100_000,
                           device=None, clear_history=False) -> None:
    _a(device).record_history(enabled=enabled, context=context, stacks=stacks, max_entries=max_entries,
                              clear_history=clear_history)


def _dump_snapshot(filename="dump_snapshot.pickle", device=None) -> None:
    with open(filename, "wb") as f:
        pickle.dump(_snapshot(device), f)


def empty_cache() -> None:
    """Release every unused cached block of every initialized device to the driver."""
    for a in _alloc.initialized_allocators():
        a.empty_cache()


def set_per_process_memory_fraction(fraction: float, device=None) -> None:
    _a(device).set_memory_fraction(fraction)


def get_per_process_memory_fraction(device=None) -> float:
    return _a(device).get_memory_fraction()


def _stream_handle(stream, i):
    if stream is None:
        return current_stream_handle(i)
    if isinstance(stream, Stream):
        return stream.handle
    if isinstance(stream, int) and not isinstance(stream, bool):
        return stream
    raise TypeError("Expected a strided.cuda.Stream or an int stream handle")


def caching_allocator_alloc(size: int, device=None, stream=None) -> int:
    """Raw device memory from the caching allocator; free with :func:`caching_allocator_delete`."""
    i = _index(device)
    return _alloc.get_allocator(i).raw_alloc(size, _stream_handle(stream, i))


_raw_owner: dict[int, int] = {}


def caching_allocator_delete(mem_ptr: int) -> None:
    for a in _alloc.initialized_allocators():
        if a.try_raw_delete(mem_ptr):
            return
    raise ValueError(f"caching_allocator_delete: {mem_ptr:#x} was not allocated by caching_allocator_alloc")


class MemPool:
    """A private memory pool (torch.cuda.MemPool); allocate into it with :func:`use_mem_pool`.

    With ``allocator`` (a :class:`CUDAPluggableAllocator`) the pool's segments come from its
    ``alloc_fn`` and go back through its ``free_fn``; the caching allocator still splits and
    reuses blocks inside them, as torch does.
    """

    def __init__(self, allocator=None, use_on_oom: bool = False, no_split: bool = False, device=None):
        if allocator is not None and not isinstance(allocator, CUDAPluggableAllocator):
            raise TypeError("MemPool(allocator=...) expects a CUDAPluggableAllocator, got "
                            f"{type(allocator).__name__}")
        from ..memory.pools import new_pool_id

        self._device = _index(device)
        self._alloc = _alloc.get_allocator(self._device)
        segments = None if allocator is None else _alloc.PoolSegments(allocator, self._device)
        self.id = self._alloc.create_pool(new_pool_id(), segments)
        self.allocator = allocator

    def use_count(self) -> int:
        return self._alloc.pool_use_count(self.id)

    def snapshot(self) -> list:
        segments = self._alloc.snapshot()["segments"]
        return [s for s in segments if tuple(s.get("segment_pool_id", ())) == self.id]

    def __del__(self):
        try:  # Note [Finalizers during capture]: empty_cache's cuMemFree would invalidate a capture underway
            _capture.run_or_defer(self._release, self._alloc, self.id)
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    @staticmethod
    def _release(alloc, pool_id) -> None:
        alloc.release_pool(pool_id)
        alloc.empty_cache()


class use_mem_pool:  # noqa: N801 - torch's name
    """Route this thread's allocations on ``device`` to ``pool`` inside the ``with`` block."""

    def __init__(self, pool: MemPool, device=None):
        self.pool = pool
        self.alloc = _alloc.get_allocator(_index(device) if device is not None else pool._device)

    def __enter__(self):
        tid = threading.get_ident()
        self.alloc.begin_allocate_to_pool(self.pool.id, lambda stream: threading.get_ident() == tid)
        return self.pool

    def __exit__(self, *exc):
        self.alloc.end_allocate_to_pool(self.pool.id)
        self.alloc.release_pool(self.pool.id)
        return False


def host_memory_stats() -> dict:
    return _host.host_memory_stats()


def empty_host_cache() -> None:
    _host.empty_host_cache()


def get_allocator_backend() -> str:
    return "native"


def _nested(flat: dict) -> dict:
    """``{"a.b.c": v}`` as ``{"a": {"b": {"c": v}}}`` (the form torch's allocator reports before flattening)."""
    out: dict = {}
    for key, value in flat.items():
        *path, leaf = key.split(".")
        node = out
        for part in path:
            node = node.setdefault(part, {})
        node[leaf] = value
    return out


def memory_stats_as_nested_dict(device=None) -> dict:
    """:func:`memory_stats` as nested dicts (``stats["allocated_bytes"]["all"]["peak"]``)."""
    return _nested(memory_stats(device))


def host_memory_stats_as_nested_dict() -> dict:
    """:func:`host_memory_stats` as nested dicts."""
    return _nested(host_memory_stats())


def reset_peak_host_memory_stats() -> None:
    """Every pinned-memory peak becomes its current value."""
    _host.host_allocator.reset_peak()


def reset_accumulated_host_memory_stats() -> None:
    """The pinned allocator's allocated / freed totals and block counts go to zero."""
    _host.host_allocator.reset_accumulated()


def reset_max_memory_allocated(device=None) -> None:
    """Deprecated (as torch): resets every peak, as :func:`reset_peak_memory_stats`."""
    warnings.warn("torch.cuda.reset_max_memory_allocated now calls torch.cuda.reset_peak_memory_stats, which resets "
                  "/all/ peak memory stats.", FutureWarning, stacklevel=2)
    reset_peak_memory_stats(device)


def reset_max_memory_cached(device=None) -> None:
    """Deprecated (as torch): resets every peak, as :func:`reset_peak_memory_stats`."""
    warnings.warn("torch.cuda.reset_max_memory_cached now calls torch.cuda.reset_peak_memory_stats, which resets "
                  "/all/ peak memory stats.", FutureWarning, stacklevel=2)
    reset_peak_memory_stats(device)


def memory_cached(device=None) -> int:
    """Deprecated name of :func:`memory_reserved` (torch's warning)."""
    warnings.warn("`torch.cuda.memory_cached` has been renamed to `torch.cuda.memory_reserved`", FutureWarning,
                  stacklevel=2)
    return memory_reserved(device)


def max_memory_cached(device=None) -> int:
    """Deprecated name of :func:`max_memory_reserved` (torch's warning)."""
    warnings.warn("`torch.cuda.max_memory_cached` has been renamed to `torch.cuda.max_memory_reserved`",
                  FutureWarning, stacklevel=2)
    return max_memory_reserved(device)
