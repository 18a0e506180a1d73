"""OpInfos: where, clamp, lerp, addcmul, addcdiv, masked_fill (and their in-place forms)."""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ..opinfo import FLOATING, OpInfo, SampleInput, make_arg
from .pointwise_samples import (
    ALL_DTYPES,
    FLOAT_RESULT_TOL,
    NO_BOOL,
    error,
    inplace_variant,
    quiet_ref,
    scalars_for,
    tensor_of,
)

# ---------------------------------------------------------------------------- where


def _where_samples(dtype, rng):
    def c(shape, **kw):
        return make_arg(shape, dt.bool, rng=rng, **kw)

    def x(shape, **kw):
        return make_arg(shape, dtype, rng=rng, **kw)

    yield SampleInput((c((3, 4)), x((3, 4)), x((3, 4))), {}, "same shape")
    nc = {"noncontiguous": True}
    yield SampleInput((c((3, 4), **nc), x((3, 4), **nc), x((3, 4), **nc)), {}, "noncontiguous")
    yield SampleInput((c((2, 1, 4)), x((3, 1)), x((4,))), {}, "broadcast all")
    yield SampleInput((c(()), x(()), x(())), {}, "0-dim")
    yield SampleInput((c((5,)), x(()), x((5,))), {}, "0-dim self")
    yield SampleInput((c((0, 3)), x((3,)), x((0, 3))), {}, "zero-size")
    wide = dt.float64 if dtype.is_floating_point else dt.int64
    yield SampleInput((c((2, 3)), x((2, 3)), make_arg((), wide, rng=rng)), {}, "0-dim of another dtype")


def _where_scalar_other_samples(dtype, rng):
    for s in scalars_for(dtype):
        cond = make_arg((3, 4), dt.bool, rng=rng)
        yield SampleInput((cond, make_arg((3, 4), dtype, rng=rng), s), {}, "scalar")
        yield SampleInput((make_arg((2, 3), dt.bool, rng=rng, noncontiguous=True),
                           make_arg((3,), dtype, rng=rng), s), {}, "scalar broadcast")
    empty = make_arg((0,), dtype, rng=rng)
    yield SampleInput((make_arg((0,), dt.bool, rng=rng), empty, scalars_for(dtype)[0]), {}, "zero-size")


def _where_scalar_self_samples(dtype, rng):
    for sample in _where_scalar_other_samples(dtype, rng):
        cond, t, s = sample.args
        yield SampleInput((cond, s, t), {}, sample.name)


def _where_scalars_samples(dtype, rng):
    for a, b in ((1, 0), (1.5, -2), (True, False), (2, 0.5)):
        yield SampleInput((make_arg((3, 4), dt.bool, rng=rng), a, b), {}, "scalars")
        yield SampleInput((make_arg((), dt.bool, rng=rng), a, b), {}, "scalars 0-dim")


def _where_errors(rng):
    f = make_arg((3,), dt.float32, rng=rng)
    yield error((f, f, f), RuntimeError,
                "where expected condition to be a boolean tensor, but got a tensor with dtype Float")
    yield error((make_arg((3,), dt.bool, rng=rng), f, make_arg((2,), dt.float32, rng=rng)), RuntimeError,
                "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0")


where = OpInfo("where.self", _where_samples, ref=np.where, dtypes=ALL_DTYPES, errors=_where_errors)
where_scalar_other = OpInfo("where.ScalarOther", _where_scalar_other_samples, ref=np.where, dtypes=ALL_DTYPES)
where_scalar_self = OpInfo("where.ScalarSelf", _where_scalar_self_samples, ref=np.where, dtypes=ALL_DTYPES)
where_scalars = OpInfo("where.Scalar", _where_scalars_samples, ref=np.where, dtypes=(dt.float32,))

# ---------------------------------------------------------------------------- clamp


def _clamp_ref(a, min=None, max=None):  # noqa: A002 - torch's argument names
    r = a
    if min is not None:
        r = np.maximum(r, min)
    if max is not None:
        r = np.minimum(r, max)
    return r


def _clamp_samples(dtype, rng):
    lo, hi = (-2.5, 3.5) if dtype.is_floating_point else ((0, 5) if dtype is dt.uint8 else (-2, 4))
    for shape in ((3, 4), (), (0, 2)):
        yield SampleInput((make_arg(shape, dtype, rng=rng), lo, hi), {}, "min and max")
    yield SampleInput((make_arg((3, 4), dtype, rng=rng, noncontiguous=True),), {"min": lo}, "min only")
    yield SampleInput((make_arg((3, 4), dtype, rng=rng),), {"max": hi}, "max only")
    yield SampleInput((make_arg((3, 4), dtype, rng=rng), hi, lo), {}, "min > max gives max")
    if not dtype.is_floating_point:
        yield SampleInput((make_arg((3, 4), dtype, rng=rng), 1.5), {}, "float bound promotes")
    else:
        yield SampleInput((tensor_of([np.nan, -np.inf, np.inf, 1.0], dtype), -1.0, 2.0), {}, "nan and inf")


def _clamp_tensor_samples(dtype, rng):
    def x(shape, **kw):
        return make_arg(shape, dtype, rng=rng, **kw)

    low, high = ((0, 3), (4, 9)) if dtype is dt.uint8 else ((-5, 0), (1, 6))

    def lo(shape, **kw):
        return make_arg(shape, dtype, low=low[0], high=low[1], rng=rng, **kw)

    def hi(shape, **kw):
        return make_arg(shape, dtype, low=high[0], high=high[1], rng=rng, **kw)

    both = dtype is not dt.bool  # torch's clamp kernel has no bool form; one bound alone runs clamp_min / clamp_max
    if both:
        yield SampleInput((x((3, 4)), lo((3, 4)), hi((3, 4))), {}, "same shape")
    yield SampleInput((x((3, 4), noncontiguous=True), lo((3, 4), noncontiguous=True), None), {}, "min only")
    yield SampleInput((x((3, 1)), None, hi((2, 1, 4))), {}, "max broadcast")
    if both:
        yield SampleInput((x(()), lo(()), hi(())), {}, "0-dim")
    yield SampleInput((x((0, 3)), lo((3,)), None), {}, "zero-size")
    if both:
        yield SampleInput((x((3, 4)), hi((3, 4)), lo((4,))), {}, "min > max gives max")


def _clamp_errors(rng):
    f = make_arg((3,), dt.float32, rng=rng)
    b = make_arg((3,), dt.bool, rng=rng)
    yield error((f,), RuntimeError, "strided.clamp: At least one of 'min' or 'max' must not be None")
    # torch's CUDA names all three scalar forms "clamp_scalar_cuda"
    yield error((b, False, True), NotImplementedError, "\"clamp_scalar_(cpu|cuda)\" not implemented for 'Bool'",
                regex=True)
    yield error((b,), NotImplementedError, "\"clamp_(min_scalar_cpu|scalar_cuda)\" not implemented for 'Bool'",
                {"min": False}, regex=True)


def _clamp_tensor_errors(rng):
    b = make_arg((3,), dt.bool, rng=rng)
    yield error((b, b, b), NotImplementedError, "\"clamp_(cpu|cuda)\" not implemented for 'Bool'", regex=True)


clamp = OpInfo("clamp", _clamp_samples, ref=_clamp_ref, dtypes=NO_BOOL, tolerances=FLOAT_RESULT_TOL,
               errors=_clamp_errors)
clamp_tensor = OpInfo("clamp.Tensor", _clamp_tensor_samples, ref=_clamp_ref, dtypes=ALL_DTYPES,
                      errors=_clamp_tensor_errors)

# ---------------------------------------------------------------------------- lerp


def _lerp_ref(a, b, w):
    w = np.asarray(w, dtype=np.float64)
    return np.where(np.abs(w) < 0.5, a + w * (b - a), b - (b - a) * (1 - w))


def _lerp_samples(dtype, rng):
    def x(shape, **kw):
        return make_arg(shape, dtype, rng=rng, **kw)

    for w in (0.25, 0.75, -0.5, 1.5):
        yield SampleInput((x((3, 4)), x((3, 4)), w), {}, "weight")
    nc = {"noncontiguous": True}
    yield SampleInput((x((3, 4), **nc), x((3, 4), **nc), 0.3), {}, "noncontiguous")
    yield SampleInput((x((2, 1, 4)), x((3, 1)), 0.6), {}, "broadcast")
    yield SampleInput((x(()), x(()), 0.4), {}, "0-dim")
    yield SampleInput((x((0, 3)), x((3,)), 0.4), {}, "zero-size")


def _lerp_tensor_samples(dtype, rng):
    def x(shape, **kw):
        return make_arg(shape, dtype, rng=rng, **kw)

    def w(shape, d=dtype, **kw):
        return make_arg(shape, d, low=-0.5, high=1.5, rng=rng, **kw)

    yield SampleInput((x((3, 4)), x((3, 4)), w((3, 4))), {}, "same shape")
    yield SampleInput((x((3, 4), noncontiguous=True), x((3, 4)), w((3, 4), noncontiguous=True)), {},
                      "noncontiguous")
    yield SampleInput((x((2, 1, 4)), x((4,)), w((3, 1))), {}, "broadcast")
    yield SampleInput((x(()), x(()), w(())), {}, "0-dim")
    yield SampleInput((x((0, 3)), x((3,)), w(())), {}, "zero-size")
    yield SampleInput((x((2, 3)), x((2, 3)), w((), dt.float64)), {}, "0-dim weight of another dtype")


def _lerp_errors(rng):
    f = make_arg((3,), dt.float32, rng=rng)
    yield error((f, make_arg((3,), dt.float64, rng=rng), 0.5), RuntimeError,
                "expected dtype float for `end` but got dtype double")
    yield error((f, f, make_arg((3,), dt.float64, rng=rng)), RuntimeError,
                "expected dtype float for `weight` but got dtype double")
    i = make_arg((3,), dt.int64, rng=rng)
    yield error((i, i, 0.5), NotImplementedError, "\"lerp_kernel_scalar\" not implemented for 'Long'")
    yield error((i, i, i), NotImplementedError, "\"lerp_kernel_tensor\" not implemented for 'Long'")


lerp = OpInfo("lerp.Scalar", _lerp_samples, ref=_lerp_ref, dtypes=FLOATING, errors=_lerp_errors)
lerp_tensor = OpInfo("lerp.Tensor", _lerp_tensor_samples, ref=_lerp_ref, dtypes=FLOATING)

# ---------------------------------------------------------------------------- addcmul, addcdiv


def _addc_samples(divisor):
    def samples(dtype, rng):
        rhs = {"low": 0.5, "high": 4} if divisor else {}

        def x(shape, **kw):
            return make_arg(shape, dtype, rng=rng, **kw)

        def t2(shape, **kw):
            return make_arg(shape, dtype, rng=rng, **rhs, **kw)

        value = 0.5 if dtype.is_floating_point else 2
        yield SampleInput((x((3, 4)), x((3, 4)), t2((3, 4))), {}, "same shape")
        yield SampleInput((x((3, 4), noncontiguous=True), x((3, 4), noncontiguous=True), t2((3, 4))),
                          {"value": value}, "noncontiguous, value")
        negative = value if dtype is dt.uint8 else -value
        yield SampleInput((x((2, 1, 4)), x((3, 1)), t2((4,))), {"value": negative}, "broadcast")
        yield SampleInput((x(()), x(()), t2(())), {}, "0-dim")
        yield SampleInput((x((0, 3)), x((3,)), t2((3,))), {}, "zero-size")

    return samples


def _addcmul_ref(a, t1, t2, value=1):
    return a + value * t1 * t2


def _addcdiv_ref(a, t1, t2, value=1):
    return a + value * t1 / t2


_ADDCDIV_ERROR = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a "
    "true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + "
    "value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * "
    "tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: "
    "(input + value * tensor1 / tensor2), for all dtypes."
)


addcmul = OpInfo(
    "addcmul", _addc_samples(False), ref=_addcmul_ref, dtypes=NO_BOOL,
    errors=lambda rng: [error((make_arg((2,), dt.bool, rng=rng),) * 3, NotImplementedError,
                              "\"addcmul_cpu_out\" not implemented for 'Bool'")],
)
addcdiv = OpInfo(
    "addcdiv", _addc_samples(True), ref=quiet_ref(_addcdiv_ref), dtypes=FLOATING,
    errors=lambda rng: [error((make_arg((2,), dt.float32, rng=rng), make_arg((2,), dt.int64, rng=rng),
                               make_arg((2,), dt.int64, rng=rng)), RuntimeError, _ADDCDIV_ERROR)],
)

# ---------------------------------------------------------------------------- masked_fill


def _masked_fill_ref(a, mask, value):
    return np.where(mask, np.asarray(value).astype(np.asarray(a).dtype), a)


def _fill_value(dtype):
    return 2.5 if dtype.is_floating_point else (True if dtype is dt.bool else 7)


def _masked_fill_samples(tensor_value):
    def samples(dtype, rng):
        def m(shape, **kw):
            return make_arg(shape, dt.bool, rng=rng, **kw)

        def x(shape, **kw):
            return make_arg(shape, dtype, rng=rng, **kw)

        v = _fill_value(dtype)
        if tensor_value:
            values = (tensor_of(v, dtype), tensor_of(1.5, dt.float64))
        else:
            values = (v, 1.5) if dtype is not dt.bool else (v, 0)
        for value in values:
            yield SampleInput((x((3, 4)), m((3, 4)), value), {}, "same shape")
            yield SampleInput((x((3, 4), noncontiguous=True), m((4,)), value), {}, "mask broadcasts")
        yield SampleInput((x((4,)), m((3, 4), noncontiguous=True), values[0]), {}, "self broadcasts")
        yield SampleInput((x(()), m(()), values[0]), {}, "0-dim")
        yield SampleInput((x((0, 3)), m((3,)), values[0]), {}, "zero-size")

    return samples


def _masked_fill_errors(rng):
    f = make_arg((3,), dt.float32, rng=rng)
    yield error((f, make_arg((3,), dt.uint8, rng=rng), 1.0), RuntimeError,
                "masked_fill_ only supports boolean masks, but got mask with dtype unsigned char")
    yield error((f, make_arg((3,), dt.bool, rng=rng), tensor_of([1.0, 2.0], dt.float32)), RuntimeError,
                "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 "
                "dimension(s).")


masked_fill = OpInfo("masked_fill.Scalar", _masked_fill_samples(False), ref=_masked_fill_ref,
                     dtypes=ALL_DTYPES, errors=_masked_fill_errors)
masked_fill_tensor = OpInfo("masked_fill.Tensor", _masked_fill_samples(True), ref=_masked_fill_ref,
                            dtypes=ALL_DTYPES)

OPS: list = [
    where, where_scalar_other, where_scalar_self, where_scalars, clamp, clamp_tensor, lerp, lerp_tensor,
    addcmul, addcdiv, masked_fill, masked_fill_tensor,
    inplace_variant(clamp, "clamp_", "clamp_"), inplace_variant(lerp, "lerp_.Scalar", "lerp_"),
    inplace_variant(addcmul, "addcmul_", "addcmul_"), inplace_variant(addcdiv, "addcdiv_", "addcdiv_"),
    inplace_variant(masked_fill, "masked_fill_.Scalar", "masked_fill_"),
]
