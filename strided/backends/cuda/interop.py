"""Zero-copy interop for CUDA tensors: stream-ordered DLPack and ``__cuda_array_interface__``.

Importing this module registers the CUDA exporter and importer with ``strided.interop``, which
owns the (single, ctypes-built) capsule implementation; only the stream ordering, the device
and the storage owner are CUDA-specific.

Note [DLPack stream ordering]
``__dlpack__(stream=s)`` names the *consumer's* stream: None means the legacy default stream,
1 the legacy default stream, 2 the per-thread default stream, -1 "do not synchronize", any
other int a ``CUstream`` address (0 is ambiguous and refused, as the DLPack spec says).  The
producer records an event on the tensor's current stream and makes ``s`` wait on it, so work
queued so far (the kernel that wrote the data) is finished before the consumer's next kernel
reads it, with no host synchronization.  Import is the mirror image: ``strided.from_dlpack``
passes our current stream (0 spelled as 1, the legacy default) and the producer does the wait.
``__cuda_array_interface__`` works the other way round: its ``stream`` is the *producer's*
stream and the consumer waits on it (as :func:`from_cuda_array_interface` does).  Events are
pooled per device: ``cuStreamWaitEvent`` captures the event's state when it is called, so an
event can be re-recorded right after.

Note [Imported CUDA memory]
An imported tensor's storage is owned by :class:`ImportedMemory`, which holds the DLPack
deleter (or the ``__cuda_array_interface__`` producer) until the last view dies.  The memory
is not the caching allocator's, so ``record_stream`` on it is a no-op, as in torch.
"""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ... import interop as _interop
from ...device import device as _device
from ...storage import UntypedStorage
from ...tensor import Tensor, contiguous_strides, make_tensor
from . import driver
from .device import current_device
from .driver import check, cu
from .streams import current_stream_handle

__all__ = ["export_dlpack", "import_dlpack", "consumer_stream", "cuda_array_interface",
           "from_cuda_array_interface", "ImportedMemory", "CU_STREAM_LEGACY", "CU_STREAM_PER_THREAD"]

CU_STREAM_LEGACY, CU_STREAM_PER_THREAD = 1, 2
_TYPESTR = {d: np.dtype(d.numpy_dtype).str for d in dt.all_dtypes + dt.complex_dtypes if d is not dt.bfloat16}
_FROM_TYPESTR = {s: d for d, s in _TYPESTR.items()}
_events: dict[int, list[int]] = {}  # device index -> idle events (Note [DLPack stream ordering])


class ImportedMemory:
    """Owner of a storage over another library's CUDA memory (Note [Imported CUDA memory])."""

    __slots__ = ("keep", "__weakref__")

    def __init__(self, keep):
        self.keep = keep

    def record_stream(self, stream: int) -> None:
        """Foreign memory is freed by its producer: there is no block to protect."""


def _legacy(handle: int) -> int:
    """Our raw handle 0 (the NULL stream) as the protocols spell it: 1, the legacy default."""
    return CU_STREAM_LEGACY if handle == 0 else handle


def wait_stream(index: int, producer: int, consumer: int) -> None:
    """Make stream ``consumer`` wait for the work queued on ``producer`` so far (raw handles)."""
    producer, consumer = _legacy(producer), _legacy(consumer)
    if producer == consumer:
        return
    driver.ensure_context(index)
    d = cu()
    pool = _events.setdefault(index, [])
    ev = pool.pop() if pool else int(check(d.cuEventCreate(int(d.CUevent_flags.CU_EVENT_DISABLE_TIMING))))
    try:
        check(d.cuEventRecord(ev, producer))
        check(d.cuStreamWaitEvent(consumer, ev, 0))
    finally:
        pool.append(ev)


def _consumer(stream) -> int | None:
    """The consumer stream named by ``__dlpack__``'s ``stream`` argument; None: no sync."""
    if stream is None:
        return CU_STREAM_LEGACY
    if type(stream) is not int:
        raise TypeError("stream must be ``int`` or ``none``")
    if stream == -1:
        return None
    if stream == 0:
        raise BufferError("stream 0 is ambiguous for CUDA DLPack export: pass 1 for the legacy default "
                          "stream, 2 for the per-thread default stream or -1 for no synchronization")
    if stream < -1:
        raise BufferError(f"invalid CUDA stream {stream} for DLPack export")
    return stream


def export_dlpack(t: Tensor, stream, versioned: bool, copy: bool):
    """``Tensor.__dlpack__`` for CUDA tensors (Note [DLPack stream ordering])."""
    i = t.device.index
    consumer = _consumer(stream)
    if copy:
        t = t.clone()  # queued on the current stream, so the wait below covers it
    if consumer is not None:
        wait_stream(i, current_stream_handle(i), consumer)
    return _interop._make_capsule(t, (_interop.DLPACK_CUDA, i), versioned)


def consumer_stream(device_id: int) -> int:
    """The ``stream`` strided asks a producer to order its export on: our current stream."""
    return _legacy(current_stream_handle(device_id))


def import_dlpack(dl, owner) -> Tensor:
    """A CUDA tensor over a consumed DLPack tensor (``dl``); ``owner`` runs its deleter."""
    d, sizes, strides, ptr, nbytes = _interop._dl_layout(dl)
    dev = _device("cuda", int(dl.device.device_id))
    storage = UntypedStorage(nbytes, dev, ptr, owner=ImportedMemory(owner), allocator="dlpack")
    return make_tensor(storage, 0, sizes, strides, d)


# ---------------------------------------------------------------------- __cuda_array_interface__
def cuda_array_interface(t: Tensor) -> dict:
    """``Tensor.__cuda_array_interface__`` (v3): byte strides (None when contiguous), producer stream."""
    if t._requires_grad:
        raise RuntimeError(
            "Can't get __cuda_array_interface__ on Variable that requires grad. If gradients aren't "
            "required, use var.detach() to get Variable that doesn't require grad."
        )
    typestr = _TYPESTR.get(t.dtype)
    if typestr is None:
        raise TypeError(f"dtype {t.dtype.name} is not supported by __cuda_array_interface__ (use DLPack)")
    itemsize = t.dtype.itemsize
    strides = None if t.is_contiguous() else tuple(s * itemsize for s in t._strides)
    ptr = t.data_ptr() if t.numel() else 0
    stream = _legacy(current_stream_handle(t.device.index))
    return {"shape": t._sizes, "typestr": typestr, "data": (ptr, False), "version": 3,
            "strides": strides, "stream": stream}


def _device_of(ptr: int) -> int:
    i = current_device()
    if not ptr:
        return i
    driver.ensure_context(i)
    d = cu()
    err, ordinal = d.cuPointerGetAttribute(d.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr)
    if err != 0:
        raise BufferError(f"__cuda_array_interface__: {ptr:#x} is not CUDA device memory "
                          f"({driver._describe(err)})")
    return int(ordinal)


def from_cuda_array_interface(obj) -> Tensor:
    """A CUDA tensor sharing memory with ``obj.__cuda_array_interface__`` (``obj`` kept alive).

    When the interface names a ``stream``, our current stream waits on it (no host sync).
    """
    cai = obj.__cuda_array_interface__
    if cai.get("mask") is not None:
        raise BufferError("__cuda_array_interface__: masked arrays are not supported")
    typestr = cai["typestr"]
    try:
        d = _FROM_TYPESTR.get(np.dtype(typestr).str)
    except TypeError:
        d = None
    if d is None:
        raise BufferError(f"__cuda_array_interface__: unsupported typestr {typestr!r}")
    sizes = tuple(int(n) for n in cai["shape"])
    ptr = int(cai["data"][0] or 0)
    itemsize = d.itemsize
    bstrides = cai.get("strides")
    if bstrides is None:
        strides = contiguous_strides(sizes)
    else:
        if any(s % itemsize for s in bstrides):
            raise BufferError(f"__cuda_array_interface__: byte strides {tuple(bstrides)} are not multiples "
                              f"of the item size {itemsize}")
        strides = tuple(int(s) // itemsize for s in bstrides)
    if any(s < 0 for s in strides):
        raise BufferError(f"__cuda_array_interface__: negative strides {list(strides)} are not supported")
    nbytes = 0 if 0 in sizes else (1 + sum((n - 1) * s for n, s in zip(sizes, strides))) * itemsize
    i = _device_of(ptr if nbytes else 0)
    stream = cai.get("stream") if cai.get("version", 0) >= 3 else None
    if stream is not None:
        if type(stream) is not int or stream == 0:
            raise BufferError(f"__cuda_array_interface__: invalid stream {stream!r} (0 is disallowed)")
        wait_stream(i, stream, current_stream_handle(i))
    storage = UntypedStorage(nbytes, _device("cuda", i), ptr, owner=ImportedMemory(obj), allocator="cai")
    return make_tensor(storage, 0, sizes, strides, d)


_interop.register_dlpack_exporter("cuda", export_dlpack)
_interop.register_dlpack_importer(_interop.DLPACK_CUDA, import_dlpack, consumer_stream)
_interop.register_cai_importer(from_cuda_array_interface)
