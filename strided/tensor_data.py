"""Tensors from Python data and NumPy arrays: ``tensor`` (a copy, with torch's dtype inference), ``as_tensor``,
``from_numpy`` and ``wrap_array`` (zero-copy views of an array's memory)."""

from __future__ import annotations

import numpy as np

from . import dtypes as dt
from .device import CPU, get_default_device
from .device import device as _device
from .ops import bound as ops
from .storage import UntypedStorage, wrap_host_memory
from .tensor import Tensor, make_tensor
from .warn_once import warn_once

__all__ = ["tensor", "as_tensor", "from_numpy", "wrap_array", "finish_new_tensor"]


def finish_new_tensor(t: Tensor, requires_grad: bool) -> Tensor:
    """A factory's result as torch hands it out: version 0, and ``requires_grad`` set (floating and complex only)."""
    # a fresh tensor starts at version 0, as torch's: its factories fill below autograd, where no in-place
    # update is counted (strided's ones / zeros / full / rand... fill through the dispatcher, which counts)
    t._storage._version = 0
    if requires_grad:
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t.requires_grad = True
    return t


def _ragged(data) -> str | None:
    """torch's words for a ragged nested sequence: the first length that differs from the first one seen at its
    depth (``expected sequence of length 2 at dim 1 (got 3)``)."""
    lengths: list[int] = []

    def walk(seq, depth):
        if not isinstance(seq, (list, tuple)):
            return None
        if depth == len(lengths):
            lengths.append(len(seq))
        elif lengths[depth] != len(seq):
            return f"expected sequence of length {lengths[depth]} at dim {depth} (got {len(seq)})"
        for item in seq:
            found = walk(item, depth + 1)
            if found:
                return found
        return None

    return walk(data, 0)


def _infer_array(data, dtype):
    """A host NumPy array for ``data`` with torch's dtype inference."""
    if isinstance(data, Tensor):
        return np.ascontiguousarray(data.numpy(force=True)), data.dtype
    if isinstance(data, np.ndarray):
        d = dt.to_dtype(dtype) if dtype is not None else dt.from_numpy_dtype(data.dtype)
        return data, d
    try:
        arr = np.array(data)
    except ValueError as e:
        message = _ragged(data) or f"tensor(): expected a rectangular (non-ragged) nested sequence: {e}"
        raise ValueError(message) from None
    if arr.dtype == object:
        if all(type(v) is int for v in arr.reshape(-1)):  # Python ints beyond 64 bits
            raise ValueError("Overflow when unpacking long long")
        raise TypeError(f"tensor(): could not infer dtype of {type(data).__name__} with elements of "
                        f"mixed or unsupported types")
    if dtype is not None:
        d = dt.to_dtype(dtype)
        if arr.dtype.kind in "fc" and (d is dt.bool or d.category == dt.INTEGRAL):
            _check_numpy_scalars_fit(data)
        if arr.size:
            _check_fits(arr, d)
        return arr, d
    if arr.dtype.kind in "biufc":  # Note [NumPy scalars in tensor()]
        types = {type(data)} if isinstance(data, np.generic) else (
            _leaf_types(data) if isinstance(data, (list, tuple)) else ())
        d = _scalar_types_dtype(types)
        if d is not None:
            return arr, d
    if arr.dtype.kind == "b":
        return arr, dt.bool
    if arr.dtype.kind in "iu":
        if arr.dtype == np.uint64 and arr.size and arr.max() > np.iinfo(np.int64).max:
            raise ValueError("Overflow when unpacking long long")
        return arr, dt.int64
    if arr.dtype.kind == "f":
        return arr, dt.get_default_dtype()
    if arr.dtype.kind == "c":  # Python complex numbers: torch's default complex dtype
        return arr, dt.default_complex_dtype()
    if arr.dtype.kind in ("U", "S"):
        raise TypeError(f"new(): invalid data type '{arr.dtype.kind == 'U' and 'str' or 'bytes'}'")
    return arr, dt.from_numpy_dtype(arr.dtype)


def _check_numpy_scalars_fit(data) -> None:
    """torch reads each NumPy float or complex scalar (other than ``np.float64`` / ``np.complex128``, which are
    Python floats / complexes) into an integer or bool dtype as an index, and refuses it with Python's error."""
    types = {type(data)} if isinstance(data, np.generic) else (
        _leaf_types(data) if isinstance(data, (list, tuple)) else set())
    for t in types:
        if issubclass(t, (np.floating, np.complexfloating)) and not issubclass(t, (float, complex)):
            raise TypeError(f"'numpy.{t.__name__}' object cannot be interpreted as an integer")


def _check_fits(arr: np.ndarray, d: dt.dtype) -> None:
    """torch.tensor's conversion of Python numbers to an explicit ``dtype``: a complex number only into a complex
    or bool dtype; into an integer dtype, ints within c10's bounds (unsigned takes -max..max, wrapping) and
    finite floats that truncate into it; floats overflow to inf in a floating dtype, as torch's do."""
    if arr.dtype.kind == "c" and not d.is_complex and d is not dt.bool:
        raise TypeError("must be real number, not complex")
    if d.category != dt.INTEGRAL or arr.dtype.kind not in "iuf":
        return
    info = np.iinfo(d.numpy_dtype)
    if arr.dtype.kind == "f":  # Python floats: finite, and in [min, max + 1) (unsigned: from 0)
        with np.errstate(invalid="ignore"):
            bad = not np.isfinite(arr).all() or arr.min() < min(int(info.min), 0) or arr.max() >= int(info.max) + 1
    else:  # Python ints that do not fit: torch's error, not a wrap
        lo = info.min if info.min < 0 else -int(info.max)  # c10's overflows(): unsigned takes -max..max
        bad = arr.min() < lo or arr.max() > info.max
    if bad:
        raise RuntimeError(f"value cannot be converted to type {d.name} without overflow")


# Note [NumPy scalars in tensor()]
# torch infers each leaf's dtype (a Python bool, int or float: bool, int64, the default float; a NumPy
# scalar: its own dtype) and promotes them together: tensor(np.float64(1)) is float64 and
# tensor([np.int32(1), np.int32(2)]) int32, where NumPy's array would give the default float and
# int64. The leaves' types are collected with ``map(type, ...)`` level by level (C loops).
def _leaf_types(data) -> set:
    """The types of the non-sequence leaves of nested lists / tuples (``map(type, ...)`` runs in C)."""
    types, level = set(), [data]
    while level:
        nested = []
        for seq in level:
            ts = set(map(type, seq))
            if list in ts or tuple in ts:
                for x in seq:
                    (nested.append(x) if isinstance(x, (list, tuple)) else types.add(type(x)))
            else:
                types |= ts
        level = nested
    return types


def _scalar_types_dtype(types) -> dt.dtype | None:
    """The promoted dtype of leaf types holding a NumPy scalar type, else None."""
    if not any(issubclass(t, np.generic) for t in types):
        return None
    out = None
    for leaf_type in types:
        if issubclass(leaf_type, np.generic):
            d = dt.from_numpy_dtype(np.dtype(leaf_type))
        elif leaf_type is bool:
            d = dt.bool
        elif leaf_type is int:
            d = dt.int64
        elif leaf_type is complex:
            d = dt.default_complex_dtype()
        else:
            d = dt.get_default_dtype()
        out = d if out is None else dt.promote_types(out, d)
    return out


_PLAIN = frozenset((list, tuple, float, int, bool, complex))


def _foreign(data) -> bool:
    """Whether ``data`` is another library's tensor: a DLPack producer that is neither ours nor NumPy's."""
    cls = type(data)
    return (cls not in _PLAIN and hasattr(cls, "__dlpack__")
            and not issubclass(cls, (Tensor, np.ndarray, np.generic)))


# Note [Foreign tensors]
# torch.tensor reads another library's tensor through NumPy (__array__), which has no bfloat16 and cannot see CUDA
# memory. strided imports such a tensor by DLPack instead (zero-copy, its dtype and device as they are), then
# copies (tensor) or keeps it when dtype and device allow (as_tensor): tensor(torch_bf16) and
# as_tensor(cupy_array) work, as does module.load_state_dict(torch_module.state_dict()).
def import_foreign(data) -> Tensor:
    """A strided tensor sharing ``data``'s memory (Note [Foreign tensors])."""
    from .interop import from_dlpack

    return from_dlpack(data)


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested lists, scalars, arrays or tensors)."""
    if _foreign(data):  # Note [Foreign tensors]
        src = import_foreign(data)
        dev = _device(device) if device is not None else src.device
        out = ops._to_copy(src, dtype=dt.to_dtype(dtype) if dtype is not None else src.dtype, device=dev,
                           pin_memory=pin_memory)
        return finish_new_tensor(out, requires_grad)
    arr, d = _infer_array(data, dtype)
    with np.errstate(over="ignore"):  # floats past a floating dtype's range become inf, silently as torch's
        if d is dt.float16 and arr.dtype.kind == "f" and arr.dtype.itemsize > 4:
            arr = arr.astype(np.float32)  # a double reaches float16 through float (Note [Casts as torch rounds them])
        host = from_numpy(np.array(arr, dtype=d.numpy_dtype, copy=True, order="C"))  # always a copy
    dev = _device(device) if device is not None else get_default_device()  # Note [Default device]
    out = host if dev.type == "cpu" and not pin_memory else ops._to_copy(host, device=dev, pin_memory=pin_memory)
    return finish_new_tensor(out, requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like ``tensor`` but shares memory with a NumPy array or tensor when dtype and device allow."""
    if isinstance(data, Tensor):
        dev = _device(device) if device is not None else data.device
        if (dtype is None or dt.to_dtype(dtype) is data.dtype) and dev == data.device:
            return data
        return ops._to_copy(data, dtype=dtype, device=dev)
    if _foreign(data):  # Note [Foreign tensors]
        return as_tensor(import_foreign(data), dtype, device)
    # a NumPy array is shared when it stays on the CPU (the default device included: Note [Default device])
    if isinstance(data, np.ndarray) and (_device(device) if device is not None else get_default_device()).type == "cpu":
        t = from_numpy(data)
        return t if dtype is None or dt.to_dtype(dtype) is t.dtype else t.to(dtype)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array: np.ndarray) -> Tensor:
    """A CPU tensor sharing memory with ``array`` (zero-copy; writes show in both)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    d = dt.from_numpy_dtype(array.dtype)  # raises for a dtype strided lacks
    itemsize = array.itemsize
    for s in array.strides:
        if s < 0:
            raise ValueError(
                "At least one stride in the given numpy array is negative, and tensors with negative "
                "strides are not currently supported. (You can probably work around this by making a "
                "copy of your array  with array.copy().) "
            )
        if s % itemsize:
            raise ValueError(
                "given numpy array strides not a multiple of the element byte size. Copy the numpy "
                "array to reallocate the memory."
            )
    if not array.flags.writeable:
        _warn_not_writable("NumPy array", "array")
    return wrap_array(array, d)


def wrap_array(array: np.ndarray, d=None) -> Tensor:
    """``from_numpy`` without its checks: ``array`` has a strided dtype (``d``, or read from the array) and
    non-negative whole-element strides."""
    if d is None:
        d = dt.from_numpy_dtype(array.dtype)
    itemsize = array.itemsize
    strides = tuple(s // itemsize for s in array.strides)
    flags = array.flags
    if flags.c_contiguous and flags.writeable and array.size:  # the common case: a byte view, the address lazy
        storage = UntypedStorage(array.nbytes, CPU, None, owner=array, buffer=array.reshape(-1).view(np.uint8),
                                 allocator="numpy")  # Note [Lazy CPU address]
        return make_tensor(storage, 0, array.shape, strides, d)
    sizes = tuple(int(n) for n in array.shape)
    nbytes = 0 if 0 in sizes else (1 + sum((n - 1) * s for n, s in zip(sizes, strides))) * itemsize
    storage = wrap_host_memory(array, nbytes, array.ctypes.data)
    return make_tensor(storage, 0, sizes, strides, d)


def _warn_not_writable(what: str, noun: str) -> None:
    """torch's warning for memory it cannot write-protect (once per kind: Note [Warn once])."""
    warn_once(("not writable", what),
              f"The given {what} is not writable, and strided does not support non-writable tensors. This means "
              f"writing to this tensor will result in undefined behavior. You may want to copy the {noun} to protect "
              f"its data or make it writable before converting it to a tensor. This type of warning will be "
              f"suppressed for the rest of this program.", stacklevel=3)
