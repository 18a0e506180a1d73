"""OpInfos: nansum, nanmean, std_mean / var_mean, aminmax (``ops/composite/reduction_stats.py``)."""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ..opinfo import ALL_DTYPES, FLOATING, OpInfo, SampleInput, make_arg
from .helpers import err
from .pointwise_samples import tensor_of
from .reductions_samples import NO_BOOL, SUM_TOL, axis_of

__all__ = ["OPS"]


def _with_nans(d, rng, shape, nc=False):
    x = make_arg(shape, d, rng=rng, noncontiguous=nc)
    if d.is_floating_point and x.numel():
        flat = x.view(-1) if x.is_contiguous() else None
        if flat is not None:
            flat[::3] = float("nan")
        else:
            x[..., 0] = float("nan")
    return x


def _nan_samples(d, rng):
    yield SampleInput((_with_nans(d, rng, (3, 4, 5)),), name="all")
    yield SampleInput((_with_nans(d, rng, (3, 4, 5)), 1), name="dim 1")
    yield SampleInput((_with_nans(d, rng, (3, 4, 5), nc=True), [0, 2], True), name="noncontiguous, dims, keepdim")
    yield SampleInput((make_arg((), d, rng=rng),), name="0-dim")
    if d.is_floating_point:
        yield SampleInput((tensor_of([np.nan, np.nan, 1.0], d), 0), name="a row of NaN only, then one value")


def _nansum_ref(a, dim=None, keepdim=False):
    a = np.asarray(a)
    out_dtype = np.float64 if a.dtype.kind == "f" else np.int64
    return np.nansum(a.astype(out_dtype), axis=axis_of(a, dim), keepdims=keepdim)


def _nanmean_ref(a, dim=None, keepdim=False):
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.nanmean(np.asarray(a, np.float64), axis=axis_of(a, dim), keepdims=keepdim)


def _stat_mean_samples(unbiased_form):
    def samples(d, rng):
        x = make_arg((3, 4, 5), d, rng=rng)
        if unbiased_form == "alone":
            yield SampleInput((x,), name="default unbiased")
            yield SampleInput((make_arg((3, 4, 5), d, rng=rng, noncontiguous=True), False), name="biased")
        elif unbiased_form:
            yield SampleInput((x, 1), name="dim 1, unbiased")
            yield SampleInput((x, [0, 2], False, True), name="dims, biased, keepdim")
        else:
            yield SampleInput((x,), name="all")
            yield SampleInput((make_arg((3, 4, 5), d, rng=rng, noncontiguous=True), 1), {"correction": 0},
                              name="noncontiguous, correction 0")
            yield SampleInput((x, [0, 2]), {"keepdim": True, "correction": 2}, name="dims, keepdim, correction 2")

    return samples


def _stat_mean_ref(np_stat):
    def ref(a, dim=None, unbiased=None, keepdim=False, correction=None):
        a = np.asarray(a, np.float64)
        ddof = correction if correction is not None else (1 if unbiased in (None, True) else 0)
        axis = axis_of(a, dim)
        return np_stat(a, axis=axis, ddof=ddof, keepdims=keepdim), np.mean(a, axis=axis, keepdims=keepdim)

    return ref


def _stat_mean_alone_ref(np_stat):
    def ref(a, unbiased=True):
        return _stat_mean_ref(np_stat)(a, None, unbiased)

    return ref


def _aminmax_samples(d, rng):
    yield SampleInput((make_arg((3, 4), d, rng=rng),), name="all")
    yield SampleInput((make_arg((3, 4, 2), d, rng=rng, noncontiguous=True),), {"dim": 1}, name="dim 1")
    yield SampleInput((make_arg((3, 4), d, rng=rng),), {"dim": -1, "keepdim": True}, name="keepdim")
    if d.is_floating_point:
        yield SampleInput((tensor_of([1.0, np.nan, 3.0], d),), name="NaN propagates")


def _aminmax_ref(a, dim=None, keepdim=False):
    a = np.asarray(a)
    axis = None if dim is None else dim
    return np.min(a, axis=axis, keepdims=keepdim), np.max(a, axis=axis, keepdims=keepdim)


def _aminmax_errors(rng):
    yield err((make_arg((0,), dt.float32, rng=rng),), RuntimeError,
              "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.")


_STAT_TOL = {dt.float16: (2e-3, 2e-2), dt.bfloat16: (1.6e-2, 1e-1)}

OPS = [
    OpInfo("nansum", _nan_samples, ref=_nansum_ref, dtypes=ALL_DTYPES, tolerances=SUM_TOL),
    OpInfo("nanmean", _nan_samples, ref=_nanmean_ref, dtypes=FLOATING, tolerances=SUM_TOL,
           errors=lambda rng: iter([err((make_arg((2,), dt.int64, rng=rng),), RuntimeError,
                                        "nanmean(): expected input to have floating point or complex dtype but "
                                        "got Long")])),
    OpInfo("std_mean.correction", _stat_mean_samples(False), ref=_stat_mean_ref(np.std), dtypes=FLOATING,
           tolerances=_STAT_TOL),
    OpInfo("std_mean.dim", _stat_mean_samples(True), ref=_stat_mean_ref(np.std), dtypes=FLOATING,
           tolerances=_STAT_TOL),
    OpInfo("var_mean.correction", _stat_mean_samples(False), ref=_stat_mean_ref(np.var), dtypes=FLOATING,
           tolerances=_STAT_TOL),
    OpInfo("var_mean.dim", _stat_mean_samples(True), ref=_stat_mean_ref(np.var), dtypes=FLOATING,
           tolerances=_STAT_TOL),
    OpInfo("std_mean.unbiased", _stat_mean_samples("alone"), ref=_stat_mean_alone_ref(np.std), dtypes=FLOATING,
           tolerances=_STAT_TOL),
    OpInfo("var_mean.unbiased", _stat_mean_samples("alone"), ref=_stat_mean_alone_ref(np.var), dtypes=FLOATING,
           tolerances=_STAT_TOL),
    OpInfo("aminmax", _aminmax_samples, ref=_aminmax_ref, dtypes=NO_BOOL, errors=_aminmax_errors),
]
