"""OpInfos: median, median.dim, quantile, quantile.scalar (``ops/composite/order_statistics.py``),
against NumPy (lower median; NaN propagates, Note [NaN in order statistics])."""

from __future__ import annotations

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


def _quantile_errors(rng):
    x = make_arg((4,), dt.float32, rng=rng)
    yield err((x, 1.5), RuntimeError, "quantile() q must be in the range [0, 1] but got 1.5")
    yield err((make_arg((4,), dt.int64, rng=rng), 0.5), RuntimeError,
              "quantile() input tensor must be either float or double dtype")
    yield err((x, 0.5), RuntimeError, "quantile() interpolation must be one of linear, lower, higher, midpoint or "
              "nearest, but got bad", {"interpolation": "bad"})
    yield err((make_arg((0,), dt.float32, rng=rng), 0.5), RuntimeError, "quantile() input tensor must be non-empty")


_DTYPES = (dt.float32, dt.float64)

OPS = [
    OpInfo("median", _median_samples, ref=_median_ref, dtypes=FLOATING + INTEGRAL),
    OpInfo("median.dim", _median_dim_samples, ref=_median_dim_ref, dtypes=FLOATING + INTEGRAL,
           errors=lambda rng: iter([err((make_arg((2, 0), dt.float32, rng=rng), 1), IndexError,
                                        "median(): Expected reduction dim 1 to have non-zero size.")])),
    OpInfo("quantile", _quantile_samples(True), ref=_quantile_ref, dtypes=_DTYPES),
    OpInfo("quantile.scalar", _quantile_samples(False), ref=_quantile_ref, dtypes=_DTYPES, errors=_quantile_errors),
]
