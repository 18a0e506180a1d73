"""CPU kernels for advanced indexing: ``index.Tensor`` and ``index_put`` (Note [Advanced indexing])."""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ...dispatch import library
from ...dispatch.library import kernel
from ..meta import advanced_indexing as meta
from ..meta.common import new_output_like
from .common import as_numpy, store

_HALF = (dt.float16.numpy_dtype, dt.bfloat16.numpy_dtype)

__all__ = []


def _expand(self, entries) -> list:
    """One entry per indexed dim: None (whole dim) or an integer array; masks become nonzero()."""
    arrays = []
    for e in entries:
        if e is None:
            arrays.append(None)
            continue
        a = as_numpy(e)
        if meta.is_mask(e):
            arrays.extend(np.nonzero(a))
            continue
        d = len(arrays)
        size = self._sizes[d]
        # valid: -size <= i < size (a non-empty index of an empty dim is index_shape's error).
        # torch's message numbers the index tensor among the given ones, not the dim it indexes.
        if size and a.size and (a.min() < -size or a.max() >= size):
            bad = int(a[(a < -size) | (a >= size)].flat[0])
            k = sum(x is not None for x in arrays)
            raise IndexError(f"index {bad} is out of bounds for dimension {k} with size {size}")
        arrays.append(a)
    return arrays


def _key(arrays) -> tuple:
    return tuple(slice(None) if a is None else a for a in arrays)


def _dims(arrays) -> list:
    return [None if a is None else a.shape for a in arrays]


@kernel("CPU")
def index(self, indices):
    arrays = _expand(self, meta.check_indices(self, indices))
    out = meta.index_output(self, _dims(arrays))
    if out.numel():
        given = [k for k, a in enumerate(arrays) if a is not None]
        if len(given) == 1:  # one index array: a take along its dim, straight into the output
            k = given[0]
            np.take(as_numpy(self), arrays[k], axis=k, out=as_numpy(out), mode="wrap")
        else:
            store(out, as_numpy(self)[_key(arrays)])
    return out


def _put(dst: np.ndarray, key: tuple, v: np.ndarray, accumulate: bool) -> None:
    if np.may_share_memory(dst, v):
        v = v.copy()  # the value may be a view of the tensor written to
    if not accumulate:
        # A one-element value may have any shape and dtype here (torch's masked_fill case).
        dst[key] = v.reshape(()) if v.size == 1 else v
        return
    cd = np.dtype(np.float32) if dst.dtype in _HALF else dst.dtype
    if cd == dst.dtype:
        np.add.at(dst, key, v)
    else:
        acc = dst.astype(cd)
        np.add.at(acc, key, v.astype(cd))
        np.copyto(dst, acc, casting="unsafe")


@kernel("CPU")
def index_put(self, indices, values, accumulate=False):
    entries = meta.check_indices(self, indices)
    arrays = _expand(self, entries)
    meta.check_index_put(self, entries, values, accumulate, _dims(arrays))
    out = new_output_like(self)
    o = as_numpy(out)
    np.copyto(o, as_numpy(self))
    if o.size:
        _put(o, _key(arrays), as_numpy(values), accumulate)
    return out


def index_put_(self, indices, values, accumulate=False):
    """The in-place form, registered directly (Note [Autogen]): ``x[i] = v`` writes without copying x."""
    if 0 in self._strides and 0 not in self._sizes and any(
            st == 0 and sz > 1 for sz, st in zip(self._sizes, self._strides)):
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a single "
            "memory location. Please clone() the tensor before performing the operation."
        )
    entries = meta.check_indices(self, indices)
    arrays = _expand(self, entries)
    meta.check_index_put(self, entries, values, accumulate, _dims(arrays))
    if self.numel():
        _put(as_numpy(self), _key(arrays), as_numpy(values), accumulate)
    return self


library.impl("aten::index_put_", "CPU")(index_put_)
