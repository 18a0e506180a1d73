"""OpInfos: reductions. This module holds sum, mean, prod, amax/amin, max/min and argmax/argmin,
and gathers var/std, norm, all/any, logsumexp and cumsum from ``reductions_stats``."""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ..opinfo import ALL_DTYPES, OpInfo, SampleInput, make_arg
from .pointwise_samples import error, quiet_ref, tensor_of
from .reductions_samples import (
    NO_BOOL,
    SUM_TOL,
    acc_dtype,
    axis_of,
    full_samples,
    other_dtypes,
    reduce_samples,
    special_values,
)
from .reductions_stats import OPS as STATS_OPS

# ---------------------------------------------------------------------------- sum, mean, prod


def _sum_full_samples(dtype, rng, low=None, high=None):
    yield from full_samples(dtype, rng, low=low, high=high)
    for od in other_dtypes(dtype):
        yield SampleInput((make_arg((3, 4), dtype, low=low, high=high, rng=rng),), {"dtype": od},
                          f"dtype={od}")


def _sum_dim_samples(dtype, rng, low=None, high=None):
    yield from reduce_samples(dtype, rng, low=low, high=high)
    for od in other_dtypes(dtype):
        yield SampleInput((make_arg((2, 3, 4), dtype, low=low, high=high, rng=rng), [0, 2], False),
                          {"dtype": od}, f"dtype={od}")


def _sum_ref(a, dim=None, keepdim=False, *, dtype=None):
    acc = acc_dtype(a, dtype)
    return np.sum(np.asarray(a).astype(acc), axis=axis_of(a, dim), keepdims=keepdim, dtype=acc)


def _prod_ref(a, dim=None, keepdim=False, *, dtype=None):
    acc = acc_dtype(a, dtype)
    return np.prod(np.asarray(a).astype(acc), axis=axis_of(a, dim), keepdims=keepdim, dtype=acc)


def _mean_full_samples(dtype, rng):
    yield from full_samples(dtype, rng)
    yield SampleInput((make_arg((3, 4), dtype, rng=rng),), {"dtype": dt.float64}, "dtype=float64")
    yield SampleInput((make_arg((3, 4), dt.int64, rng=rng),), {"dtype": dtype}, "integral input, dtype=")


def _mean_dim_samples(dtype, rng):
    yield from reduce_samples(dtype, rng)
    yield SampleInput((make_arg((3, 4), dt.int32, rng=rng), 1, True), {"dtype": dtype},
                      "integral input, dtype=")


@quiet_ref
def _mean_ref(a, dim=None, keepdim=False, *, dtype=None):
    a = np.asarray(a, dtype=np.float64)
    total = np.sum(a, axis=axis_of(a, dim), keepdims=keepdim)
    return total / (a.size // max(total.size, 1) if a.size else 0)


def _mean_errors(rng):
    i = make_arg((2, 3), dt.int64, rng=rng)
    yield error((i,), RuntimeError, "mean(): could not infer output dtype. Input dtype must be either a "
                "floating point or complex dtype. Got: Long")
    yield error((make_arg((2, 3), dt.float32, rng=rng),), RuntimeError,
                "mean(): could not infer output dtype. Optional dtype must be either a floating point or "
                "complex dtype. Got: Int", {"dtype": dt.int32})


def _dim_errors(rng):
    x = make_arg((2, 3), dt.float32, rng=rng)
    yield error((x, 2), IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)")
    yield error((x, [0, -2]), RuntimeError, "dim 0 appears multiple times in the list of dims")


def _prod_range(dtype):
    """Factors whose products stay finite in half types."""
    return {"low": 0.5, "high": 1.5} if dtype.is_floating_point else {"low": -2, "high": 3}

# ---------------------------------------------------------------------------- amax, max, argmax


def _amax_samples(dtype, rng):
    yield from reduce_samples(dtype, rng, empty_dim=False)
    if dtype.is_floating_point:
        yield SampleInput((special_values(dtype), 1), {}, "nan and inf")
        yield SampleInput((special_values(dtype), []), {}, "nan and inf, all dims")


def _amax_ref(fn):
    def ref(a, dim=(), keepdim=False):
        return fn(a, axis=axis_of(a, dim), keepdims=keepdim)
    return ref


def _amax_errors(name):
    def errors(rng):
        e = make_arg((0, 3), dt.float32, rng=rng)
        yield error((e,), RuntimeError, f"{name}(): Expected reduction dim to be specified for "
                    "input.numel() == 0. Specify the reduction dim with the 'dim' argument.")
        yield error((e, -2), IndexError, f"{name}(): Expected reduction dim -2 to have non-zero size.")
    return errors


def _max_full_samples(dtype, rng):
    yield from full_samples(dtype, rng, empty=False)
    if dtype.is_floating_point:
        yield SampleInput((special_values(dtype),), {}, "nan and inf")


def _max_full_errors(name):
    def errors(rng):
        yield error((make_arg((0, 3), dt.float32, rng=rng),), RuntimeError,
                    f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                    "reduction dim with the 'dim' argument.")
    return errors


def _dim_index_samples(dtype, rng):
    def a(shape, **kw):
        return make_arg(shape, dtype, rng=rng, **kw)

    yield SampleInput((a((3, 4)), 1), {}, "2-d")
    yield SampleInput((a((2, 3, 4), noncontiguous=True), 0, True), {}, "noncontiguous keepdim")
    yield SampleInput((a((2, 3, 4)), -2), {}, "negative dim")
    yield SampleInput((a(()), 0), {}, "0-dim")
    yield SampleInput((a((0, 3)), 1, True), {}, "zero-size, non-empty dim")
    yield SampleInput((tensor_of([[3, 1, 3], [0, 2, 2]], dtype), 1), {}, "ties pick the first")
    if dtype.is_floating_point:
        yield SampleInput((special_values(dtype), 1), {}, "nan and inf")
        yield SampleInput((special_values(dtype), 0), {}, "nan and inf, dim 0")


def _dim_index_ref(value_fn, index_fn):
    def ref(a, dim, keepdim=False):
        a = np.asarray(a)
        if a.ndim == 0:
            return a, np.asarray(0)
        idx = index_fn(a, axis=dim, keepdims=True)
        values = np.take_along_axis(a, idx, axis=dim) if a.size else value_fn(a, axis=dim, keepdims=True)
        if not keepdim:
            values, idx = np.squeeze(values, dim), np.squeeze(idx, dim)
        return values, idx
    return ref


def _dim_index_errors(name):
    def errors(rng):
        e = make_arg((0, 3), dt.float32, rng=rng)
        yield error((e, -2), IndexError, f"{name}(): Expected reduction dim 0 to have non-zero size.")
        yield error((e, 2), IndexError,
                    "Dimension out of range (expected to be in range of [-2, 1], but got 2)")
    return errors


def _arg_samples(dtype, rng):
    yield from _dim_index_samples(dtype, rng)
    yield SampleInput((make_arg((3, 4), dtype, rng=rng),), {}, "flattened")
    yield SampleInput((make_arg((2, 3, 4), dtype, rng=rng, noncontiguous=True), None, True), {},
                      "flattened keepdim")


def _arg_ref(fn):
    def ref(a, dim=None, keepdim=False):
        a = np.asarray(a)
        if dim is None or a.ndim == 0:
            r = np.asarray(fn(a.reshape(-1)))
            return r.reshape((1,) * a.ndim) if keepdim else r
        return fn(a, axis=dim, keepdims=keepdim)
    return ref


def _arg_errors(name):
    def errors(rng):
        yield error((make_arg((2, 3), dt.bool, rng=rng),), RuntimeError,
                    f"{name}(): does not support bool input")
        yield error((make_arg((0, 3), dt.float32, rng=rng),), IndexError,
                    f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
        yield error((make_arg((0, 3), dt.float32, rng=rng), 0), IndexError,
                    f"{name}(): Expected reduction dim 0 to have non-zero size.")
    return errors


_ALL = {"dtypes": ALL_DTYPES}

OPS = [
    OpInfo("sum", _sum_full_samples, ref=_sum_ref, tolerances=SUM_TOL, **_ALL),
    OpInfo("sum.dim_IntList", _sum_dim_samples, ref=_sum_ref, tolerances=SUM_TOL, errors=_dim_errors, **_ALL),
    OpInfo("mean", _mean_full_samples, ref=_mean_ref, errors=_mean_errors),
    OpInfo("mean.dim", _mean_dim_samples, ref=_mean_ref, errors=_dim_errors),
    OpInfo("prod", lambda d, rng: _sum_full_samples(d, rng, **_prod_range(d)), ref=_prod_ref,
           tolerances=SUM_TOL, **_ALL),
    OpInfo("prod.dim_int", lambda d, rng: reduce_samples(d, rng, dims=(1, -1), **_prod_range(d)),
           ref=_prod_ref, tolerances=SUM_TOL, **_ALL),
    OpInfo("amax", _amax_samples, ref=_amax_ref(np.amax), errors=_amax_errors("amax"), **_ALL),
    OpInfo("amin", _amax_samples, ref=_amax_ref(np.amin), errors=_amax_errors("amin"), **_ALL),
    OpInfo("max", _max_full_samples, ref=np.amax, errors=_max_full_errors("max"), **_ALL),
    OpInfo("min", _max_full_samples, ref=np.amin, errors=_max_full_errors("min"), **_ALL),
    OpInfo("max.dim", _dim_index_samples, ref=_dim_index_ref(np.amax, np.argmax),
           errors=_dim_index_errors("max"), **_ALL),
    OpInfo("min.dim", _dim_index_samples, ref=_dim_index_ref(np.amin, np.argmin),
           errors=_dim_index_errors("min"), **_ALL),
    OpInfo("argmax", _arg_samples, ref=_arg_ref(np.argmax), dtypes=NO_BOOL, errors=_arg_errors("argmax")),
    OpInfo("argmin", _arg_samples, ref=_arg_ref(np.argmin), dtypes=NO_BOOL, errors=_arg_errors("argmin")),
] + STATS_OPS
