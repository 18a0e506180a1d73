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


# Note [Top k by partition]
# topk's result is the first k of the stable sort (Note [Sort order]). Sorting all n to keep k costs n log n per row
# (66 ms for k = 10 of 1024 x 1024 floats, torch 3.9); when k is at most a quarter of n a partition finds each row's
# k-th value in O(n), the elements beyond it and, of those equal to it, the first by index make the k, and only
# those k are sorted (stably, from index order) -- the same elements in the same order as the full sort.
def _top_by_partition(a: np.ndarray, k: int, largest: bool) -> np.ndarray:
    """int64 (rows, k): the first k positions of the stable sort of each row of ``a`` (rows, n)."""
    n = a.shape[1]
    kth = n - k if largest else k - 1
    threshold = np.partition(a, kth, axis=1)[:, kth:kth + 1]  # NaN sorts last in both
    with np.errstate(invalid="ignore"):
        beyond = a > threshold if largest else a < threshold
        equal = a == threshold
    if a.dtype.kind == "f":
        nan, nan_threshold = np.isnan(a), np.isnan(threshold)
        if largest:
            beyond |= nan & ~nan_threshold  # NaN is above every number
        else:
            beyond |= ~nan & nan_threshold
        equal |= nan & nan_threshold
    need = k - beyond.sum(axis=1, keepdims=True)
    chosen = beyond | (equal & (np.cumsum(equal, axis=1) <= need))
    candidates = np.nonzero(chosen)[1].reshape(a.shape[0], k)  # ascending positions in each row
    order = stable_order(np.take_along_axis(a, candidates, 1), 1, largest)
    return np.take_along_axis(candidates, order, 1)


@kernel("CPU")
def topk(self, k, dim=-1, largest=True, sorted=True):
    if self.dtype is dt.bool:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    values, indices = result = meta.topk(self, k, dim, largest, sorted)
    if values.numel():
        d = _dim(dim, self)
        keys = _keys(self)
        n = keys.shape[d]
        if 4 * k <= n:  # Note [Top k by partition]
            moved = np.moveaxis(keys, d, -1)
            rows = np.ascontiguousarray(moved).reshape(-1, n)
            idx = _top_by_partition(rows, k, largest).reshape(moved.shape[:-1] + (k,))
            idx = np.moveaxis(idx, -1, d)
        else:
            idx = stable_order(keys, d, largest)
            idx = idx[(slice(None),) * d + (slice(0, k),)]
        store(values, np.take_along_axis(_atleast_1d(as_numpy(self)), idx, d).reshape(values._sizes))
        store(indices, idx.reshape(values._sizes))
    return result


def search_rows(seq: np.ndarray, values: np.ndarray, sorter, right: bool) -> np.ndarray:
    """Vectorized binary search with torch's comparisons (Note [searchsorted comparisons]): ``seq``
    (rows, m), ``values`` (rows, k) -> int64 (rows, k)."""
    rows, m = seq.shape
    lo = np.zeros(values.shape, np.int64)
    hi = np.full(values.shape, m, np.int64)
    r = np.arange(rows)[:, None]
    with np.errstate(invalid="ignore"):
        while True:
            active = lo < hi
            if not active.any():
                return lo
            mid = (lo + hi) >> 1
            pos = np.minimum(mid, m - 1)
            if sorter is not None:
                pos = sorter[r, pos]
            mv = seq[r, pos]
            go = ~(mv > values) if right else ~(mv >= values)
            lo = np.where(active & go, mid + 1, lo)
            hi = np.where(active & ~go, mid, hi)


# Note [searchsorted comparisons]
# torch's binary search moves right while ``!(seq[mid] >= v)`` (left) or ``!(seq[mid] > v)`` (right).
# With those exact comparisons a NaN value lands after every element, and a NaN inside the sequence
# sends the search right as torch's does; both backends use them.
@kernel("CPU")
def searchsorted(sorted_sequence, self, *, out_int32=False, right=False, side=None, sorter=None):
    right = meta.searchsorted_check(sorted_sequence, self, out_int32, right, side, sorter)
    out = meta.searchsorted_output(self, out_int32)
    if not out.numel():
        return out
    common = dt.promote_types(sorted_sequence.dtype, self.dtype)  # as torch: both in the common dtype
    seq = _keys(sorted_sequence if sorted_sequence.dtype is common else sorted_sequence.to(common))
    vals = _keys(self if self.dtype is common else self.to(common))
    m = sorted_sequence._sizes[-1]
    rows = int(np.prod(sorted_sequence._sizes[:-1], dtype=np.int64))  # 1 for a 1-D sequence
    seq2 = seq.reshape(rows, m)
    vals2 = vals.reshape(rows, -1) if sorted_sequence.dim() > 1 else vals.reshape(1, -1)
    srt = None
    if sorter is not None:
        srt = as_numpy(sorter).reshape(rows, m)
        if srt.size and (srt.min() < 0 or srt.max() >= m):
            raise RuntimeError("torch.searchsorted(): sorter index out of range")
    result = np.zeros(vals2.shape, np.int64) if m == 0 else search_rows(seq2, vals2, srt, right)
    store(out, result.reshape(self._sizes).astype(np.int32 if out_int32 else np.int64))
    return out
