"""Shape, stride, dtype and device inference shared by every Meta function.

Meta functions compute an op's output metadata and allocate the output with ``new_output`` on the
*inputs'* device: under the Meta key that is a meta tensor (no memory); the CPU and CUDA kernels
call the same Meta function to allocate their outputs (DESIGN.md, "Meta first").
"""

from __future__ import annotations

import math
import numbers
from threading import get_ident

from ... import dtypes as dt
from ...device import CPU, device
from ...tensor import Tensor, contiguous_strides, make_tensor
from .. import allocate

__all__ = [
    "new_output", "new_output_like", "broadcast_shapes", "wrap_dim", "common_device", "check",
    "reduction_dims", "reduced_shape", "elementwise_strides", "result_dtype", "is_scalar",
    "normalize_size", "check_size_nonnegative", "exact_ints",
]


def check(cond: bool, message) -> None:
    """Raise RuntimeError(message()) when ``cond`` is false; the message is built only on failure."""
    if not cond:
        raise RuntimeError(message() if callable(message) else message)


def is_scalar(x) -> bool:
    return isinstance(x, numbers.Number) and not isinstance(x, Tensor)


# Note [Output metadata memo]
# Outputs are allocated on every op; their contiguous strides and element counts depend only on
# the shape, so they are computed once per shape (bounded memo, cleared past 4096 shapes).
_CONTIGUOUS: dict = {}


def _contiguous_meta(sizes: tuple) -> tuple:
    meta = _CONTIGUOUS.get(sizes)
    if meta is None:
        if len(_CONTIGUOUS) > 4096:
            _CONTIGUOUS.clear()
        meta = _CONTIGUOUS[sizes] = (contiguous_strides(sizes), math.prod(sizes))
    return meta


# Note [Output redirect]
# A direct in-place kernel (backends/cuda/kernels/inplace_ops.py, backends/cpu/inplace.py) runs an op's
# functional kernel through ``call_redirected``, with ``redirect`` set to (this thread, self). The first
# new_output on this thread then returns ``self`` itself when it has the requested sizes, dtype and device and is
# dense: no output is allocated only to be dropped. A non-dense ``self`` stays pending for the elementwise engine's
# ``run``, which writes it through its strides (Note [In-place redirect] in backends/cuda/elementwise.py); any
# other mismatch ends the redirect (the result does not fit ``self``; the autogen path then casts or refuses). The
# functional kernels that are redirected make their output with their first new_output
# (tests/backend/test_inplace_variants.py).
redirect = None


def _redirect_target(sizes: tuple, dtype, dev):
    """``self`` of the redirect pending on this thread when it can be this output (Note [Output redirect])."""
    global redirect
    ident, target = redirect
    if ident != get_ident():
        return None
    if target.dtype is dtype and target._sizes == sizes and target.device == dev:
        if target.is_contiguous() or target._is_non_overlapping_and_dense():
            redirect = None
            return target
        return None
    redirect = None
    return None


def call_redirected(self: Tensor, kernel, args: tuple, kwargs: dict):
    """``kernel(self, *args, **kwargs)`` with its output redirected to ``self`` (Note [Output redirect]): the
    result is ``self`` when it fit, else a new tensor ``self`` was not written by. The one place that sets and
    clears the redirect, for the CPU and CUDA direct in-place kernels."""
    global redirect
    redirect = (get_ident(), self)
    try:
        return kernel(self, *args, **kwargs)
    finally:
        redirect = None


def new_output(sizes, dtype, dev, strides=None) -> Tensor:
    """An uninitialized output tensor on ``dev`` (contiguous unless ``strides`` is given)."""
    if sizes.__class__ is not tuple:
        sizes = tuple(sizes)
    if redirect is not None:  # Note [Output redirect]
        target = _redirect_target(sizes, dtype, dev)
        if target is not None:
            return target
    contiguous, numel = _contiguous_meta(sizes)
    if strides is None or strides == contiguous:
        nbytes = numel * dtype.itemsize
        if nbytes > MAX_STORAGE_BYTES:
            storage_overflow(sizes)
        return make_tensor(allocate(nbytes, dev), 0, sizes, contiguous, dtype)
    nbytes = _storage_bytes(sizes, strides, dtype.itemsize)
    if nbytes > MAX_STORAGE_BYTES:
        storage_overflow(sizes)
    return make_tensor(allocate(nbytes, dev), 0, sizes, tuple(strides), dtype)


MAX_STORAGE_BYTES = (1 << 63) - 1  # c10's storage sizes are int64 byte counts


def storage_overflow(sizes) -> None:
    """torch's error for a tensor whose bytes do not fit an int64 (NumPy would say "Maximum allowed dimension")."""
    raise RuntimeError(f"Storage size calculation overflowed with sizes={list(sizes)}")


def new_output_like(t: Tensor, dtype=None, sizes=None) -> Tensor:
    """An output with ``t``'s sizes (or ``sizes``) on ``t``'s device, strides as TensorIterator."""
    sizes = t._sizes if sizes is None else tuple(sizes)
    strides = elementwise_strides(sizes, (t,))
    return new_output(sizes, dtype or t.dtype, t.device, strides)


def _storage_bytes(sizes, strides, itemsize) -> int:
    if any(s == 0 for s in sizes):
        return 0
    return (1 + sum((s - 1) * st for s, st in zip(sizes, strides))) * itemsize


def common_device(*tensors) -> device:
    """The device of the non-scalar tensors (a zero-dim CPU tensor joins any device)."""
    found = None
    found_is_cpu_scalar = False
    for t in tensors:
        if not isinstance(t, Tensor):
            continue
        is_cpu_scalar = t.device is CPU and not t._sizes
        if found is None or (found_is_cpu_scalar and not is_cpu_scalar):
            found, found_is_cpu_scalar = t.device, is_cpu_scalar
        elif t.device is not found and not is_cpu_scalar:
            raise RuntimeError(
                "Expected all tensors to be on the same device, but found at least two devices, "
                f"{found} and {t.device}!"
            )
    return CPU if found is None else found


# ``exact_ints(map(type, values))``: True when every value's class is exactly int (no bool, no
# int-valued float): the test before a memo keyed by an int tuple is used (True == 1.0 == 1 and they
# hash alike). A C-level set test, about half the time of ``all(v.__class__ is int for v in values)``.
exact_ints = frozenset((int,)).issuperset


def _is_index_tensor(value) -> bool:
    """A 0-dim integer tensor (not bool), which torch's parser takes for an int argument."""
    return isinstance(value, Tensor) and not value._sizes and value.dtype.category == 1


def wrap_dim(dim: int, ndim: int) -> int:
    """Wrap a possibly negative ``dim`` for a tensor of ``ndim`` dims (0-d tensors accept 0 and -1)."""
    if dim.__class__ is int and -ndim <= dim < ndim:  # the common case, first (exact int: not a bool)
        return dim + ndim if dim < 0 else dim
    if not isinstance(dim, int) or isinstance(dim, bool):
        if not _is_index_tensor(dim):
            raise TypeError(f"dim must be an int, got {type(dim).__name__}")
        dim = dim.__index__()  # a 0-dim integer tensor stands for an int, as in torch's argument parser
    n = ndim if ndim > 0 else 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def broadcast_shapes(*shapes) -> tuple:
    """torch.broadcast_shapes: align right; sizes must match or be 1."""
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for shape in shapes:
        offset = ndim - len(shape)
        for i, s in enumerate(shape):
            cur = out[offset + i]
            if s == cur or s == 1:
                continue
            if cur == 1:
                out[offset + i] = s
            else:
                raise RuntimeError(
                    f"The size of tensor a ({cur}) must match the size of tensor b ({s}) at "
                    f"non-singleton dimension {offset + i}"
                )
    return tuple(out)


def elementwise_strides(sizes, tensors) -> tuple:
    """Output strides as TensorIterator picks them: follow the first input's dense layout.

    If the first tensor input has the output's shape and is non-overlapping and dense (e.g. a
    transposed or channels-last tensor), the output copies its stride order; otherwise the output
    is contiguous.
    """
    sizes = tuple(sizes)
    if len(sizes) < 2:
        return _contiguous_meta(sizes)[0]
    for t in tensors:
        if isinstance(t, Tensor) and t._sizes == sizes:
            if t.is_contiguous():
                break
            if t._is_non_overlapping_and_dense():
                order = sorted(range(len(sizes)), key=lambda d: (t._strides[d], -d))
                strides = [0] * len(sizes)
                acc = 1
                for d in order:
                    strides[d] = acc
                    acc *= max(sizes[d], 1)
                return tuple(strides)
            break
    return _contiguous_meta(sizes)[0]


def result_dtype(*operands) -> dt.dtype:
    """torch.result_type over the operands (tensors and Python scalars; None ignored)."""
    first = operands[0]
    if first.__class__ is Tensor:  # fast path: nothing promotes the first tensor's dtype (Note [Type promotion])
        d = first.dtype
        for b in operands[1:]:
            if b.__class__ is Tensor:
                if b.dtype is not d:
                    break
            elif b is None:
                continue
            elif b.__class__ is int:  # a scalar changes the result only by a higher category
                if d.category < dt.INTEGRAL:
                    break
            elif b.__class__ is float:
                if d.category < dt.FLOATING:
                    break
            elif b.__class__ is not bool:
                break
        else:
            return d
    return dt.result_type(*(o for o in operands if o is not None))


def reduction_dims(dim, ndim: int) -> tuple:
    """Normalize a reduction's ``dim`` argument (None/[] = all dims) to sorted unique dims."""
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) or _is_index_tensor(dim) else tuple(dim)
    wrapped = [wrap_dim(d, ndim) for d in dims]
    unique = sorted(set(wrapped))
    if len(unique) != len(wrapped):
        dup = next(d for i, d in enumerate(wrapped) if d in wrapped[:i])
        raise RuntimeError(f"dim {dup} appears multiple times in the list of dims")
    return tuple(unique)


def reduced_shape(sizes, dims, keepdim: bool) -> tuple:
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(sizes))
    return tuple(s for i, s in enumerate(sizes) if i not in dims)


def normalize_size(size, op: str) -> tuple:
    """Turn a size argument (int, sequence, Size) into a tuple of non-negative ints, or raise."""
    if isinstance(size, (int,)) and not isinstance(size, bool):
        size = (size,)
    try:
        items = tuple(size)
    except TypeError:
        raise TypeError(f"{op}(): argument 'size' must be a tuple of ints, but found {type(size).__name__}") from None
    out = []
    for i, s in enumerate(items):
        if isinstance(s, Tensor) and s.dim() == 0 and s.dtype.category == dt.INTEGRAL:
            s = s.item()
        if not isinstance(s, int) or isinstance(s, bool):
            if hasattr(s, "__index__") and not isinstance(s, (bool, float)):
                s = s.__index__()
            else:
                raise TypeError(
                    f"{op}(): argument 'size' must be tuple of ints, but found element of type "
                    f"{type(s).__name__} at pos {i}"
                )
        out.append(s)
    check_size_nonnegative(out, op)
    return tuple(out)


def check_size_nonnegative(sizes, op: str) -> None:
    for s in sizes:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(sizes)}")  # torch's words


def numel(sizes) -> int:
    return math.prod(sizes)
