"""NumPy views of CPU tensors, and the compute-dtype rule for half types.

Note [CPU compute dtype]
As torch's CPU kernels do (``opmath_type``), float16 and bfloat16 are computed in float32 and
rounded once when stored; every other dtype computes in itself.
"""

from __future__ import annotations

import warnings

import numpy as np

from ... import dtypes as dt
from ...tensor import Tensor

__all__ = ["as_numpy", "compute_dtype", "store", "cast_into", "operand", "np_dtype", "discard_imag", "quiet",
           "quiet_kernel"]

try:  # NumPy 2: the error state is a context variable, and setting it is a fifth of np.errstate's cost
    from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj

    _IGNORE = _make_extobj(all="ignore")

    _error_state = _extobj_contextvar.get

    def quiet(fn, *args):
        """``fn(*args)`` with NumPy's floating-point warnings off (Note [Floating-point warnings])."""
        if _error_state() is _IGNORE:  # inside a CPU kernel already (Note [Backend kernel wrappers])
            return fn(*args)
        token = _extobj_contextvar.set(_IGNORE)
        try:
            return fn(*args)
        finally:
            _extobj_contextvar.reset(token)

    def _quietly(fn):
        set_state, reset_state = _extobj_contextvar.set, _extobj_contextvar.reset

        def kernel(*args, **kwargs):
            token = set_state(_IGNORE)
            try:
                return fn(*args, **kwargs)
            finally:
                reset_state(token)

        return kernel

except ImportError:  # NumPy 1.x

    def quiet(fn, *args):
        """``fn(*args)`` with NumPy's floating-point warnings off (Note [Floating-point warnings])."""
        with np.errstate(all="ignore"):
            return fn(*args)

    def _quietly(fn):
        def kernel(*args, **kwargs):
            with np.errstate(all="ignore"):
                return fn(*args, **kwargs)

        return kernel


def quiet_kernel(fn):
    """``fn`` (a CPU kernel of strided's own) run with NumPy's floating-point warnings off, as the dispatcher calls
    it (Note [Backend kernel wrappers]); a kernel from elsewhere (a ``Library`` override) is left as it is."""
    if not getattr(fn, "__module__", "").startswith("strided.backends.cpu"):
        return fn
    kernel = _quietly(fn)
    kernel.__name__ = kernel.__qualname__ = getattr(fn, "__name__", "kernel")
    kernel.__wrapped__ = fn
    return kernel


_OPMATH = {dt.float16: np.dtype(np.float32), dt.bfloat16: np.dtype(np.float32)}


# Note [Byte strides memo]
# ``as_numpy`` runs for every operand of every CPU kernel (hundreds of times per training step), and turning
# element strides into NumPy's byte strides was a third of its cost. A model uses few layouts, so the byte
# strides are kept per (itemsize, element strides); bounded like the other layout memos.
_BYTE_STRIDES: dict = {}

# Note [NumPy view memo]
# Building the view is still most of ``as_numpy``'s cost (0.7 us), and one tensor is viewed many times: an
# op's output again as the next op's input, a parameter at every step, ``self`` twice in an in-place kernel.
# So each tensor keeps its view in ``_np`` with the storage buffer it was made over. Everything the view
# depends on is fixed for a tensor's life except where strided changes it in place -- ``set_``, ``resize_``,
# the in-place views (``squeeze_``, ``as_strided_``...) and the ``.data`` setter, which reset ``_np`` -- and
# the storage's buffer, which ``resize_`` of another view and ``share_memory_`` replace: the memo is used only
# while its buffer is still the storage's. The shared view must not have its own metadata changed (shape,
# strides, flags): kernels only read and write elements, and ``Tensor.numpy()`` builds a fresh array.


def as_numpy(t: Tensor) -> np.ndarray:
    """A writable NumPy view of a CPU tensor's elements (shares memory; Note [NumPy view memo])."""
    memo = t._np
    buffer = t._storage.buffer
    if memo is not None and memo[0] is buffer:
        return memo[1]
    d = t.dtype
    itemsize = d.itemsize
    strides = t._strides
    by_itemsize = _BYTE_STRIDES.get(itemsize)
    if by_itemsize is None:
        by_itemsize = _BYTE_STRIDES[itemsize] = {}
    byte_strides = by_itemsize.get(strides)
    if byte_strides is None:
        if len(by_itemsize) > 4096:
            by_itemsize.clear()
        byte_strides = by_itemsize[strides] = tuple(s * itemsize for s in strides)
    sizes = t._sizes
    # a zero-size view may start past its storage's end (zeros(1, 2)[1:] has offset 2, as in torch)
    array = np.ndarray(sizes, dtype=d.numpy_dtype, buffer=buffer,
                       offset=0 if 0 in sizes else t._offset * itemsize, strides=byte_strides)
    t._np = (buffer, array)
    return array


def np_dtype(d: dt.dtype) -> np.dtype:
    return d.numpy_dtype


def compute_dtype(d: dt.dtype) -> np.dtype:
    """The NumPy dtype to compute in for results of dtype ``d`` (Note [CPU compute dtype])."""
    return _OPMATH.get(d, d.numpy_dtype)


def operand(x, d: dt.dtype):
    """An input as an array (or Python scalar) in the compute dtype of ``d``."""
    if isinstance(x, Tensor):
        a = as_numpy(x)
        cd = compute_dtype(d)
        return a if a.dtype == cd else a.astype(cd)
    if x is None:
        return None
    return np.asarray(x, dtype=compute_dtype(d))[()]


def store(out: Tensor, value) -> Tensor:
    """Write ``value`` (array or scalar, broadcastable) into ``out`` with torch's cast (:func:`cast_into`)."""
    dst = as_numpy(out)
    if dst.size:
        cast_into(dst, value)
    return out


# Note [Casts as torch rounds them]
# torch converts to float16 through float (c10::Half has only a float constructor), so a double rounds twice, to
# float32 and then to half; NumPy's float64 -> float16 cast rounds once, and the two differ in about 1 value of
# 20,000 (a double just past a half-way point of float16 that float32 rounds onto it). ml_dtypes' bfloat16 already
# converts through float, and an integer's conversion is exact wherever float16 is finite. torch's casts never
# warn, where NumPy's narrowing casts warn "overflow encountered in cast" (1e10 to float16) and "invalid value
# encountered in cast" (NaN to an integer). Every narrowing cast (``copy_``'s ``.to``, ``.long()``, ..., and a
# kernel's store: a float16 sum of 60000s is inf, silently) therefore runs with NumPy's floating-point errors
# ignored, through the error-state context variable (``quiet``: 0.35 µs, where ``np.errstate`` costs 1.4 µs). The
# plan per (source, destination, explicit) is kept: a cast pays one dict lookup for it.
_PLAIN, _QUIET, _THROUGH_FLOAT = 0, 1, 2
_CAST_PLANS: dict = {}
_F16 = np.dtype(np.float16)
_F32 = np.dtype(np.float32)


def _cast_plan(src: np.dtype, dst: np.dtype, explicit: bool) -> int:
    if dst == _F16 and src.kind == "f" and src.itemsize > 4:
        plan = _THROUGH_FLOAT
    elif np.can_cast(src, dst, "safe"):
        plan = _PLAIN
    else:
        plan = _QUIET
    _CAST_PLANS[(src, dst, explicit)] = plan
    return plan


def _copy_quietly(dst: np.ndarray, src, through_float: bool) -> None:
    if through_float:
        src = np.asarray(src).astype(_F32)
    np.copyto(dst, src, casting="unsafe")


def cast_into(dst: np.ndarray, src, explicit: bool = False) -> None:
    """``dst[...] = src`` (broadcast) with torch's conversion; ``explicit`` for a cast the user asked for
    (Note [Casts as torch rounds them])."""
    sd = getattr(src, "dtype", None)
    if sd is None:  # a Python scalar, which NumPy converts as a double
        if dst.dtype == _F16 and src.__class__ is float:
            src = np.float64(src)
            sd = src.dtype
        else:
            np.copyto(dst, src, casting="unsafe")
            return
    plan = _CAST_PLANS.get((sd, dst.dtype, explicit))
    if plan is None:
        plan = _cast_plan(sd, dst.dtype, explicit)
    if plan == _PLAIN:
        np.copyto(dst, src, casting="unsafe")
        return
    quiet(_copy_quietly, dst, src, plan == _THROUGH_FLOAT)


def scalar_as(value, d):
    """A Python scalar as ``d`` casts it in torch (bool: nonzero; a complex with no imaginary part: its real
    part; integers wrap, floats truncate), once the Meta function's check_scalar_fits has passed."""
    if d is dt.bool:
        return np.bool_(bool(value))
    if isinstance(value, complex) and not d.is_complex:
        value = value.real
    out = np.empty((), d.numpy_dtype)
    cast_into(out, np.asarray(value), explicit=True)
    return out[()]


def discard_imag(a: np.ndarray) -> np.ndarray:
    """The real part of a complex array cast to a real dtype, with torch's warning (NumPy's ComplexWarning
    would name another class)."""
    warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=4)
    return a.real
