"""CPU kernels for advanced indexing: ``index.Tensor`` and ``index_put`` (Note [Advanced indexing]).

The preparation is the Meta module's (Note [Index preparation]); NumPy's fancy indexing does the rest.
"""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ...dispatch import library
from ...dispatch.library import kernel
from ..meta import advanced_indexing as meta
from ..meta.common import new_output_like
from .accumulate import add_flat, add_rows
from .common import as_numpy, store

_HALF = (dt.float16.numpy_dtype, dt.bfloat16.numpy_dtype)

__all__ = []


def _nonzero(self, mask) -> tuple:
    return np.nonzero(as_numpy(mask))


def _as_index(self, e) -> np.ndarray:
    return as_numpy(e)


def _first_bad(self, checks) -> list:
    """Per ``(entry, array, size)``: the first index outside ``[-size, size)``, or None."""
    out = []
    for _, a, size in checks:
        bad = None
        if a.min() < -size or a.max() >= size:
            bad = int(a[(a < -size) | (a >= size)].flat[0])
        out.append(bad)
    return out


_BACKEND = meta.IndexBackend(_nonzero, _as_index, _first_bad)


def _key(arrays) -> tuple:
    return tuple(slice(None) if a is None else a for a in arrays)


@kernel("CPU")
def index(self, indices):
    arrays, _, out = meta.prepare_index(self, indices, _BACKEND)
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
        _add_into(dst, key, v)
    else:
        acc = dst.astype(cd)
        _add_into(acc, key, v.astype(cd))
        np.copyto(dst, acc, casting="unsafe")


def _add_into(dst: np.ndarray, key: tuple, v: np.ndarray) -> None:
    """``np.add.at(dst, key, v)``; one index array among full slices (``x[idx] += v``, an indexing backward)
    accumulates in rounds instead, and index arrays on the leading dims (``x[i, j] += v``) as one flat index, the
    same sums bit for bit (Note [Accumulation in rounds])."""
    given = [k for k, e in enumerate(key) if not isinstance(e, slice)]
    if any(e != slice(None) for e in key if isinstance(e, slice)):
        np.add.at(dst, key, v)
        return
    if len(given) > 1:
        leading = given == list(range(len(given))) and all(key[k].dtype.kind in "iu" for k in given)
        if leading and dst.flags.c_contiguous:
            _add_leading(dst, [key[k] for k in given], v)
        else:
            np.add.at(dst, key, v)
        return
    k = given[0]
    idx = key[k]
    if idx.dtype.kind not in "iu":
        np.add.at(dst, key, v)
        return
    if idx.size and idx.min() < 0:
        idx = np.where(idx < 0, idx + dst.shape[k], idx)
    rows = np.broadcast_to(v, dst.shape[:k] + idx.shape + dst.shape[k + 1:])
    add_rows(dst, k, idx.reshape(-1), rows.reshape(dst.shape[:k] + (idx.size,) + dst.shape[k + 1:]))


def _add_leading(dst: np.ndarray, arrays: list, v: np.ndarray) -> None:
    """``np.add.at(dst, (*arrays, ...), v)`` for index arrays on the leading dims of a contiguous ``dst``: their
    flat row index (in np.add.at's order: the broadcast arrays', row-major) feeds add_rows over the rows of the
    remaining dims, or np.add.at's flat fast path when no dims remain."""
    m = len(arrays)
    lead, rest = dst.shape[:m], dst.shape[m:]
    arrays = np.broadcast_arrays(*arrays)
    lin = np.ravel_multi_index(arrays, lead, mode="wrap").reshape(-1)  # bounds already checked; wrap = negatives
    rows = np.broadcast_to(v, arrays[0].shape + rest).reshape((lin.size,) + rest)
    flat = dst.reshape((-1,) + rest)
    if rest:
        add_rows(flat, 0, lin, rows)
    else:
        add_flat(flat, lin, rows)


@kernel("CPU")
def index_put(self, indices, values, accumulate=False):
    arrays, _ = meta.prepare_index_put(self, indices, values, accumulate, _BACKEND)
    out = new_output_like(self)
    o = as_numpy(out)
    np.copyto(o, as_numpy(self))
    if o.size:
        _put(o, _key(arrays), as_numpy(values), accumulate)
    return out


def index_put_(self, indices, values, accumulate=False):
    """The in-place form, registered directly (Note [Autogen]): ``x[i] = v`` writes without copying x."""
    meta.check_no_internal_overlap(self)
    arrays, _ = meta.prepare_index_put(self, indices, values, accumulate, _BACKEND)
    if self.numel():
        _put(as_numpy(self), _key(arrays), as_numpy(values), accumulate)
    return self


library.impl("aten::index_put_", "CPU")(index_put_)
