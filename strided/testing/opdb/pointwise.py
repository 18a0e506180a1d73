"""OpInfos: pointwise binary ops (this module also gathers the ternary and unary ones into OPS)."""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ..opinfo import FLOATING, OpInfo, SampleInput, make_arg
from .pointwise_samples import (
    ALL_DTYPES,
    FLOAT_RESULT_TOL,
    NO_BOOL,
    SIGNED,
    binary_samples,
    error,
    inplace_variant,
    out_variant,
    quiet_ref,
    scalar_samples,
    scalars_for,
    tensor_of,
    unary_samples,
)
from .pointwise_ternary import OPS as TERNARY_OPS
from .pointwise_unary import OPS as UNARY_OPS

# ---------------------------------------------------------------------------- add, sub, mul


def _alpha_for(dtype):
    return 2.5 if dtype.is_floating_point else (True if dtype is dt.bool else 3)


def _alpha_samples(dtype, rng):
    yield from binary_samples(dtype, rng)
    yield from binary_samples(dtype, rng, kwargs={"alpha": _alpha_for(dtype)})


def _alpha_scalar_samples(dtype, rng):
    yield from scalar_samples(dtype, rng, scalars_for(dtype))
    for s in scalars_for(dtype):
        yield SampleInput((make_arg((2, 3), dtype, rng=rng), s, _alpha_for(dtype)), {}, "alpha")


def _add_ref(a, b, alpha=1):
    if np.asarray(a).dtype == bool and np.asarray(b).dtype == bool:
        return np.logical_or(a, np.logical_and(b, bool(alpha)))
    return a + alpha * b


def _sub_ref(a, b, alpha=1):
    return a - alpha * b


def _binary_errors(name):
    def errors(rng):
        f = make_arg((3,), dt.float32, rng=rng)
        i = make_arg((3,), dt.int64, rng=rng)
        yield error((f, make_arg((4,), dt.float32, rng=rng)), RuntimeError,
                    "The size of tensor a (3) must match the size of tensor b (4) at non-singleton "
                    "dimension 0")
        if name in ("add", "sub"):
            yield error((i, i), RuntimeError,
                        "For integral input tensors, argument alpha must not be a floating point number.",
                        {"alpha": 2.5})
            yield error((f, f), RuntimeError, "Boolean alpha only supported for Boolean results.",
                        {"alpha": True})
        if name == "sub":
            b = make_arg((3,), dt.bool, rng=rng)
            yield error((b, b), RuntimeError,
                        "Subtraction, the `-` operator, with two bool tensors is not supported. "
                        "Use the `^` or `logical_xor()` operator instead.")
            yield error((i, b), RuntimeError,
                        "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
                        "trying to invert a mask, use the `~` or `logical_not()` operator instead.")

    return errors


add = OpInfo("add.Tensor", _alpha_samples, ref=_add_ref, dtypes=ALL_DTYPES, errors=_binary_errors("add"))
add_scalar = OpInfo("add.Scalar", _alpha_scalar_samples, ref=_add_ref, dtypes=ALL_DTYPES)
sub = OpInfo("sub.Tensor", _alpha_samples, ref=_sub_ref, dtypes=NO_BOOL, errors=_binary_errors("sub"))
sub_scalar = OpInfo("sub.Scalar", _alpha_scalar_samples, ref=_sub_ref, dtypes=NO_BOOL)
mul = OpInfo("mul.Tensor", binary_samples, ref=lambda a, b: a * b, dtypes=ALL_DTYPES,
             errors=_binary_errors("mul"))
mul_scalar = OpInfo("mul.Scalar", lambda d, rng: scalar_samples(d, rng, scalars_for(d)),
                    ref=lambda a, b: a * b, dtypes=ALL_DTYPES)

# ---------------------------------------------------------------------------- division


def _divisor_range(dtype):
    return {"low": 1, "high": 6} if dtype.category == dt.INTEGRAL else {}


def _div_samples(modes):
    def samples(dtype, rng):
        for mode in modes:
            kwargs = {} if mode == "default" else {"rounding_mode": mode}
            if dtype is dt.bool and mode not in ("default", None):
                continue
            yield from binary_samples(dtype, rng, rhs=_divisor_range(dtype), kwargs=kwargs)
            if dtype in SIGNED and not dtype.is_floating_point:  # negative divisors: trunc vs floor
                args = (make_arg((3, 4), dtype, rng=rng), make_arg((3, 4), dtype, low=-6, high=0, rng=rng))
                yield SampleInput(args, dict(kwargs), "negative divisors")

    return samples


def _div_scalar_samples(modes):
    def samples(dtype, rng):
        for mode in modes:
            kwargs = {} if mode == "default" else {"rounding_mode": mode}
            if dtype is dt.bool and mode not in ("default", None):
                continue
            yield from scalar_samples(dtype, rng, scalars_for(dtype), kwargs=kwargs)

    return samples


def _div_ref(a, b, rounding_mode=None):
    if rounding_mode is None:
        return np.true_divide(a, b)
    if rounding_mode == "floor":
        return np.floor_divide(a, b)
    q = np.trunc(np.true_divide(a, b))
    return q if np.result_type(a, b).kind == "f" else q.astype(np.int64)


def _div_errors(rng):
    f = make_arg((3,), dt.float32, rng=rng)
    b = make_arg((3,), dt.bool, rng=rng)
    yield error((f, f), RuntimeError,
                "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'round'",
                {"rounding_mode": "round"})
    yield error((b, b), NotImplementedError, "\"div_floor_cpu\" not implemented for 'Bool'",
                {"rounding_mode": "floor"})
    yield error((b, b), NotImplementedError, "\"div_trunc_cpu\" not implemented for 'Bool'",
                {"rounding_mode": "trunc"})


_div_ref = quiet_ref(_div_ref)
_MODES = (None, "trunc", "floor")
div = OpInfo("div.Tensor", _div_samples(("default",)), ref=_div_ref, dtypes=ALL_DTYPES,
             tolerances=FLOAT_RESULT_TOL)
div_scalar = OpInfo("div.Scalar", _div_scalar_samples(("default",)), ref=_div_ref, dtypes=ALL_DTYPES,
                    tolerances=FLOAT_RESULT_TOL)
div_mode = OpInfo("div.Tensor_mode", _div_samples(_MODES), ref=_div_ref, dtypes=ALL_DTYPES,
                  tolerances=FLOAT_RESULT_TOL, errors=_div_errors)
div_scalar_mode = OpInfo("div.Scalar_mode", _div_scalar_samples(_MODES), ref=_div_ref, dtypes=ALL_DTYPES,
                         tolerances=FLOAT_RESULT_TOL)
_DEFAULT = ("default",)
floor_divide = OpInfo("floor_divide", _div_samples(_DEFAULT), ref=quiet_ref(np.floor_divide), dtypes=NO_BOOL)
floor_divide_scalar = OpInfo("floor_divide.Scalar", _div_scalar_samples(_DEFAULT),
                             ref=quiet_ref(np.floor_divide), dtypes=NO_BOOL)
remainder = OpInfo(
    "remainder.Tensor", _div_samples(("default",)), ref=quiet_ref(np.remainder), dtypes=NO_BOOL,
    errors=lambda rng: [error((make_arg((2,), dt.bool, rng=rng),) * 2, NotImplementedError,
                              "\"remainder_cpu\" not implemented for 'Bool'")],
)
remainder_scalar = OpInfo("remainder.Scalar", _div_scalar_samples(("default",)), ref=quiet_ref(np.remainder),
                          dtypes=NO_BOOL)


def _scalar_dividend_samples(dtype, rng):
    divisors = _divisor_range(dtype)
    for s in scalars_for(dtype):
        yield SampleInput((s, make_arg((3, 4), dtype, rng=rng, **divisors)), {}, "scalar dividend")
        yield SampleInput((s, make_arg((3, 4), dtype, rng=rng, noncontiguous=True, **divisors)), {},
                          "scalar dividend noncontiguous")
        yield SampleInput((s, make_arg((), dtype, rng=rng, **divisors)), {}, "scalar dividend 0-dim divisor")
    if dtype in SIGNED and not dtype.is_floating_point:
        yield SampleInput((7, make_arg((6,), dtype, low=-6, high=0, rng=rng)), {}, "negative divisors")


remainder_scalar_tensor = OpInfo(
    "remainder.Scalar_Tensor", _scalar_dividend_samples, dtypes=NO_BOOL,
    ref=quiet_ref(lambda s, b: np.remainder(np.asarray(s, b.dtype), b)),
    errors=lambda rng: [error((True, make_arg((2,), dt.bool, rng=rng)), NotImplementedError,
                              "\"remainder_cpu\" not implemented for 'Bool'")])

# ---------------------------------------------------------------------------- pow


def _pow_ref(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if np.result_type(a, b).kind in "iub" and np.any(b < 0):
        # torch's integer power: a ** -n is 1 for a == 1, +-1 for a == -1, else 0
        odd = np.abs(b) % 2 == 1
        small = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0))
        return np.where(b < 0, small, np.power(a, np.maximum(b, 0)))
    if a.dtype == bool and b.dtype == bool:
        return np.power(a.astype(np.int64), b.astype(np.int64))
    return np.power(a, b)


def _base_range(dtype):
    return {"low": 0.1, "high": 3} if dtype.is_floating_point else {"low": -3, "high": 4}


def _pow_samples(dtype, rng):
    exp = {"low": -2, "high": 3} if dtype.is_floating_point else {"low": 0, "high": 4}
    yield from binary_samples(dtype, rng, lhs=_base_range(dtype), rhs=exp)
    if dtype in SIGNED and not dtype.is_floating_point:
        base = make_arg((2, 5), dtype, low=-2, high=3, rng=rng)
        exponent = make_arg((2, 5), dtype, low=-3, high=0, rng=rng)
        yield SampleInput((base, exponent), {}, "negative integer exponents")


def _pow_scalar_samples(dtype, rng):
    exponents = (2, 0.5, -1.5) if dtype.is_floating_point else (2, 3, 0.5)
    yield from scalar_samples(dtype, rng, exponents, lhs=_base_range(dtype))
    if dtype is dt.bool:
        yield SampleInput((make_arg((3,), dtype, rng=rng), True), {}, "bool ** True")


def _pow_base_samples(dtype, rng):
    exp = {"low": -2, "high": 3} if dtype.is_floating_point else {"low": 0, "high": 4}
    for base in ((2, 1.5) if dtype.is_floating_point else (2, -3, 1.5)):
        yield SampleInput((base, make_arg((3, 4), dtype, rng=rng, **exp)), {}, "scalar base")
        yield SampleInput((base, make_arg((3, 4), dtype, noncontiguous=True, rng=rng, **exp)), {},
                          "scalar base noncontiguous")
        yield SampleInput((base, make_arg((), dtype, rng=rng, **exp)), {}, "scalar base 0-dim")
    yield SampleInput((2, make_arg((0, 4), dtype, rng=rng, **exp)), {}, "scalar base zero-size")
    if dtype in SIGNED and not dtype.is_floating_point:
        yield SampleInput((-1, make_arg((6,), dtype, low=-3, high=0, rng=rng)), {}, "negative exponents")


def _pow_errors(rng):
    i = make_arg((3,), dt.int64, rng=rng)
    b = make_arg((3,), dt.bool, rng=rng)
    yield error((i, -1), RuntimeError, "Integers to negative integer powers are not allowed.")
    yield error((b, b), NotImplementedError, "\"pow\" not implemented for 'Bool'")


_pow_ref = quiet_ref(_pow_ref)
pow_tt = OpInfo("pow.Tensor_Tensor", _pow_samples, ref=_pow_ref, dtypes=NO_BOOL, errors=_pow_errors)
pow_ts = OpInfo("pow.Tensor_Scalar", _pow_scalar_samples, ref=_pow_ref, dtypes=ALL_DTYPES,
                tolerances=FLOAT_RESULT_TOL,
                errors=lambda rng: [error((make_arg((2,), dt.uint8, rng=rng), -2), RuntimeError,
                                          "Integers to negative integer powers are not allowed.")])
pow_st = OpInfo("pow.Scalar", _pow_base_samples, ref=_pow_ref, dtypes=ALL_DTYPES,
                tolerances=FLOAT_RESULT_TOL,
                errors=lambda rng: [error((True, make_arg((2,), dt.bool, rng=rng)), NotImplementedError,
                                          "\"pow\" not implemented for 'Bool'")])

# ---------------------------------------------------------------------------- maximum, minimum


def _nan_samples(dtype, rng):
    yield from binary_samples(dtype, rng)
    if dtype.is_floating_point:
        a = tensor_of([np.nan, 1.0, -np.inf, 2.0], dtype)
        yield SampleInput((a, tensor_of([0.0, np.nan, 1.0, np.inf], dtype)), {}, "nan propagates")


maximum = OpInfo("maximum", _nan_samples, ref=np.maximum, dtypes=ALL_DTYPES)
minimum = OpInfo("minimum", _nan_samples, ref=np.minimum, dtypes=ALL_DTYPES)
max_other = OpInfo("max.other", _nan_samples, ref=np.maximum, dtypes=ALL_DTYPES)  # torch.max(a, b)
min_other = OpInfo("min.other", _nan_samples, ref=np.minimum, dtypes=ALL_DTYPES)
square = OpInfo("square", lambda d, rng: unary_samples(d, rng, low=-3, high=3), ref=np.square, dtypes=NO_BOOL)


def _type_as_samples(dtype, rng):
    for other in (dt.float64, dt.int32):
        for s in unary_samples(dtype, rng, low=-3, high=3):
            yield SampleInput((s.args[0], tensor_of([1], other)), {}, f"{s.name} as {other.name}")


def _type_as_ref(a, b):
    return a.astype(b.dtype) if b.dtype.kind != "f" else a


type_as = OpInfo("type_as", _type_as_samples, ref=_type_as_ref, dtypes=ALL_DTYPES)

# ---------------------------------------------------------------------------- comparisons, logical


def _narrow(dtype):
    """Small integers (equal values are likely); none below 0 for uint8."""
    return {} if dtype.is_floating_point else {"low": 0 if dtype is dt.uint8 else -2, "high": 3}


def _comparison_samples(dtype, rng):
    narrow = _narrow(dtype)
    yield from binary_samples(dtype, rng, lhs=narrow, rhs=narrow)
    x = make_arg((4, 3), dtype, rng=rng)
    yield SampleInput((x, x), {}, "equal operands")


def _comparison_scalar_samples(dtype, rng):
    narrow = _narrow(dtype)
    scalars = scalars_for(dtype, floats=(0.5, 2.5), ints=(1, 0), bools=(True, 0))
    yield from scalar_samples(dtype, rng, scalars, lhs=narrow)
    if not dtype.is_floating_point:
        yield SampleInput((make_arg((3, 2), dtype, rng=rng), 2.5), {}, "float scalar")


_COMPARISONS = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
                "ge": np.greater_equal}
COMPARISON_OPS = []
for _name, _ufunc in _COMPARISONS.items():
    COMPARISON_OPS.append(OpInfo(f"{_name}.Tensor", _comparison_samples, ref=_ufunc, dtypes=ALL_DTYPES))
    COMPARISON_OPS.append(OpInfo(f"{_name}.Scalar", _comparison_scalar_samples, ref=_ufunc,
                                 dtypes=ALL_DTYPES))


def _logical_samples(dtype, rng):
    yield from binary_samples(dtype, rng, lhs={"low": -1, "high": 2}, rhs={"low": -1, "high": 2})
    other = make_arg((3, 4), dt.float32, low=-1, high=1, rng=rng)
    yield SampleInput((make_arg((3, 4), dtype, rng=rng), other), {}, "mixed dtypes")


LOGICAL_OPS = [
    OpInfo(name, _logical_samples, ref=lambda a, b, _f=fn: _f(a != 0, b != 0), dtypes=ALL_DTYPES)
    for name, fn in (("logical_and", np.logical_and), ("logical_or", np.logical_or),
                     ("logical_xor", np.logical_xor))
]

logical_not = OpInfo("logical_not",
                     lambda d, rng: unary_samples(d, rng, low=-1, high=2, special=(np.nan, 0.0)),
                     ref=lambda a: a == 0, dtypes=ALL_DTYPES)

# ---------------------------------------------------------------------------- in-place and out= forms
BINARY_OPS = [
    add, add_scalar, sub, sub_scalar, mul, mul_scalar, div, div_scalar, div_mode, div_scalar_mode,
    floor_divide, floor_divide_scalar, remainder, remainder_scalar, remainder_scalar_tensor, pow_tt, pow_ts, pow_st,
    maximum, minimum, max_other, min_other, square, type_as,
    *COMPARISON_OPS, *LOGICAL_OPS, logical_not,
]
VARIANT_OPS = [
    inplace_variant(add, "add_.Tensor", "add_"), inplace_variant(add_scalar, "add_.Scalar", "add_"),
    inplace_variant(sub, "sub_.Tensor", "sub_"), inplace_variant(sub_scalar, "sub_.Scalar", "sub_"),
    inplace_variant(mul, "mul_.Tensor", "mul_"), inplace_variant(mul_scalar, "mul_.Scalar", "mul_"),
    # true division of integers is float: it can't be written back into an integer self
    inplace_variant(div, "div_.Tensor", "div_", FLOATING),
    inplace_variant(div_scalar, "div_.Scalar", "div_", FLOATING),
    inplace_variant(div_mode, "div_.Tensor_mode", "div_", NO_BOOL),
    inplace_variant(floor_divide, "floor_divide_.Tensor", "floor_divide_"),
    inplace_variant(remainder, "remainder_.Tensor", "remainder_"),
    inplace_variant(pow_tt, "pow_.Tensor", "pow_"), inplace_variant(pow_ts, "pow_.Scalar", "pow_"),
    out_variant(add, "add.out"), out_variant(sub, "sub.out"), out_variant(mul, "mul.out"),
    out_variant(div, "div.out"),
]

OPS: list = BINARY_OPS + VARIANT_OPS + TERNARY_OPS + UNARY_OPS
