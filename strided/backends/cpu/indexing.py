"""CPU kernels for indexing along one dim (index_select, gather, scatter, scatter_add, index_add,
embedding), one_hot, and tril/triu. Index bounds are checked here (Note [Data-dependent checks]).
"""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ...dispatch.library import kernel
from ...tensor import Tensor
from ..meta import indexing as meta
from ..meta.common import wrap_dim
from .accumulate import add_flat, add_rows
from .common import as_numpy, compute_dtype, scalar_as, store

__all__ = ["out_of_bounds"]


def out_of_bounds(idx: np.ndarray, size: int):
    """The first index outside ``[0, size)``, or None when all are inside."""
    if idx.size == 0 or (idx.min() >= 0 and idx.max() < size):
        return None
    return int(idx[(idx < 0) | (idx >= size)].flat[0])


def _check_bounds(idx, size, dim) -> None:
    bad = out_of_bounds(idx, size)
    if bad is not None:
        raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size {size}")


def _check_range(idx, size) -> None:
    if out_of_bounds(idx, size) is not None:
        raise IndexError("index out of range in self")


@kernel("CPU")
def _check_index_range(index, low, high, message, op, index_error=True):
    """Raise ``message`` (``{index}``: the first value outside ``[low, high)``) if ``index`` has one (Note
    [Index bounds in compositions])."""
    a = as_numpy(index)
    if a.size and (a.min() < low or a.max() >= high):
        bad = int(a[(a < low) | (a >= high)].flat[0])
        raise (IndexError if index_error else RuntimeError)(message.format(index=bad))


def _atleast_1d(a: np.ndarray) -> np.ndarray:
    return a.reshape(1) if a.ndim == 0 else a


def _prefix(a: np.ndarray, shape, skip=None) -> np.ndarray:
    """``a`` cut to ``shape`` in every dim but ``skip`` (gather/scatter read a corner of it)."""
    return a[tuple(slice(None) if k == skip else slice(0, n) for k, n in enumerate(shape))]


def _scalar(value, d: dt.dtype):
    """A Python scalar converted to ``d`` as torch casts (wrapping, truncating)."""
    if isinstance(value, Tensor):
        value = value.item()
    return scalar_as(value, d)


@kernel("CPU")
def index_select(self, dim, index):
    out = meta.index_select(self, dim, index)
    d = wrap_dim(dim, len(self._sizes))
    idx = as_numpy(index).reshape(-1)
    _check_range(idx, meta.nonempty_size(self, d))
    if not self._sizes:
        return store(out, as_numpy(self))
    if out.numel():
        np.take(as_numpy(self), idx, axis=d, out=as_numpy(out), mode="clip")
    return out


@kernel("CPU")
def gather(self, dim, index, *, sparse_grad=False):
    out = meta.gather(self, dim, index, sparse_grad=sparse_grad)
    if not out.numel():
        return out
    d = wrap_dim(dim, len(self._sizes))
    a = _atleast_1d(as_numpy(self))
    idx = _atleast_1d(as_numpy(index))
    _check_bounds(idx, a.shape[d], d)
    return store(out, np.take_along_axis(_prefix(a, idx.shape, d), idx, d).reshape(out._sizes))


def _scatter(self, dim, index, src, accumulate: bool) -> Tensor:
    out = meta.scatter_output(self, dim, index, src)
    o = as_numpy(out)
    np.copyto(o, as_numpy(self))
    if not index.numel():
        return out
    d = wrap_dim(dim, len(self._sizes))
    view = _atleast_1d(o)
    idx = _atleast_1d(as_numpy(index))
    _check_bounds(idx, view.shape[d], d)
    dst = _prefix(view, idx.shape, d)  # a view: writes land in the output
    if isinstance(src, Tensor):
        values = _prefix(_atleast_1d(as_numpy(src)), idx.shape)
    else:
        values = _scalar(src, self.dtype)
    if not accumulate:
        np.put_along_axis(dst, idx, values, d)
        return out
    # the flat position of each (index row, other coordinates) target, in the source's order
    strides = np.array([int(np.prod(dst.shape[k + 1:])) for k in range(dst.ndim)], dtype=np.intp)
    lin = np.zeros(idx.shape, dtype=np.intp)
    for k in range(dst.ndim):
        coord = idx if k == d else np.arange(idx.shape[k]).reshape([-1 if j == k else 1 for j in range(idx.ndim)])
        lin += coord * strides[k]
    cd = compute_dtype(self.dtype)
    acc = np.ascontiguousarray(dst, dtype=cd)
    vals = np.broadcast_to(values.astype(cd), idx.shape).reshape(-1)
    add_flat(acc, lin.reshape(-1), vals)  # Note [Accumulation in rounds]
    np.copyto(dst, acc, casting="unsafe")
    return out


@kernel("CPU")
def scatter(self, dim, index, src=None, value=None):
    """``scatter.src`` and ``scatter.value``: a Scalar in ``src``'s place is the value."""
    return _scatter(self, dim, index, src if value is None else value, accumulate=False)


@kernel("CPU")
def scatter_add(self, dim, index, src):
    return _scatter(self, dim, index, src, accumulate=True)


@kernel("CPU")
def index_add(self, dim, index, source, *, alpha=1):
    out = meta.index_add(self, dim, index, source, alpha=alpha)
    d = wrap_dim(dim, len(self._sizes))
    cd = compute_dtype(self.dtype)
    o = _atleast_1d(as_numpy(out))
    acc = o if o.dtype == cd else np.empty(o.shape, cd)  # accumulate in the output itself when it can
    idx = _atleast_1d(as_numpy(index))
    _check_bounds(idx, acc.shape[d], d)
    np.copyto(acc, _atleast_1d(as_numpy(self)), casting="unsafe")
    src = _atleast_1d(as_numpy(source)).astype(cd, copy=False)
    if isinstance(alpha, complex) and not self.dtype.is_complex:
        alpha = alpha.real  # its imaginary part is 0 (the Meta function's check)
    if self.dtype is dt.bool:
        alpha = bool(alpha)
    elif not (self.dtype.is_floating_point or self.dtype.is_complex):
        alpha = int(alpha)
    if alpha != 1:
        src = src * np.asarray(alpha).astype(cd)
    add_rows(acc, d, idx.reshape(-1), src)  # Note [Accumulation in rounds]
    if acc is not o:
        np.copyto(o, acc, casting="unsafe")
    return out


@kernel("CPU")
def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    out = meta.embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse)
    idx = as_numpy(indices)
    _check_range(idx, weight._sizes[0])
    if out.numel():
        np.take(as_numpy(weight), idx, axis=0, out=as_numpy(out), mode="clip")
    return out


@kernel("CPU")
def one_hot(self, num_classes=-1):
    if self.dtype is not dt.int64 or not self.numel():
        out = meta.one_hot(self, num_classes)
        a = as_numpy(self)
    else:
        a = as_numpy(self)
        if a.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        top = int(a.max())
        if num_classes == -1:
            num_classes = top + 1
        elif num_classes <= top:
            raise RuntimeError("Class values must be smaller than num_classes.")
        out = meta.one_hot_output(self, num_classes)
    return store(out, a[..., None] == np.arange(num_classes))


def _triangle(out, self, keep) -> Tensor:
    a = as_numpy(self)
    return store(out, np.where(keep(*a.shape[-2:]), a, np.zeros((), a.dtype)))


@kernel("CPU")
def tril(self, diagonal=0):
    out = meta.tril(self, diagonal)
    return _triangle(out, self, lambda r, c: np.tri(r, c, diagonal, dtype=bool))


@kernel("CPU")
def triu(self, diagonal=0):
    out = meta.triu(self, diagonal)
    return _triangle(out, self, lambda r, c: ~np.tri(r, c, diagonal - 1, dtype=bool))


# The rest of this group's CPU kernels live in sibling modules; importing them here registers them
# with the backend (``backends/cpu/__init__`` imports this module).
from . import advanced_indexing, joining, sorting  # noqa: E402, F401


@kernel("CPU")
def nonzero(self):
    """The (count, self.dim()) int64 coordinates of the nonzero elements, in row-major order."""
    from ...factories import from_numpy

    return from_numpy(np.ascontiguousarray(np.argwhere(as_numpy(self)), dtype=np.int64))
