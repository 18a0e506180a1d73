"""Zero-copy interop: NumPy views of CPU tensors, DLPack export (``__dlpack__``) and ``from_dlpack``.

Export and import dispatch on the device type (``_EXPORTERS`` by ``device.type``, ``_IMPORTERS``
by DLPack device code), so the CUDA backend adds its stream-ordered versions with
``register_dlpack_exporter("cuda", fn)`` and ``register_dlpack_importer(2, fn)``.

Note [Pure-Python DLPack capsules]
A capsule is built with ctypes (python-cuda-stack.md §7, option C): a ``DLManagedTensorVersioned``
(or legacy ``DLManagedTensor``) struct whose shape/strides arrays and owning tensor are kept in
``_LIVE`` until the consumer calls our deleter. A capsule that is never consumed still has its
original name when it dies, so its destructor runs the deleter itself; a consumed one was renamed
``used_dltensor*`` and is the consumer's to release. Importing does the mirror image: read the
struct, rename the capsule ``used_*`` and call the producer's deleter when our storage dies.
"""

from __future__ import annotations

import ctypes

import numpy as np

from . import dtypes as dt
from .device import CPU
from .dispatch.state import grad_mode
from .storage import UntypedStorage, host_byte_view
from .tensor import Tensor, make_tensor

__all__ = ["tensor_to_numpy", "to_dlpack", "dlpack_device", "from_dlpack", "register_dlpack_exporter",
           "register_dlpack_importer", "register_cai_importer", "DLPACK_CPU", "DLPACK_CUDA",
           "DLPACK_CUDA_HOST"]

DLPACK_CPU, DLPACK_CUDA, DLPACK_CUDA_HOST = 1, 2, 3
_READ_ONLY = 1

# ---------------------------------------------------------------------- NumPy


class _StorageRef:
    """Exposes a storage's bytes through ``__array_interface__`` and keeps the storage alive."""

    __slots__ = ("storage", "__array_interface__")

    def __init__(self, storage: UntypedStorage):
        self.storage = storage
        self.__array_interface__ = {"data": (storage.data_ptr(), False), "shape": (storage.nbytes(),),
                                    "typestr": "|u1", "version": 3}


def _host_array(t: Tensor) -> np.ndarray:
    """A NumPy view of a host tensor whose base chain keeps the tensor's storage alive."""
    storage = t._storage
    npd = t.dtype.numpy_dtype
    if 0 in t._sizes or not t._sizes and storage.nbytes() == 0:
        return np.empty(t._sizes, dtype=npd)
    # A storage from the CPU allocator slices the owner array (the buffer keeps it alive); memory
    # wrapped from elsewhere (from_numpy, DLPack, pinned blocks) is reached through _StorageRef.
    buf = storage.buffer if storage.allocator == "cpu" else np.asarray(_StorageRef(storage))
    itemsize = t.dtype.itemsize
    return np.ndarray(t._sizes, dtype=npd, buffer=buf, offset=t._offset * itemsize,
                      strides=tuple(s * itemsize for s in t._strides))


def tensor_to_numpy(t: Tensor, force: bool = False) -> np.ndarray:
    """``Tensor.numpy()``: a NumPy array sharing memory with a CPU tensor.

    ``force=True`` detaches, and copies tensors from other devices to the host (torch's rule);
    without it, non-CPU tensors raise torch's errors, and so do tensors that require grad while grad mode is
    on (under ``no_grad`` -- or in a custom op's kernel, which runs with it off -- torch lets them through).
    """
    if not force and t._requires_grad and grad_mode.enabled:
        raise RuntimeError(
            "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
        )
    kind = t.device.type
    if kind == "cpu":
        return _host_array(t)
    if force and kind != "meta":
        return _host_array(t.detach().to("cpu"))
    raise TypeError(
        f"can't convert {t.device} device type tensor to numpy. Use Tensor.cpu() to copy the tensor to "
        "host memory first."
    )


# ---------------------------------------------------------------------- DLPack structs
_c_i64p = ctypes.POINTER(ctypes.c_int64)


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", _c_i64p), ("strides", _c_i64p),
                ("byte_offset", ctypes.c_uint64)]


_Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
# Foreign deleters may touch Python objects (NumPy's decrefs its array): call them holding the GIL.
_ForeignDeleter = ctypes.PYFUNCTYPE(None, ctypes.c_void_p)


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter)]


_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
# The destructor receives a borrowed PyObject*: these take it as a raw pointer (no refcounting).
_IsValidRaw = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(("PyCapsule_IsValid", _api))
_GetPointerRaw = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api))

_VERSIONED, _LEGACY = b"dltensor_versioned", b"dltensor"
_LIVE: dict = {}  # struct address -> (struct, shape array, strides array, owner tensor)


@_Deleter
def _deleter(addr):
    _LIVE.pop(addr, None)


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _capsule_destructor(capsule):
    for name in (_VERSIONED, _LEGACY):
        if _IsValidRaw(capsule, name):  # never consumed: the deleter is still ours to run
            _LIVE.pop(_GetPointerRaw(capsule, name), None)
            return


def _capsule_destructors() -> dict:
    """Capsule destructors by capsule name (Note [Borrowed capsule destructor]).

    Note [Borrowed capsule destructor]
    A capsule may die while an exception is pending (a consumer that rejects it, e.g. NumPy
    refusing bfloat16, raises and then drops it). A ctypes destructor can't even read the capsule
    then: every ctypes call sees the pending error and fails, so the struct would leak. NumPy's
    capsule destructors are C code doing exactly what the DLPack spec mandates (if the capsule
    still has its unconsumed name, call the struct's deleter), so we reuse them, read off capsules
    NumPy makes; our deleter then runs and frees the entry. What pure Python can't do is keep the
    consumer's pending exception: ctypes reports it as "Exception ignored" and the consumer raises
    SystemError instead (python-cuda-stack.md §7, "Known failure"). Our own ctypes destructor is
    the fallback when NumPy can't provide one.
    """
    get = _api.PyCapsule_GetDestructor
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object]
    ours = ctypes.cast(_capsule_destructor, ctypes.c_void_p).value
    found = {_VERSIONED: ours, _LEGACY: ours}
    for name, kwargs in ((_VERSIONED, {"max_version": (1, 0)}), (_LEGACY, {})):
        try:
            capsule = np.empty(0, dtype=np.uint8).__dlpack__(**kwargs)
        except (TypeError, BufferError):
            continue
        if _api.PyCapsule_IsValid(capsule, name):
            found[name] = get(capsule) or ours
    return found


_DESTRUCTORS = _capsule_destructors()


# ---------------------------------------------------------------------- export
def dlpack_device(t: Tensor) -> tuple:
    """``__dlpack_device__``: (1, 0) for CPU tensors, (3, 0) pinned, (2, index) for CUDA tensors."""
    kind = t.device.type
    if kind == "cpu":  # pinned memory reports kDLCUDAHost, as torch does (its capsules say kDLCPU)
        return (DLPACK_CUDA_HOST, 0) if t._storage.allocator == "pinned" else (DLPACK_CPU, 0)
    if kind == "cuda":
        return (DLPACK_CUDA, t.device.index or 0)
    raise ValueError(f"Unknown device type {kind} for Dlpack")


def _make_capsule(owner: Tensor, device: tuple, versioned: bool, read_only: bool = False):
    ndim = len(owner._sizes)
    shape = (ctypes.c_int64 * max(ndim, 1))(*owner._sizes)
    strides = (ctypes.c_int64 * max(ndim, 1))(*owner._strides)
    d = owner.dtype
    tensor = DLTensor(owner.data_ptr() or None, DLDevice(*device), ndim,
                      DLDataType(d.dlpack_code, 8 * d.itemsize, 1), ctypes.cast(shape, _c_i64p),
                      ctypes.cast(strides, _c_i64p), 0)
    if versioned:
        flags = _READ_ONLY if read_only else 0
        managed = DLManagedTensorVersioned(DLPackVersion(1, 0), None, _deleter, flags, tensor)
    else:
        managed = DLManagedTensor(tensor, None, _deleter)
    addr = ctypes.addressof(managed)
    _LIVE[addr] = (managed, shape, strides, owner)
    name = _VERSIONED if versioned else _LEGACY
    return _api.PyCapsule_New(addr, name, _DESTRUCTORS[name])


def _export_cpu(t: Tensor, stream, versioned: bool, copy):
    # host memory needs no stream ordering: ``stream`` is ignored, as the DLPack spec allows
    return _make_capsule(t.clone() if copy else t, (DLPACK_CPU, 0), versioned)


def _export_meta(t: Tensor, stream, versioned: bool, copy):
    raise BufferError("Cannot pack tensors on meta")


_EXPORTERS = {"cpu": _export_cpu, "meta": _export_meta}


def register_dlpack_exporter(device_type: str, fn) -> None:
    """``fn(tensor, stream, versioned, copy) -> capsule`` exports tensors of ``device_type``."""
    _EXPORTERS[device_type] = fn


def to_dlpack(t: Tensor, *, stream=None, max_version=None, dl_device=None, copy=None):
    """``Tensor.__dlpack__``: a DLPack capsule aliasing ``t`` (a copy when ``copy=True``).

    ``max_version`` with major >= 1 gets a versioned capsule (DLPack 1.0); otherwise a legacy one.
    """
    if not isinstance(t, Tensor):
        from .dispatch.argument_checks import arg_tensor

        arg_tensor("to_dlpack", "tensor", 1, t)
    if t._requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    if dl_device is not None:
        want = tuple(dl_device)
        if want != dlpack_device(t) and not (want == (DLPACK_CPU, 0) and t.is_pinned()):
            raise BufferError(f"DLPack export to device {want} is not supported for a tensor on {t.device}")
    versioned = max_version is not None and max_version[0] >= 1
    exporter = _EXPORTERS.get(t.device.type)
    if exporter is None:
        _load_cuda()
        exporter = _EXPORTERS.get(t.device.type)
        if exporter is None:
            raise BufferError(f"DLPack export of {t.device.type} tensors is not supported")
    return exporter(t, stream, versioned, bool(copy))


# ---------------------------------------------------------------------- import
_DTYPES = {(d.dlpack_code, 8 * d.itemsize): d for d in dt.all_dtypes + dt.complex_dtypes}


class _ForeignOwner:
    """Owns an imported DLPack tensor: calls the producer's deleter when the storage dies."""

    __slots__ = ("addr", "deleter")

    def __init__(self, addr: int, deleter: int | None):
        self.addr = addr
        self.deleter = deleter

    def __del__(self, _deleter_type=_ForeignDeleter):  # bound early: module globals may be gone at exit
        if self.deleter:
            _deleter_type(self.deleter)(self.addr)
            self.deleter = None


def _read_capsule(capsule):
    """(DLTensor, owner) from a DLPack capsule; the capsule is marked consumed."""
    if _api.PyCapsule_IsValid(capsule, _VERSIONED):
        addr = _api.PyCapsule_GetPointer(capsule, _VERSIONED)
        managed = DLManagedTensorVersioned.from_address(addr)
        if managed.version.major > 1:
            raise BufferError(f"from_dlpack: unsupported DLPack version {managed.version.major}."
                              f"{managed.version.minor} (this library reads 1.x)")
        _api.PyCapsule_SetName(capsule, b"used_dltensor_versioned")
    elif _api.PyCapsule_IsValid(capsule, _LEGACY):
        addr = _api.PyCapsule_GetPointer(capsule, _LEGACY)
        managed = DLManagedTensor.from_address(addr)
        _api.PyCapsule_SetName(capsule, b"used_dltensor")
    else:
        raise BufferError("from_dlpack: expected a DLPack capsule named 'dltensor' or "
                          "'dltensor_versioned' that has not been consumed yet")
    deleter = ctypes.cast(managed.deleter, ctypes.c_void_p).value
    return managed.dl_tensor, _ForeignOwner(addr, deleter)


def _dl_layout(dl: DLTensor) -> tuple:
    """``(dtype, sizes, strides, data address, nbytes spanned)`` of a DLTensor (any device)."""
    code, bits, lanes = dl.dtype.code, dl.dtype.bits, dl.dtype.lanes
    d = _DTYPES.get((code, bits))
    if d is None or lanes != 1:
        raise BufferError(
            f"from_dlpack: unsupported DLPack dtype (code={code}, bits={bits}, lanes={lanes})"
        )
    ndim = dl.ndim
    sizes = tuple(dl.shape[i] for i in range(ndim))
    if dl.strides and ndim:
        strides = tuple(dl.strides[i] for i in range(ndim))
    else:
        from .tensor import contiguous_strides

        strides = contiguous_strides(sizes)
    if any(s < 0 for s in strides):
        raise BufferError(f"from_dlpack: negative strides {list(strides)} are not supported")
    ptr = (dl.data or 0) + dl.byte_offset
    nbytes = 0 if 0 in sizes else (1 + sum((n - 1) * s for n, s in zip(sizes, strides))) * d.itemsize
    return d, sizes, strides, ptr, nbytes


def _import_cpu(dl: DLTensor, owner: _ForeignOwner) -> Tensor:
    d, sizes, strides, ptr, nbytes = _dl_layout(dl)
    storage = UntypedStorage(nbytes, CPU, ptr, owner=owner, buffer=host_byte_view(owner, ptr, nbytes),
                             allocator="dlpack")
    return make_tensor(storage, 0, sizes, strides, d)


_IMPORTERS = {DLPACK_CPU: _import_cpu, DLPACK_CUDA_HOST: _import_cpu}
_CONSUMER_STREAMS: dict = {}  # DLPack device code -> fn(device_id) -> the ``stream`` to ask for
_CAI_IMPORTERS: list = []  # [fn(obj) -> Tensor] for objects with only __cuda_array_interface__


def register_cai_importer(fn) -> None:
    """``fn(obj) -> Tensor`` imports objects exposing only ``__cuda_array_interface__``."""
    _CAI_IMPORTERS[:] = [fn]


def _load_cuda() -> None:
    from .backends import cuda_loader

    cuda_loader._backend()  # registers the CUDA exporter and importers (or explains why it can't)


def register_dlpack_importer(device_code: int, fn, consumer_stream=None) -> None:
    """``fn(dl_tensor, owner) -> Tensor`` imports DLPack tensors of ``device_code`` (2 = CUDA).

    ``consumer_stream(device_id)`` gives the ``stream`` argument passed to the producer's
    ``__dlpack__`` (the stream the imported tensor will be used on).
    """
    _IMPORTERS[device_code] = fn
    if consumer_stream is not None:
        _CONSUMER_STREAMS[device_code] = consumer_stream


def from_dlpack(ext_tensor, *, device=None, copy: bool | None = None) -> Tensor:
    """A tensor sharing memory with ``ext_tensor`` (any ``__dlpack__`` producer, or a capsule).

    The producer stays alive until the returned tensor's storage dies. ``device`` places the result there and
    ``copy`` is the Array API's: True always copies, False never does (a ``BufferError`` when ``device`` would need
    a copy), None copies only to move. strided imports zero-copy and then moves or copies itself, so any producer
    serves every combination.
    """
    if device is None and copy is None:
        return _import_dlpack(ext_tensor)
    if copy is not None and not isinstance(copy, bool):
        raise TypeError(f"from_dlpack: copy must be a bool or None, got {type(copy).__name__}")
    if type(ext_tensor).__name__ == "PyCapsule":
        raise AssertionError("device and copy kwargs not supported when ext_tensor is already a DLPack capsule.")
    from .device import device as _device

    t = _import_dlpack(ext_tensor)
    if device is not None:
        target = _device(device)
        if target.type == "cuda" and target.index is None:
            target = _device("cuda", 0)
        if target != t.device:
            if copy is False:
                raise BufferError(f"from_dlpack: the tensor is on {t.device}; reaching {target} needs a copy, "
                                  "and copy=False")
            return t.to(target)
    return t.clone() if copy else t


def _import_dlpack(ext_tensor) -> Tensor:
    if isinstance(ext_tensor, Tensor):
        return ext_tensor.detach()
    if hasattr(ext_tensor, "__dlpack__"):
        device_type, device_id = ext_tensor.__dlpack_device__()
        if device_type not in _IMPORTERS and device_type == DLPACK_CUDA:
            _load_cuda()
        kwargs = {"max_version": (1, 0)}
        if device_type in _CONSUMER_STREAMS:
            kwargs["stream"] = _CONSUMER_STREAMS[device_type](device_id)
        try:
            capsule = ext_tensor.__dlpack__(**kwargs)
        except TypeError:  # a producer predating DLPack 1.0 keywords
            capsule = ext_tensor.__dlpack__()
    elif hasattr(ext_tensor, "__cuda_array_interface__"):
        if not _CAI_IMPORTERS:
            _load_cuda()
        return _CAI_IMPORTERS[0](ext_tensor)
    elif type(ext_tensor).__name__ == "PyCapsule":
        capsule = ext_tensor
    else:
        raise TypeError(f"from_dlpack: expected an object with __dlpack__, __cuda_array_interface__ or a "
                        f"DLPack capsule, got {type(ext_tensor).__name__}")
    dl, owner = _read_capsule(capsule)
    if dl.device.device_type == DLPACK_CUDA and DLPACK_CUDA not in _IMPORTERS:
        _load_cuda()
    importer = _IMPORTERS.get(dl.device.device_type)
    if importer is None:
        owner.__del__()
        raise BufferError(f"from_dlpack: unsupported DLPack device type {dl.device.device_type}")
    return importer(dl, owner)
