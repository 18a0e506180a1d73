"""OpInfos: var/std, norm, all/any, logsumexp, cumsum, cumprod (gathered into ``reductions.OPS``)."""

from __future__ import annotations

import math

import numpy as np

from ... import dtypes as dt
from ..opinfo import ALL_DTYPES, OpInfo, SampleInput, make_arg
from .pointwise_samples import error, quiet_ref, tensor_of
from .reductions_samples import (
    FLOAT_RESULT_TOL,
    SUM_TOL,
    acc_dtype,
    axis_of,
    full_samples,
    other_dtypes,
    reduce_samples,
)

# ---------------------------------------------------------------------------- var, std, norm


def _var_samples(dtype, rng):
    def a(shape, **kw):
        return make_arg(shape, dtype, rng=rng, **kw)

    yield SampleInput((a((3, 4)),), {}, "all dims")
    yield SampleInput((a((2, 3, 4), noncontiguous=True), [0, 2]), {"keepdim": True}, "dims keepdim")
    yield SampleInput((a((2, 3, 4)), -1), {"correction": 0}, "correction 0")
    yield SampleInput((a((2, 3, 4)), 1), {"correction": 2}, "correction 2")
    yield SampleInput((a((3, 4)), None), {"correction": 0.5}, "fractional correction")
    yield SampleInput((a((3, 4)), []), {}, "dim []")
    yield SampleInput((a(()), None), {"correction": 0}, "0-dim")
    yield SampleInput((a((0, 3)), 1), {}, "zero-size")


def _var_dim_samples(dtype, rng):
    def a(shape, **kw):
        return make_arg(shape, dtype, rng=rng, **kw)

    yield SampleInput((a((3, 4)), 1), {}, "unbiased")
    yield SampleInput((a((2, 3, 4), noncontiguous=True), [0, 2], False, True), {}, "biased keepdim")
    yield SampleInput((a((2, 3, 4)), None, True), {}, "all dims")
    yield SampleInput((a((0, 3)), 1), {}, "zero-size")


def _var_unbiased_samples(dtype, rng):
    def a(shape, **kw):
        return make_arg(shape, dtype, rng=rng, **kw)

    yield SampleInput((a((3, 4)),), {}, "default unbiased")
    yield SampleInput((a((2, 3, 4), noncontiguous=True), False), {}, "biased, positional")
    yield SampleInput((a((3, 4)),), {"unbiased": False}, "unbiased=False keyword")
    yield SampleInput((a(()),), {"unbiased": False}, "0-dim")


def _var_unbiased_ref(a, unbiased=True):
    return _var_ref(a, None, correction=int(unbiased))


def _std_unbiased_ref(a, unbiased=True):
    return np.sqrt(_var_unbiased_ref(a, unbiased))


@quiet_ref
def _var_ref(a, dim=None, *, correction=None, keepdim=False):
    c = 1 if correction is None else correction
    return np.var(np.asarray(a, dtype=np.float64), axis=axis_of(a, dim), ddof=c, keepdims=keepdim)


def _var_dim_ref(a, dim, unbiased=True, keepdim=False):
    return _var_ref(a, dim, correction=int(unbiased), keepdim=keepdim)


def _var_errors(rng):
    yield error((make_arg((2, 3), dt.int64, rng=rng),), RuntimeError,
                "std and var only support floating point and complex dtypes")


def _var_dim_errors(rng):
    yield error((make_arg((2, 3), dt.int64, rng=rng), 1), RuntimeError,
                "std and var only support floating point and complex dtypes")
    yield error((make_arg((2, 3), dt.float32, rng=rng), 2), IndexError,
                "Dimension out of range (expected to be in range of [-2, 1], but got 2)")


_NORM_PS = (2, 1, 0, 3, -1, 0.5, math.inf, -math.inf)


def _norm_samples(dtype, rng):
    x, xn = make_arg((2, 3, 4), dtype, rng=rng), make_arg((2, 3, 4), dtype, rng=rng, noncontiguous=True)
    for p in _NORM_PS:
        yield SampleInput((x, p, [1]), {}, f"p={p}")
    yield SampleInput((xn, 2, [0, 2], True), {}, "noncontiguous keepdim")
    yield SampleInput((x, None, []), {}, "p=None all dims")
    yield SampleInput((make_arg((), dtype, rng=rng), 1, 0), {}, "0-dim")
    yield SampleInput((make_arg((0, 3), dtype, rng=rng), math.inf, [1]), {}, "zero-size, non-empty dim")
    yield SampleInput((make_arg((0, 3), dtype, rng=rng), 2, [0]), {}, "zero-size, empty dim")


def _norm_full_samples(dtype, rng):
    for p in _NORM_PS:
        yield SampleInput((make_arg((3, 4), dtype, rng=rng), p), {}, f"p={p}")
    yield SampleInput((make_arg((2, 3, 4), dtype, rng=rng, noncontiguous=True),), {}, "noncontiguous")
    yield SampleInput((make_arg((), dtype, rng=rng),), {}, "0-dim")
    yield SampleInput((make_arg((0, 3), dtype, rng=rng),), {}, "zero-size")


@quiet_ref
def _norm_ref(a, p=2, dim=None, keepdim=False):
    x = np.abs(np.asarray(a, dtype=np.float64))
    p = 2.0 if p is None else p
    axis = axis_of(a, dim)
    if p == math.inf:
        return np.amax(x, axis=axis, keepdims=keepdim)
    if p == -math.inf:
        return np.amin(x, axis=axis, keepdims=keepdim)
    if p == 0:
        return np.sum(x != 0, axis=axis, keepdims=keepdim).astype(np.float64)
    return np.sum(x ** p, axis=axis, keepdims=keepdim) ** (1.0 / p)


def _norm_errors(rng):
    e = make_arg((0, 3), dt.float32, rng=rng)
    yield error((make_arg((2, 3), dt.int64, rng=rng), 2, [0]), RuntimeError,
                "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long")
    yield error((e, math.inf, [0]), RuntimeError, "linalg.vector_norm cannot compute the inf norm on the "
                "dimension 0because this dimension is empty and the operation does not have an identity")
    yield error((e, -1, []), RuntimeError, "linalg.vector_norm cannot compute the -1 norm on an empty tensor "
                "because the operation does not have an identity")


# ---------------------------------------------------------------------------- all, any, logsumexp, cumsum


def _logical_dim_samples(dtype, rng):
    def a(shape, **kw):
        return make_arg(shape, dtype, rng=rng, low=0, high=2, **kw)

    yield SampleInput((a((3, 4)), 1), {}, "2-d")
    yield SampleInput((a((2, 3, 4), noncontiguous=True), -3, True), {}, "noncontiguous keepdim")
    yield SampleInput((a(()), 0), {}, "0-dim")
    yield SampleInput((a((0, 3)), 0), {}, "zero-size, empty dim")
    yield SampleInput((a((0, 3)), 1, True), {}, "zero-size, non-empty dim")


def _logical_dims_samples(dtype, rng):
    def a(shape, **kw):
        return make_arg(shape, dtype, rng=rng, low=0, high=2, **kw)

    yield SampleInput((a((3, 4)), (0, 1)), {}, "both dims")
    yield SampleInput((a((2, 3, 4), noncontiguous=True), (-1, 0), True), {}, "noncontiguous keepdim")
    yield SampleInput((a((3, 4)), ()), {}, "no dims: each element's truth")
    yield SampleInput((a((3, 4)), None, True), {}, "None keepdim: every element")
    yield SampleInput((a(()), (0,)), {}, "0-dim")
    yield SampleInput((a((0, 3)), (0,)), {}, "zero-size, empty dim")
    yield SampleInput((a((0, 3)), (1,), True), {}, "zero-size, non-empty dim")


def _logical_dims_ref(fn):
    def ref(a, dim=None, keepdim=False):
        a = np.asarray(a)
        if dim is not None and len(dim) == 0:
            r = a != 0  # nothing reduced
        else:
            r = fn(a, axis=None if dim is None or a.ndim == 0 else tuple(d % a.ndim for d in dim), keepdims=keepdim)
        return r.astype(np.uint8) if a.dtype == np.uint8 else r
    return ref


def _logical_ref(fn):
    def ref(a, dim=None, keepdim=False):
        r = fn(np.asarray(a), axis=axis_of(a, dim), keepdims=keepdim)
        return r.astype(np.uint8) if np.asarray(a).dtype == np.uint8 else r
    return ref


@quiet_ref
def _logsumexp_ref(a, dim, keepdim=False):
    x = np.asarray(a, dtype=np.float64)
    axis = axis_of(a, dim)
    if x.size == 0:
        return np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdim))
    m = np.amax(x, axis=axis, keepdims=True)
    m = np.where(np.isinf(m), 0.0, m)
    s = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return s if keepdim else (np.squeeze(s, axis) if axis is not None else s.reshape(()))


def _logsumexp_samples(dtype, rng):
    yield from reduce_samples(dtype, rng, dims=(1, -1, (0, 2)))
    if dtype.is_floating_point:
        yield SampleInput((tensor_of([[-math.inf, -math.inf], [math.inf, math.inf], [math.inf, 1.0],
                                      [math.nan, 1.0]], dtype), 1), {}, "infinities")
        big = make_arg((3, 4), dtype, rng=rng, low=60, high=80)
        yield SampleInput((big, 1), {}, "large values (stable)")


def _cumsum_samples(dtype, rng):
    def a(shape, **kw):
        return make_arg(shape, dtype, rng=rng, **kw)

    yield SampleInput((a((3, 4)), 1), {}, "2-d")
    yield SampleInput((a((2, 3, 4), noncontiguous=True), -3), {}, "noncontiguous")
    yield SampleInput((a(()), 0), {}, "0-dim")
    yield SampleInput((a((0, 3)), 0), {}, "zero-size")
    for od in other_dtypes(dtype):
        yield SampleInput((a((3, 4)), 0), {"dtype": od}, f"dtype={od}")


def _cumsum_ref(a, dim, *, dtype=None):
    acc = acc_dtype(a, dtype)
    a = np.asarray(a).astype(acc)
    return a if a.ndim == 0 else np.cumsum(a, axis=dim, dtype=acc)


def _cumprod_samples(dtype, rng):
    def a(shape, **kw):  # values near 1 keep the products in range for every dtype
        return make_arg(shape, dtype, rng=rng, low=0.5 if dtype.is_floating_point else 1,
                        high=1.5 if dtype.is_floating_point else 3, **kw)

    yield SampleInput((a((3, 4)), 1), {}, "2-d")
    yield SampleInput((a((2, 3, 4), noncontiguous=True), -3), {}, "noncontiguous")
    yield SampleInput((a((3, 300)), 1), {}, "long rows (the CUDA block scan)")
    with_zeros = a((3, 5))
    with_zeros[0, 1] = 0  # one zero, two zeros, zeros at the start: Note [cumprod gradient]
    with_zeros[1, 1] = with_zeros[1, 3] = 0
    with_zeros[2, 0] = 0
    yield SampleInput((with_zeros, 1), {}, "zeros")
    yield SampleInput((a(()), 0), {}, "0-dim")
    yield SampleInput((a((0, 3)), 0), {}, "zero-size")
    for od in other_dtypes(dtype):
        yield SampleInput((a((3, 4)), 0), {"dtype": od}, f"dtype={od}")


def _cumprod_ref(a, dim, *, dtype=None):
    acc = acc_dtype(a, dtype)
    a = np.asarray(a).astype(acc)
    return a if a.ndim == 0 else np.cumprod(a, axis=dim, dtype=acc)


def _logcumsumexp_samples(dtype, rng):
    def a(shape, **kw):
        return make_arg(shape, dtype, rng=rng, **kw)

    yield SampleInput((a((3, 4)), 1), {}, "2-d")
    yield SampleInput((a((2, 3, 4), noncontiguous=True), -3), {}, "noncontiguous")
    yield SampleInput((a(()), 0), {}, "0-dim")
    yield SampleInput((a((0, 3)), 0), {}, "zero-size")
    yield SampleInput((a((2, 300)), 1), {}, "long rows (the CUDA block scan)")
    big = a((2, 5), low=-3, high=3)
    big[0, 2] = 80.0 if dtype in (dt.float16,) else 500.0  # exp would overflow; the scan does not
    yield SampleInput((big, 1), {}, "large values")
    special = tensor_of(np.array([[-np.inf, -np.inf, 1.0, np.inf, 2.0], [np.nan, 1.0, -np.inf, 0.5, np.inf]]),
                        dtype)
    yield SampleInput((special, 1), {}, "-inf, inf, nan")


def _logcumsumexp_ref(a, dim):
    a = np.asarray(a, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        return a if a.ndim == 0 else np.logaddexp.accumulate(a, axis=dim)


def _logcumsumexp_errors(rng):
    yield error((make_arg((2, 3), dt.int64, rng=rng), 0), NotImplementedError,
                "\"logcumsumexp_out_cpu\" not implemented for 'Long'")
    yield error((make_arg((2, 3), dt.float32, rng=rng), 2), IndexError,
                "Dimension out of range (expected to be in range of [-2, 1], but got 2)")


def _cummaxmin_samples(dtype, rng):
    def a(shape, **kw):
        return make_arg(shape, dtype, rng=rng, **kw)

    def tied(shape):  # few distinct values: ties everywhere (the latest index wins)
        return tensor_of(rng.integers(0, 4, size=shape), dtype)

    yield SampleInput((tied((3, 6)), 1), {}, "ties")
    yield SampleInput((a((2, 3, 4), noncontiguous=True), -3), {}, "noncontiguous")
    yield SampleInput((a(()), 0), {}, "0-dim")
    yield SampleInput((a((0, 3)), 0), {}, "zero-size")
    yield SampleInput((tied((2, 300)), 1), {}, "long rows (the CUDA block scan)")
    yield SampleInput((tied((1, 2500)), 1), {}, "rows over one block chunk (the carry)")
    yield SampleInput((tied((40, 3)), 0), {}, "a strided dim")
    if dtype.is_floating_point:
        special = tensor_of(np.array([[1.0, np.nan, 3.0, np.nan, 5.0], [-np.inf, 2.0, np.inf, np.inf, 1.0]]),
                            dtype)
        yield SampleInput((special, 1), {}, "nan, inf")


def _cummaxmin_ref(is_min):
    def ref(a, dim):
        a = np.asarray(a)
        if a.ndim == 0:
            return a, np.array(0)
        x = np.moveaxis(a, dim, -1)
        values, indices = np.empty_like(x), np.empty(x.shape, np.int64)
        floating = x.dtype.kind == "f"
        for line in np.ndindex(x.shape[:-1]):
            cur, at = None, -1
            for e, val in enumerate(x[line]):
                if at < 0 or (floating and np.isnan(val)):
                    take = True
                elif floating and np.isnan(cur):
                    take = False
                else:
                    take = val <= cur if is_min else val >= cur
                if take:
                    cur, at = val, e
                values[line + (e,)], indices[line + (e,)] = cur, at
        return np.moveaxis(values, -1, dim), np.moveaxis(indices, -1, dim)
    return ref


def _cumsum_errors(rng):
    yield error((make_arg((2, 3), dt.float32, rng=rng), -3), IndexError,
                "Dimension out of range (expected to be in range of [-2, 1], but got -3)")


_ALL = {"dtypes": ALL_DTYPES}


def _logical_full_samples(dtype, rng):
    return full_samples(dtype, rng, low=0, high=2)


def _std_ref(*args, **kwargs):
    return np.sqrt(_var_ref(*args, **kwargs))


def _std_dim_ref(*args, **kwargs):
    return np.sqrt(_var_dim_ref(*args, **kwargs))


OPS = [
    OpInfo("var.correction", _var_samples, ref=_var_ref, errors=_var_errors),
    OpInfo("std.correction", _var_samples, ref=_std_ref, errors=_var_errors),
    OpInfo("var.dim", _var_dim_samples, ref=_var_dim_ref, errors=_var_dim_errors),
    OpInfo("std.dim", _var_dim_samples, ref=_std_dim_ref, errors=_var_dim_errors),
    OpInfo("var.unbiased", _var_unbiased_samples, ref=_var_unbiased_ref, errors=_var_errors),
    OpInfo("std.unbiased", _var_unbiased_samples, ref=_std_unbiased_ref, errors=_var_errors),
    OpInfo("norm.ScalarOpt_dim", _norm_samples, ref=_norm_ref, errors=_norm_errors),
    OpInfo("norm.Scalar", _norm_full_samples, ref=_norm_ref),
    OpInfo("all", _logical_full_samples, ref=_logical_ref(np.all), **_ALL),
    OpInfo("all.dim", _logical_dim_samples, ref=_logical_ref(np.all), **_ALL),
    OpInfo("any", _logical_full_samples, ref=_logical_ref(np.any), **_ALL),
    OpInfo("any.dim", _logical_dim_samples, ref=_logical_ref(np.any), **_ALL),
    OpInfo("all.dims", _logical_dims_samples, ref=_logical_dims_ref(np.all), **_ALL),
    OpInfo("any.dims", _logical_dims_samples, ref=_logical_dims_ref(np.any), **_ALL),
    OpInfo("logsumexp", _logsumexp_samples, ref=_logsumexp_ref, tolerances=FLOAT_RESULT_TOL, **_ALL),
    OpInfo("cumsum", _cumsum_samples, ref=_cumsum_ref, tolerances=SUM_TOL, errors=_cumsum_errors, **_ALL),
    OpInfo("cumprod", _cumprod_samples, ref=_cumprod_ref, tolerances=SUM_TOL, errors=_cumsum_errors, **_ALL),
    OpInfo("logcumsumexp", _logcumsumexp_samples, ref=_logcumsumexp_ref, errors=_logcumsumexp_errors),
    OpInfo("cummax", _cummaxmin_samples, ref=_cummaxmin_ref(False), errors=_cumsum_errors, **_ALL),
    OpInfo("cummin", _cummaxmin_samples, ref=_cummaxmin_ref(True), errors=_cumsum_errors, **_ALL),
]
