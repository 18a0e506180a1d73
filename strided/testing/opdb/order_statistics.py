"""OpInfos: median, nanmedian, mode, quantile, nanquantile (and their .dim / .scalar forms), searchsorted, bucketize
(``ops/composite/order_statistics.py``, ``backends/*/sorting.py``),
against NumPy (lower median; NaN propagates, Note [NaN in order statistics])."""

from __future__ import annotations

import warnings

import numpy as np

from ... import dtypes as dt
from ..opinfo import FLOATING, INTEGRAL, OpInfo, SampleInput, make_arg
from .helpers import err
from .pointwise_samples import tensor_of

__all__ = ["OPS"]

_NAN_ROWS = [[3.0, 1.0, 2.0, 4.0], [np.nan, 5.0, 1.0, np.nan], [2.0, 2.0, 1.0, 1.0]]


def _median_samples(d, rng):
    yield SampleInput((make_arg((3, 5), d, rng=rng),), name="odd count")
    yield SampleInput((make_arg((2, 4), d, rng=rng, noncontiguous=True),), name="even count: the lower one")
    yield SampleInput((make_arg((), d, rng=rng),), name="0-dim")
    if d.is_floating_point:
        yield SampleInput((tensor_of(_NAN_ROWS, d),), name="NaN propagates")


def _median_ref(a):
    a = np.asarray(a, np.float64).reshape(-1)
    if a.size == 0 or np.isnan(a).any():
        return np.float64(np.nan)
    return np.sort(a)[(a.size - 1) // 2]


def _median_dim_samples(d, rng):
    yield SampleInput((make_arg((3, 5), d, rng=rng, low=0, high=4), 1), name="ties, dim 1")
    yield SampleInput((make_arg((4, 3), d, rng=rng, noncontiguous=True), 0, True), name="dim 0, keepdim")
    yield SampleInput((make_arg((), d, rng=rng), 0), name="0-dim")
    if d.is_floating_point:
        yield SampleInput((tensor_of(_NAN_ROWS, d), 1), name="NaN rows: NaN and the first NaN's index")


def _median_dim_ref(a, dim, keepdim=False):
    a = np.asarray(a, np.float64)
    if a.ndim == 0:
        return a, np.int64(0)
    order = np.argsort(a, axis=dim, kind="stable")  # NaN last, ties in index order
    s = np.take_along_axis(a, order, dim)
    n = a.shape[dim]
    nans = np.isnan(a).sum(axis=dim, keepdims=True)
    pos = np.where(nans > 0, n - nans, (n - 1) // 2)
    v, i = np.take_along_axis(s, pos, dim), np.take_along_axis(order, pos, dim)
    return (v, i) if keepdim else (np.squeeze(v, dim), np.squeeze(i, dim))


def _quantile_samples(tensor_q: bool):
    def samples(d, rng):
        def q(values):
            return tensor_of(values, d) if tensor_q else values[0]

        x = make_arg((3, 6), d, rng=rng)  # q * (n - 1) exact in float32: torch ranks in q's dtype
        for interp in ("linear", "lower", "higher", "midpoint", "nearest"):
            yield SampleInput((x, q([0.375, 0.5])), {"dim": 1, "interpolation": interp}, f"{interp}, dim 1")
        yield SampleInput((make_arg((4, 3), d, rng=rng, noncontiguous=True), q([0.25, 1.0])),
                          {"dim": 0, "keepdim": True}, name="noncontiguous, keepdim")
        yield SampleInput((x, q([0.25, 0.875])), {"keepdim": True}, name="all elements, keepdim")
        yield SampleInput((tensor_of(_NAN_ROWS, d), q([0.5])), {"dim": 1}, name="NaN rows")

    return samples


def _quantile_ref(a, q, dim=None, keepdim=False, interpolation="linear"):
    a = np.asarray(a, np.float64)
    method = {"linear": "linear", "lower": "lower", "higher": "higher", "midpoint": "midpoint",
              "nearest": "nearest"}[interpolation]
    axis = dim
    r = np.quantile(a, np.asarray(q, np.float64), axis=axis, keepdims=keepdim, method=method)
    nan = np.isnan(a).any(axis=axis, keepdims=keepdim)
    return np.where(nan, np.nan, r)


_ALL_NAN_ROWS = [[3.0, np.nan, 2.0, 4.0], [np.nan, np.nan, np.nan, np.nan], [2.0, 2.0, 1.0, np.nan]]
_NAN_NO_TIES = [[3.0, np.nan, 2.0, 4.0], [np.nan, 5.0, 1.0, np.nan], [2.5, 0.5, 1.5, np.nan]]  # gradcheck-safe


def _nanmedian_samples(d, rng):
    yield SampleInput((make_arg((3, 5), d, rng=rng),), name="no NaN")
    if d.is_floating_point:
        yield SampleInput((tensor_of(_NAN_NO_TIES, d),), name="NaN ignored")


def _nanmedian_ref(a):
    a = np.asarray(a, np.float64).reshape(-1)
    a = np.sort(a[~np.isnan(a)])
    return np.float64(np.nan) if a.size == 0 else a[(a.size - 1) // 2]


def _nanmedian_dim_samples(d, rng):
    yield SampleInput((make_arg((3, 5), d, rng=rng, low=0, high=4), 1), name="ties, dim 1")
    yield SampleInput((make_arg((4, 3), d, rng=rng, noncontiguous=True), 0, True), name="dim 0, keepdim")
    if d.is_floating_point:
        yield SampleInput((tensor_of(_NAN_NO_TIES, d), 1), name="NaN ignored")


def _nanmedian_dim_ref(a, dim, keepdim=False):
    a = np.asarray(a, np.float64)
    order = np.argsort(a, axis=dim, kind="stable")
    s = np.take_along_axis(a, order, dim)
    valid = (~np.isnan(a)).sum(axis=dim, keepdims=True)
    pos = (valid - 1) // 2  # rows with a value each (all-NaN rows: tests/backend/test_nan_order_statistics.py)
    v, i = np.take_along_axis(s, pos, dim), np.take_along_axis(order, pos, dim)
    return (v, i) if keepdim else (np.squeeze(v, dim), np.squeeze(i, dim))


def _nanquantile_samples(tensor_q: bool):
    base = _quantile_samples(tensor_q)

    def samples(d, rng):
        yield from base(d, rng)

        def q(values):
            return tensor_of(values, d) if tensor_q else values[0]

        for interp in ("linear", "nearest"):
            yield SampleInput((tensor_of(_ALL_NAN_ROWS, d), q([0.5, 0.25])), {"dim": 1, "interpolation": interp},
                              f"NaN ignored, a NaN row, {interp}")

    return samples


def _nanquantile_ref(a, q, dim=None, keepdim=False, interpolation="linear"):
    a = np.asarray(a, np.float64)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices: NaN, as torch
        return np.nanquantile(a, np.asarray(q, np.float64), axis=dim, keepdims=keepdim, method=interpolation)


def _mode_samples(d, rng):
    yield SampleInput((make_arg((3, 7), d, rng=rng, low=0, high=3),), name="ties, last dim")
    yield SampleInput((make_arg((6, 4), d, rng=rng, low=0, high=3, noncontiguous=True), 0, True),
                      name="dim 0, keepdim, noncontiguous")
    yield SampleInput((make_arg((), d, rng=rng),), name="0-dim")


def _mode_ref(a, dim=-1, keepdim=False):
    a = np.asarray(a)
    if a.ndim == 0:
        return a, np.int64(0)
    rows = np.moveaxis(a, dim, -1)
    flat = rows.reshape(-1, rows.shape[-1])
    vals, idx = [], []
    for r in flat:
        u, counts = np.unique(r, return_counts=True)  # ascending: the first of the most frequent is the smallest
        v = u[np.argmax(counts)]
        vals.append(v)
        idx.append(np.flatnonzero(r == v)[-1])  # its last occurrence
    shape = rows.shape[:-1]
    v, i = np.array(vals, a.dtype).reshape(shape), np.array(idx, np.int64).reshape(shape)
    if keepdim:
        v, i = np.expand_dims(v, dim), np.expand_dims(i, dim)
    return v, i


def _quantile_errors(rng):
    x = make_arg((4,), dt.float32, rng=rng)
    yield err((x, 1.5), RuntimeError, "quantile() q must be in the range [0, 1] but got 1.5")
    yield err((make_arg((4,), dt.int64, rng=rng), 0.5), RuntimeError,
              "quantile() input tensor must be either float or double dtype")
    yield err((x, 0.5), RuntimeError, "quantile() interpolation must be one of linear, lower, higher, midpoint or "
              "nearest, but got bad", {"interpolation": "bad"})
    yield err((make_arg((0,), dt.float32, rng=rng), 0.5), RuntimeError, "quantile() input tensor must be non-empty")


_DTYPES = (dt.float32, dt.float64)


def _sorted(values, d):
    from ...factories import tensor

    return tensor(np.asarray(values), dtype=d)


def _search_samples(d, rng):
    seq = _sorted([1, 3, 3, 5, 7], d)
    vals = _sorted([[0, 3, 4], [7, 9, 1]], d)
    yield SampleInput((seq, vals), name="1-D sequence, 2-D values")
    yield SampleInput((seq, vals), {"right": True}, name="right")
    yield SampleInput((seq, vals), {"side": "right", "out_int32": True}, name="side right, int32")
    yield SampleInput((_sorted([[1, 4, 6], [0, 2, 9]], d), vals.t().contiguous().t()), name="rows, noncontig values")
    yield SampleInput((_sorted([5, 1, 3], d), _sorted([2, 4, 0], d)), {"sorter": _sorted([1, 2, 0], dt.int64)},
                      name="sorter")
    yield SampleInput((_sorted(np.zeros(0), d), _sorted([2], d)), name="empty sequence")


def _search_ref(seq, values, out_int32=False, right=False, side=None, sorter=None):
    side = side or ("right" if right else "left")
    if sorter is not None:
        seq = np.take_along_axis(seq, sorter, -1)
    if seq.ndim == 1:
        out = np.searchsorted(seq, values, side=side)
    else:
        out = np.stack([np.searchsorted(s, v, side=side) for s, v in zip(seq.reshape(-1, seq.shape[-1]),
                                                                         values.reshape(-1, values.shape[-1]))])
        out = out.reshape(values.shape)
    return out.astype(np.int32 if out_int32 else np.int64)


def _search_errors(rng):
    seq = make_arg((4,), dt.float32, rng=rng)
    yield err((seq, seq), RuntimeError, "torch.searchsorted(): side can only be 'left' or 'right' but got middle",
              {"side": "middle"})
    yield err((seq, seq), RuntimeError, "torch.searchsorted(): side and right can't be set to opposites, got side "
              "of left while right was True", {"side": "left", "right": True})
    yield err((make_arg((2, 2), dt.float32, rng=rng), seq), RuntimeError, "the first N-1 dimensions of "
              "boundaries tensor and input value tensor must match, but we got boundaries tensor [2, 2] and input "
              "value tensor [4]")
    yield err((seq, seq), RuntimeError, "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
              "Int", {"sorter": make_arg((4,), dt.int32, rng=rng)})


def _scalar_search_samples(d, rng):
    yield SampleInput((_sorted([1, 3, 5], d), 3), name="int value")
    yield SampleInput((_sorted([1, 3, 5], d), 4.5), {"right": True}, name="float value, right")


def _bucketize_samples(d, rng):
    yield SampleInput((_sorted([[0, 3], [6, 9]], d), _sorted([1, 3, 5, 7], d)), name="2-D values")
    yield SampleInput((_sorted([0, 3, 6], d), _sorted([1, 3, 5, 7], d)), {"right": True}, name="right")


def _bucketize_ref(values, boundaries, out_int32=False, right=False):
    return _search_ref(boundaries, values, out_int32, right)

OPS = [
    OpInfo("median", _median_samples, ref=_median_ref, dtypes=FLOATING + INTEGRAL),
    OpInfo("median.dim", _median_dim_samples, ref=_median_dim_ref, dtypes=FLOATING + INTEGRAL,
           errors=lambda rng: iter([err((make_arg((2, 0), dt.float32, rng=rng), 1), IndexError,
                                        "median(): Expected reduction dim 1 to have non-zero size.")])),
    OpInfo("quantile", _quantile_samples(True), ref=_quantile_ref, dtypes=_DTYPES),
    OpInfo("quantile.scalar", _quantile_samples(False), ref=_quantile_ref, dtypes=_DTYPES, errors=_quantile_errors),
    OpInfo("mode", _mode_samples, ref=_mode_ref, dtypes=FLOATING + INTEGRAL,
           errors=lambda rng: iter([err((make_arg((0,), dt.float32, rng=rng),), IndexError,
                                        "mode(): Expected reduction dim 0 to have non-zero size.")])),
    OpInfo("nanmedian", _nanmedian_samples, ref=_nanmedian_ref, dtypes=FLOATING + INTEGRAL),
    OpInfo("nanmedian.dim", _nanmedian_dim_samples, ref=_nanmedian_dim_ref, dtypes=FLOATING + INTEGRAL),
    OpInfo("nanquantile", _nanquantile_samples(True), ref=_nanquantile_ref, dtypes=_DTYPES),
    OpInfo("nanquantile.scalar", _nanquantile_samples(False), ref=_nanquantile_ref, dtypes=_DTYPES,
           errors=_quantile_errors),
    OpInfo("searchsorted.Tensor", _search_samples, ref=_search_ref, dtypes=FLOATING + INTEGRAL, errors=_search_errors),
    OpInfo("searchsorted.Scalar", _scalar_search_samples,
           ref=lambda seq, v, **kw: _search_ref(seq, np.asarray(v), **kw), dtypes=FLOATING + INTEGRAL),
    OpInfo("bucketize.Tensor", _bucketize_samples, ref=_bucketize_ref, dtypes=FLOATING + INTEGRAL,
           errors=lambda rng: iter([err((make_arg((3,), dt.float32, rng=rng), make_arg((2, 2), dt.float32, rng=rng)),
                                        RuntimeError, "boundaries tensor must be 1 dimension, but got dim(2)")])),
    OpInfo("bucketize.Scalar", lambda d, rng: iter([SampleInput((3, _sorted([1, 3, 5], d)), name="int value")]),
           ref=lambda v, b, **kw: _bucketize_ref(np.asarray(v), b, **kw), dtypes=FLOATING + INTEGRAL),
]
