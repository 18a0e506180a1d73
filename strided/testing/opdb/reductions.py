"""OpInfos: reductions (sum, mean, prod, amax/amin, max/min, argmax/argmin, var/std, norm, all/any,
logsumexp, cumsum).

Samples reduce a contiguous and a non-contiguous 3-d tensor over single, negative, multiple and
all dims (``None`` and ``[]``), with and without keepdim, a 0-dim tensor, and zero-size tensors
(reducing a non-empty dim of an empty tensor; reducing the empty dim where the op has an identity).
"""

from __future__ import annotations

import math

import numpy as np

from ... import dtypes as dt
from ..opinfo import ALL_DTYPES, FLOATING, INTEGRAL, TOLERANCES, OpInfo, SampleInput, make_arg
from .pointwise_samples import error, quiet_ref, tensor_of

NO_BOOL = FLOATING + INTEGRAL
# Results computed in the default float dtype from integral inputs compare like float32.
FLOAT_RESULT_TOL = {d: TOLERANCES[dt.float32] for d in INTEGRAL + (dt.bool,)}
# Sums of a dozen values rounded once to a half type.
SUM_TOL = {dt.float16: (2e-3, 2e-2), dt.bfloat16: (1.6e-2, 1e-1)}


def _axis(a, dim):
    """NumPy axis for a reduction ``dim`` (None / [] = all; a 0-dim array has no axes)."""
    a = np.asarray(a)
    if dim is None or a.ndim == 0 or (not isinstance(dim, int) and len(dim) == 0):
        return None
    return (dim % a.ndim,) if isinstance(dim, int) else tuple(d % a.ndim for d in dim)


def _acc_dtype(a, dtype):
    """NumPy dtype of sum/prod/cumsum results (``dtype=`` or int64 for integral/bool inputs)."""
    if dtype is not None:
        return np.float64 if dtype.is_floating_point else dtype.numpy_dtype
    return np.float64 if np.asarray(a).dtype.kind == "f" else np.int64


def _reduce_samples(dtype, rng, *, dims=(1, -1, (0, 2), None, ()), low=None, high=None, empty_dim=True,
                    keepdim=True, extra=None):
    """(self, dim, keepdim) samples over several layouts and dims."""
    extra = extra or {}

    def a(shape, **kw):
        return make_arg(shape, dtype, low=low, high=high, rng=rng, **kw)

    x, xn = a((2, 3, 4)), a((2, 3, 4), noncontiguous=True)
    for d in dims:
        dim = list(d) if isinstance(d, tuple) else d
        yield SampleInput((x, dim), dict(extra), f"dim={dim}")
        if keepdim:
            yield SampleInput((xn, dim, True), dict(extra), f"dim={dim} keepdim noncontiguous")
    yield SampleInput((a(()), 0), dict(extra), "0-dim")
    yield SampleInput((a(()), -1, keepdim), dict(extra), "0-dim keepdim")
    yield SampleInput((a((0, 3)), 1), dict(extra), "zero-size, non-empty dim")
    if empty_dim:
        yield SampleInput((a((0, 3)), 0, keepdim), dict(extra), "zero-size, empty dim")


def _full_samples(dtype, rng, *, low=None, high=None, empty=True, extra=None):
    """(self,) samples: contiguous, non-contiguous, 0-dim and (if the op allows) empty."""
    extra = extra or {}

    def a(shape, **kw):
        return make_arg(shape, dtype, low=low, high=high, rng=rng, **kw)

    yield SampleInput((a((3, 4)),), dict(extra), "2-d")
    yield SampleInput((a((2, 3, 4), noncontiguous=True),), dict(extra), "noncontiguous")
    yield SampleInput((a(()),), dict(extra), "0-dim")
    if empty:
        yield SampleInput((a((0, 3)),), dict(extra), "zero-size")


def _special(dtype):
    return tensor_of([[1.0, math.nan, 3.0], [2.0, 0.0, -math.inf], [5.0, math.inf, 5.0]], dtype)


# ---------------------------------------------------------------------------- sum, mean, prod


def _other_dtypes(dtype):
    return (dt.float64, dt.int64) if dtype.is_floating_point else (dt.float32, dt.int32)


def _sum_full_samples(dtype, rng, low=None, high=None):
    yield from _full_samples(dtype, rng, low=low, high=high)
    for od in _other_dtypes(dtype):
        yield SampleInput((make_arg((3, 4), dtype, low=low, high=high, rng=rng),), {"dtype": od},
                          f"dtype={od}")


def _sum_dim_samples(dtype, rng, low=None, high=None):
    yield from _reduce_samples(dtype, rng, low=low, high=high)
    for od in _other_dtypes(dtype):
        yield SampleInput((make_arg((2, 3, 4), dtype, low=low, high=high, rng=rng), [0, 2], False),
                          {"dtype": od}, f"dtype={od}")


def _sum_ref(a, dim=None, keepdim=False, *, dtype=None):
    acc = _acc_dtype(a, dtype)
    return np.sum(np.asarray(a).astype(acc), axis=_axis(a, dim), keepdims=keepdim, dtype=acc)


def _prod_ref(a, dim=None, keepdim=False, *, dtype=None):
    acc = _acc_dtype(a, dtype)
    return np.prod(np.asarray(a).astype(acc), axis=_axis(a, dim), keepdims=keepdim, dtype=acc)


def _mean_full_samples(dtype, rng):
    yield from _full_samples(dtype, rng)
    yield SampleInput((make_arg((3, 4), dtype, rng=rng),), {"dtype": dt.float64}, "dtype=float64")
    yield SampleInput((make_arg((3, 4), dt.int64, rng=rng),), {"dtype": dtype}, "integral input, dtype=")


def _mean_dim_samples(dtype, rng):
    yield from _reduce_samples(dtype, rng)
    yield SampleInput((make_arg((3, 4), dt.int32, rng=rng), 1, True), {"dtype": dtype},
                      "integral input, dtype=")


@quiet_ref
def _mean_ref(a, dim=None, keepdim=False, *, dtype=None):
    a = np.asarray(a, dtype=np.float64)
    total = np.sum(a, axis=_axis(a, dim), keepdims=keepdim)
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
    yield from _reduce_samples(dtype, rng, empty_dim=False)
    if dtype.is_floating_point:
        yield SampleInput((_special(dtype), 1), {}, "nan and inf")
        yield SampleInput((_special(dtype), []), {}, "nan and inf, all dims")


def _amax_ref(fn):
    def ref(a, dim=(), keepdim=False):
        return fn(a, axis=_axis(a, dim), keepdims=keepdim)
    return ref


def _amax_errors(name):
    def errors(rng):
        e = make_arg((0, 3), dt.float32, rng=rng)
        yield error((e,), RuntimeError, f"{name}(): Expected reduction dim to be specified for "
                    "input.numel() == 0. Specify the reduction dim with the 'dim' argument.")
        yield error((e, -2), IndexError, f"{name}(): Expected reduction dim -2 to have non-zero size.")
    return errors


def _max_full_samples(dtype, rng):
    yield from _full_samples(dtype, rng, empty=False)
    if dtype.is_floating_point:
        yield SampleInput((_special(dtype),), {}, "nan and inf")


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
        yield SampleInput((_special(dtype), 1), {}, "nan and inf")
        yield SampleInput((_special(dtype), 0), {}, "nan and inf, dim 0")


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


@quiet_ref
def _var_ref(a, dim=None, *, correction=None, keepdim=False):
    c = 1 if correction is None else correction
    return np.var(np.asarray(a, dtype=np.float64), axis=_axis(a, dim), ddof=c, keepdims=keepdim)


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
    axis = _axis(a, dim)
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


def _logical_ref(fn):
    def ref(a, dim=None, keepdim=False):
        r = fn(np.asarray(a), axis=_axis(a, dim), keepdims=keepdim)
        return r.astype(np.uint8) if np.asarray(a).dtype == np.uint8 else r
    return ref


@quiet_ref
def _logsumexp_ref(a, dim, keepdim=False):
    x = np.asarray(a, dtype=np.float64)
    axis = _axis(a, dim)
    if x.size == 0:
        return np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdim))
    m = np.amax(x, axis=axis, keepdims=True)
    m = np.where(np.isinf(m), 0.0, m)
    s = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return s if keepdim else (np.squeeze(s, axis) if axis is not None else s.reshape(()))


def _logsumexp_samples(dtype, rng):
    yield from _reduce_samples(dtype, rng, dims=(1, -1, (0, 2)))
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
    for od in _other_dtypes(dtype):
        yield SampleInput((a((3, 4)), 0), {"dtype": od}, f"dtype={od}")


def _cumsum_ref(a, dim, *, dtype=None):
    acc = _acc_dtype(a, dtype)
    a = np.asarray(a).astype(acc)
    return a if a.ndim == 0 else np.cumsum(a, axis=dim, dtype=acc)


def _cumsum_errors(rng):
    yield error((make_arg((2, 3), dt.float32, rng=rng), -3), IndexError,
                "Dimension out of range (expected to be in range of [-2, 1], but got -3)")


_ALL = {"dtypes": ALL_DTYPES}


def _logical_full_samples(dtype, rng):
    return _full_samples(dtype, rng, low=0, high=2)


def _std_ref(*args, **kwargs):
    return np.sqrt(_var_ref(*args, **kwargs))


def _std_dim_ref(*args, **kwargs):
    return np.sqrt(_var_dim_ref(*args, **kwargs))


OPS = [
    OpInfo("sum", _sum_full_samples, ref=_sum_ref, tolerances=SUM_TOL, **_ALL),
    OpInfo("sum.dim_IntList", _sum_dim_samples, ref=_sum_ref, tolerances=SUM_TOL, errors=_dim_errors, **_ALL),
    OpInfo("mean", _mean_full_samples, ref=_mean_ref, errors=_mean_errors),
    OpInfo("mean.dim", _mean_dim_samples, ref=_mean_ref, errors=_dim_errors),
    OpInfo("prod", lambda d, rng: _sum_full_samples(d, rng, **_prod_range(d)), ref=_prod_ref,
           tolerances=SUM_TOL, **_ALL),
    OpInfo("prod.dim_int", lambda d, rng: _reduce_samples(d, rng, dims=(1, -1), **_prod_range(d)),
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
    OpInfo("var.correction", _var_samples, ref=_var_ref, errors=_var_errors),
    OpInfo("std.correction", _var_samples, ref=_std_ref, errors=_var_errors),
    OpInfo("var.dim", _var_dim_samples, ref=_var_dim_ref, errors=_var_dim_errors),
    OpInfo("std.dim", _var_dim_samples, ref=_std_dim_ref, errors=_var_dim_errors),
    OpInfo("norm.ScalarOpt_dim", _norm_samples, ref=_norm_ref, errors=_norm_errors),
    OpInfo("norm.Scalar", _norm_full_samples, ref=_norm_ref),
    OpInfo("all", _logical_full_samples, ref=_logical_ref(np.all), **_ALL),
    OpInfo("all.dim", _logical_dim_samples, ref=_logical_ref(np.all), **_ALL),
    OpInfo("any", _logical_full_samples, ref=_logical_ref(np.any), **_ALL),
    OpInfo("any.dim", _logical_dim_samples, ref=_logical_ref(np.any), **_ALL),
    OpInfo("logsumexp", _logsumexp_samples, ref=_logsumexp_ref, tolerances=FLOAT_RESULT_TOL, **_ALL),
    OpInfo("cumsum", _cumsum_samples, ref=_cumsum_ref, tolerances=SUM_TOL, errors=_cumsum_errors, **_ALL),
]
