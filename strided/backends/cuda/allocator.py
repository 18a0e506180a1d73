"""Device memory: the caching allocator engine (``strided.memory``) over the CUDA driver.

:class:`CudaProvider` implements ``strided.memory.provider.Provider`` with driver calls;
one :class:`~strided.memory.caching.CachingAllocator` per device holds the cache.
:func:`allocate_storage` is what ``strided.empty(..., device="cuda")`` ends in.

Note [Block lifetime]
A CUDA storage's ``owner`` is a :class:`DeviceAllocation`; when the last view of the storage
dies its ``__del__`` returns the block to the allocator, which reuses it in stream order on the
stream it was allocated on.  Work queued on *other* streams is protected only by
``Tensor.record_stream`` (events recorded at free time), exactly as in PyTorch.

Note [No caching]
``STRIDED_NO_CUDA_MEMORY_CACHING=1`` (PyTorch: ``PYTORCH_NO_CUDA_MEMORY_CACHING``) sends every
allocation straight to ``cuMemAlloc`` and every free to ``cuCtxSynchronize`` + ``cuMemFree``,
so memory checkers see each buffer's true bounds.
"""

from __future__ import annotations

import os
import threading

from ...device import device as _device
from ...memory.caching import CachingAllocator
from ...memory.errors import OutOfMemoryError
from ...storage import UntypedStorage
from .. import register_allocator
from . import capture as _capture
from . import driver
from .driver import check, cu
from .streams import current_stream_handle

__all__ = ["CudaProvider", "get_allocator", "allocate_storage", "record_stream", "NO_CACHING",
           "CUDAPluggableAllocator", "change_current_allocator", "PoolSegments", "caching_allocator_enable"]

_ENV_NO_CACHING = os.environ.get("STRIDED_NO_CUDA_MEMORY_CACHING",
                                 os.environ.get("PYTORCH_NO_CUDA_MEMORY_CACHING", "0")) == "1"
NO_CACHING = _ENV_NO_CACHING  # or caching_allocator_enable(False)
_NOT_READY = 600
_OOM = 2


class CudaProvider:
    """The caching allocator's view of one CUDA device (see ``strided.memory.provider``)."""

    def __init__(self, index: int):
        self.device_index = index
        driver.ensure_context(index)
        d = cu()
        self._d = d
        self.total_memory = int(check(d.cuDeviceTotalMem(check(d.cuDeviceGet(index)))))
        try:
            self.supports_expandable = bool(driver.attribute("VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED", index))
        except driver.CudaError:
            self.supports_expandable = False
        self._events: list[int] = []
        self._handles: dict[int, tuple] = {}  # mapped va -> (CUmemGenericAllocationHandle, nbytes)
        self._mapped_bytes = 0
        self._event_flags = int(d.CUevent_flags.CU_EVENT_DISABLE_TIMING)
        self._prop = None
        self._access = None

    def _ctx(self):
        driver.ensure_context(self.device_index)
        return self._d

    # -- plain memory
    def malloc(self, nbytes: int) -> int | None:
        if _capture.captures_underway():
            with _capture.relaxed_capture_mode():  # Note [Graph capture and the allocator]
                err, ptr = self._ctx().cuMemAlloc(nbytes)
        else:
            err, ptr = self._ctx().cuMemAlloc(nbytes)
        if err != 0:
            if int(err) == _OOM:
                return None
            check((err,))
        return int(ptr)

    def free(self, ptr: int) -> None:
        d = self._ctx()
        check(d.cuCtxSynchronize())  # cudaFree semantics: queued work on ptr has finished
        check(d.cuMemFree(ptr))

    def mem_get_info(self) -> tuple[int, int]:
        free, total = check(self._ctx().cuMemGetInfo())
        return int(free), int(total)

    # -- events
    def record_event(self, stream: int) -> int:
        d = self._ctx()
        ev = self._events.pop() if self._events else int(check(d.cuEventCreate(self._event_flags)))
        check(d.cuEventRecord(ev, stream))
        return ev

    def query_event(self, event: int) -> bool:
        r = self._d.cuEventQuery(event)[0]
        if r == 0:
            return True
        if int(r) == _NOT_READY:
            return False
        check((r,))
        return False

    def synchronize_event(self, event: int) -> None:
        check(self._d.cuEventSynchronize(event))

    def release_event(self, event: int) -> None:
        self._events.append(event)

    def synchronize_stream(self, stream: int) -> None:
        check(self._ctx().cuStreamSynchronize(stream))

    # -- virtual memory (expandable segments)
    def reserve_address(self, nbytes: int) -> int:
        return int(check(self._ctx().cuMemAddressReserve(nbytes, 0, 0, 0)))

    def free_address(self, va: int, nbytes: int) -> None:
        check(self._ctx().cuMemAddressFree(va, nbytes))

    def _vmm(self):
        if self._prop is None:
            d = self._d
            prop = d.CUmemAllocationProp()
            prop.type = d.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
            prop.location.type = d.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
            prop.location.id = self.device_index
            acc = d.CUmemAccessDesc()
            acc.location.type = d.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
            acc.location.id = self.device_index
            acc.flags = d.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE
            self._prop, self._access = prop, acc
        return self._prop, self._access

    def map_page(self, va: int, nbytes: int) -> bool:
        with _capture.relaxed_capture_mode():  # Note [Graph capture and the allocator]
            return self._map_page(va, nbytes)

    def _map_page(self, va: int, nbytes: int) -> bool:
        d = self._ctx()
        prop, acc = self._vmm()
        err, h = d.cuMemCreate(nbytes, prop, 0)
        if err != 0:
            if int(err) == _OOM:
                return False
            check((err,))
        try:
            check(d.cuMemMap(va, nbytes, 0, h, 0))
        except driver.CudaError:
            d.cuMemRelease(h)
            raise
        check(d.cuMemSetAccess(va, nbytes, [acc], 1))
        self._handles[va] = (h, nbytes)
        self._mapped_bytes += nbytes
        return True

    def unmap_page(self, va: int, nbytes: int) -> None:
        d = self._ctx()
        check(d.cuMemUnmap(va, nbytes))
        h, n = self._handles.pop(va)
        check(d.cuMemRelease(h))
        self._mapped_bytes -= n

    def mapped_bytes(self) -> int:
        """Bytes of physical memory mapped into expandable segments now (tests check with it)."""
        return self._mapped_bytes


_allocators: list[CachingAllocator | None] = []
_lock = threading.Lock()


def get_allocator(index: int) -> CachingAllocator:
    """The caching allocator of device ``index`` (created on first use)."""
    try:
        a = _allocators[index]
        if a is not None:
            return a
    except IndexError:
        pass
    with _lock:
        driver.require()
        n = driver.device_count()
        if not 0 <= index < n:
            raise RuntimeError(f"CUDA error: invalid device ordinal {index}")
        while len(_allocators) < n:
            _allocators.append(None)
        if _allocators[index] is None:
            _allocators[index] = CachingAllocator(CudaProvider(index), device=index)
        return _allocators[index]


def initialized_allocators() -> list[CachingAllocator]:
    return [a for a in _allocators if a is not None]


class DeviceAllocation:
    """Owner of a CUDA storage's memory; returns the block when collected (Note [Block lifetime])."""

    __slots__ = ("alloc", "block", "__weakref__")

    def __init__(self, alloc, block):
        self.alloc = alloc
        self.block = block

    def record_stream(self, stream: int) -> None:
        if self.block is not None:
            self.alloc.record_stream(self.block, stream)

    def __del__(self):
        b = self.block
        if b is not None:
            self.block = None
            alloc = self.alloc
            try:  # CachingAllocator.free_from_finalizer, inlined: one call less per tensor
                if alloc._lock._is_owned():  # Note [Finalizer frees]
                    alloc._late.append(b)
                else:
                    alloc.free(b)
            except Exception:  # noqa: BLE001 - interpreter shutdown
                pass


class _RawAllocation:
    """Owner for memory from cuMemAlloc directly or from a pluggable allocator."""

    __slots__ = ("ptr", "nbytes", "index", "stream", "free_fn", "__weakref__")

    def __init__(self, ptr, nbytes, index, stream, free_fn):
        self.ptr, self.nbytes, self.index, self.stream, self.free_fn = ptr, nbytes, index, stream, free_fn

    def record_stream(self, stream: int) -> None:
        """Raw memory is freed after a device synchronization, so every stream is covered."""

    def __del__(self):
        if self.ptr:
            try:  # Note [Finalizers during capture]: cuMemFree would invalidate a capture underway
                _capture.run_or_defer(self.free_fn, self.ptr, self.nbytes, self.index, self.stream)
            except Exception:  # noqa: BLE001
                pass
            self.ptr = 0


def _raw_free(ptr, nbytes, index, stream):
    driver.ensure_context(index)
    check(cu().cuCtxSynchronize())
    check(cu().cuMemFree(ptr))


class CUDAPluggableAllocator:
    """An allocator made of Python callables (torch's ``CUDAPluggableAllocator``).

    ``alloc_fn(size, device, stream) -> int`` returns a device address; ``free_fn(ptr, size,
    device, stream)`` releases it.  Install with :func:`change_current_allocator`.
    """

    def __init__(self, alloc_fn, free_fn):
        if not callable(alloc_fn) or not callable(free_fn):
            raise TypeError("CUDAPluggableAllocator expects callables alloc_fn(size, device, stream) and "
                            "free_fn(ptr, size, device, stream)")
        self.alloc_fn = alloc_fn
        self.free_fn = free_fn


class PoolSegments:
    """A pluggable allocator as the segment source of one ``MemPool`` (Note [Pool allocators]).

    The caching allocator still splits and caches blocks inside the segments; only whole
    segments go to ``alloc_fn`` / ``free_fn``.  The device is synchronized before ``free_fn``
    runs, as ``cudaFree`` would, so no queued kernel still uses a returned segment.
    """

    __slots__ = ("pluggable", "device_index")

    def __init__(self, pluggable: CUDAPluggableAllocator, index: int):
        self.pluggable = pluggable
        self.device_index = index

    def malloc(self, nbytes: int, stream: int) -> int | None:
        driver.ensure_context(self.device_index)
        ptr = self.pluggable.alloc_fn(nbytes, self.device_index, stream)
        return int(ptr) if ptr else None

    def free(self, ptr: int, nbytes: int, stream: int) -> None:
        driver.ensure_context(self.device_index)
        check(cu().cuCtxSynchronize())
        self.pluggable.free_fn(ptr, nbytes, self.device_index, stream)


_pluggable: CUDAPluggableAllocator | None = None


def change_current_allocator(allocator: CUDAPluggableAllocator) -> None:
    """Route all CUDA storage allocations to ``allocator`` (before the caching allocator is used)."""
    global _pluggable
    if not isinstance(allocator, CUDAPluggableAllocator):
        raise TypeError("change_current_allocator expects a CUDAPluggableAllocator")
    if any(a is not None and a.memory_allocated() for a in _allocators):
        raise RuntimeError("Can't swap an already initialized allocator")
    _pluggable = allocator


def caching_allocator_enable(value: bool = True) -> None:
    """Turn the caching allocator on or off for later allocations (torch's ``caching_allocator_enable``).

    Off, each new CUDA storage is its own ``cuMemAlloc`` and its free a synchronize + ``cuMemFree``
    (Note [No caching]); storages allocated before keep their blocks and return them to the cache.
    The environment variable keeps caching off whatever ``value`` says, as in torch.
    """
    global NO_CACHING
    if not isinstance(value, bool):
        raise TypeError(f"caching_allocator_enable(): argument 'value' must be bool, not {type(value).__name__}")
    NO_CACHING = _ENV_NO_CACHING or not value


def get_current_allocator():
    return _pluggable


def allocate_storage(nbytes: int, device) -> UntypedStorage:
    """A fresh CUDA storage of ``nbytes`` on ``device`` for the current stream."""
    i = device.index
    if i is None:
        from .device import current_device

        i = current_device()
        device = _device("cuda", i)
    stream = current_stream_handle(i)
    if _pluggable is not None or NO_CACHING:
        if nbytes == 0:
            return UntypedStorage(0, device, 0, owner=None, allocator="cuda")
        driver.ensure_context(i)
        if _pluggable is not None:
            ptr = int(_pluggable.alloc_fn(nbytes, i, stream) or 0)
            if not ptr:
                raise OutOfMemoryError(f"CUDA out of memory. The pluggable allocator returned no memory for "
                                       f"{nbytes} bytes on device {i}.", requested=nbytes, device=i)
            owner = _RawAllocation(ptr, nbytes, i, stream, _pluggable.free_fn)
        else:
            ptr = int(check(cu().cuMemAlloc(nbytes)))
            owner = _RawAllocation(ptr, nbytes, i, stream, _raw_free)
        return UntypedStorage(nbytes, device, ptr, owner=owner, allocator="cuda")
    try:
        alloc = _allocators[i]
    except IndexError:
        alloc = None
    if alloc is None:
        alloc = get_allocator(i)
    block = alloc.malloc(nbytes, stream)
    if block is None:
        return UntypedStorage(0, device, 0, owner=None, allocator="cuda")
    return UntypedStorage(nbytes, device, block.ptr, owner=DeviceAllocation(alloc, block), allocator="cuda")


def _allocate_registered(nbytes: int, device, pin_memory: bool = False) -> UntypedStorage:
    """``strided.backends.allocate`` for "cuda" once this module is loaded (no loader indirection).

    The common case — caching on, the device's allocator already made — is inlined; everything
    else goes through :func:`allocate_storage`.
    """
    i = device.index
    if i is not None and not (_pluggable is not None or NO_CACHING) and i < len(_allocators):
        alloc = _allocators[i]
        if alloc is not None:
            block = alloc.malloc(nbytes, current_stream_handle(i))
            if block is not None:
                return UntypedStorage(nbytes, device, block.ptr, DeviceAllocation(alloc, block), None, "cuda")
    return allocate_storage(nbytes, device)


register_allocator("cuda", _allocate_registered)


def record_stream(storage: UntypedStorage, stream) -> None:
    """``Tensor.record_stream``: the storage's memory is not reused until ``stream``'s work so far is done."""
    owner = storage.owner
    if owner is None:
        return
    handle = stream.handle if hasattr(stream, "handle") else int(stream)
    owner.record_stream(handle)
