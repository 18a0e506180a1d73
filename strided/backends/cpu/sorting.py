"""CPU kernels for ``sort``, ``sort.stable`` and ``topk``.

Note [Sort order]
Sorting is stable: equal keys keep their index order, in both directions. NaN compares greater
than every number, as in torch: last when ascending, first when descending (and the largest for
``topk``). A descending stable sort is an ascending stable sort of the reversed dim, reversed
back; negating keys would break unsigned and minimum integers and put NaN last.
"""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ...dispatch.library import kernel
from ..meta import sorting as meta
from .common import as_numpy, store

__all__ = ["stable_order"]

_KEY_DTYPES = {dt.float16: np.float32, dt.bfloat16: np.float32}


def stable_order(a: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """int64 indices that stably sort ``a`` along ``axis`` (Note [Sort order])."""
    if not descending:
        return np.argsort(a, axis=axis, kind="stable")
    n = a.shape[axis]
    idx = np.argsort(np.flip(a, axis), axis=axis, kind="stable")
    return (n - 1) - np.flip(idx, axis)


def _atleast_1d(a: np.ndarray) -> np.ndarray:
    return a.reshape(1) if a.ndim == 0 else a


def _keys(t) -> np.ndarray:
    a = as_numpy(t)
    key = _KEY_DTYPES.get(t.dtype)
    return _atleast_1d(a.astype(key) if key is not None else a)


def _dim(dim, t) -> int:
    n = len(t._sizes)
    return 0 if n == 0 else (dim + n if dim < 0 else dim)


@kernel("CPU")
def sort(self, dim=-1, descending=False):
    values, indices = result = meta.sort(self, dim, descending)
    if self.numel():
        d = _dim(dim, self)
        idx = stable_order(_keys(self), d, descending)
        store(values, np.take_along_axis(_atleast_1d(as_numpy(self)), idx, d).reshape(self._sizes))
        store(indices, idx.reshape(self._sizes))
    return result


@kernel("CPU")
def sort_stable(self, *, stable, dim=-1, descending=False):
    return sort(self, dim, descending)


@kernel("CPU")
def topk(self, k, dim=-1, largest=True, sorted=True):
    if self.dtype is dt.bool:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    values, indices = result = meta.topk(self, k, dim, largest, sorted)
    if values.numel():
        d = _dim(dim, self)
        idx = stable_order(_keys(self), d, largest)
        idx = idx[(slice(None),) * d + (slice(0, k),)]
        store(values, np.take_along_axis(_atleast_1d(as_numpy(self)), idx, d).reshape(values._sizes))
        store(indices, idx.reshape(values._sizes))
    return result
