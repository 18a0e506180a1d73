"""OpInfos: pointwise unary ops (and their in-place forms)."""

from __future__ import annotations

import dataclasses
import math
import statistics

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
    tensor_of,
    unary_samples,
)

_SPECIAL = (np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -1.5, 2.5)
_GAMMA_SPECIAL = _SPECIAL + (1.0, 2.0, -1.0, -2.0, -2.5, 10.0)  # polygamma(4, .) of these fits float16
_erf = np.frompyfunc(math.erf, 1, 1)
_erfc = np.frompyfunc(math.erfc, 1, 1)


def _erfinv_scalar(y: float) -> float:
    """erfinv from the standard library's normal quantile (Wichura's AS241)."""
    if not -1 <= y <= 1:
        return math.nan
    if abs(y) == 1:
        return math.copysign(math.inf, y)
    return statistics.NormalDist().inv_cdf((y + 1) / 2) / math.sqrt(2)


_erfinv_ref = np.frompyfunc(_erfinv_scalar, 1, 1)


def _lgamma_scalar(x: float) -> float:
    """math.lgamma, with torch's +inf at the poles (0, negative integers) and at +-inf."""
    if math.isinf(x) or (x <= 0 and x.is_integer()):
        return math.inf
    return math.lgamma(x)


_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798)


def _polygamma_scalar(n: int, x: float) -> float:
    """psi^(n)(x) with torch's values at poles and infinities; elsewhere shifted by recurrence to
    ``y = x + N >= 30 + n`` and summed (math.fsum) with the asymptotic series in ``1 / y`` (an
    algorithm independent of the backends')."""
    sign = 1.0 if n % 2 else -1.0
    if math.isnan(x):
        return x
    if x == math.inf:  # Cephes' zeta gives NaN at q = inf (torch)
        return (math.inf, 0.0)[n] if n < 2 else math.nan
    pole = x <= 0 and (math.isinf(x) or x.is_integer())  # -inf included
    if n == 0 and pole:
        return math.copysign(math.inf, -x) if x == 0 else math.nan
    if n == 1 and pole:
        return math.nan if x == -math.inf else math.inf
    if pole:
        return sign * math.inf
    steps = max(0, math.ceil(30 + n - x))
    y = x + steps
    if n == 0:
        terms = [math.log(y), -0.5 / y] + [-b / (2 * k * y ** (2 * k)) for k, b in enumerate(_BERNOULLI, 1)]
        return math.fsum(terms + [-1 / (x + k) for k in range(steps)])
    f = math.factorial
    terms = [f(n - 1) / y**n, f(n) / (2 * y ** (n + 1))]
    terms += [b * f(2 * k + n - 1) / (f(2 * k) * y ** (2 * k + n)) for k, b in enumerate(_BERNOULLI, 1)]
    terms += [f(n) / (x + k) ** (n + 1) for k in range(steps)]
    return sign * math.fsum(terms)


def _polygamma_ref(n, a):
    return np.vectorize(lambda v: _polygamma_scalar(n, float(v)), otypes=[np.float64])(np.asarray(a, np.float64))


def _as_f64(fn):
    """A float64 array from a ``np.frompyfunc`` (object) result."""
    return lambda a: np.asarray(fn(a), dtype=np.float64)


def _f64(fn):
    """A reference computed in float64 (NumPy would compute bool inputs in float16)."""
    return quiet_ref(lambda a, **kw: fn(np.asarray(a, dtype=np.float64), **kw))


def _samples(low=None, high=None, special=_SPECIAL, kwargs=None):
    def samples(dtype, rng):
        lo = low if (low is None or dtype.is_floating_point) else math.ceil(low)
        hi = high if (high is None or dtype.is_floating_point) else math.floor(high) + 1  # exclusive for ints
        yield from unary_samples(dtype, rng, low=lo, high=hi, kwargs=kwargs, special=special)

    return samples


def _sign_ref(a):
    a = np.asarray(a)
    if a.dtype == bool:
        return a
    return np.where(np.isnan(a), 0, np.sign(a)) if a.dtype.kind == "f" else np.sign(a)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _gelu_ref(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * (1 + np.asarray(_erf(x / math.sqrt(2)), dtype=np.float64))


def _gelu_backward_ref(g, x, approximate="none"):
    if approximate == "tanh":
        k, c = math.sqrt(2 / math.pi), 0.044715
        t = np.tanh(k * (x + c * x**3))
        return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * c * x * x))
    cdf = 0.5 * (1 + np.asarray(_erf(x / math.sqrt(2)), dtype=np.float64))
    return g * (cdf + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi))


def _gelu_backward_samples(dtype, rng):
    def a(shape, **kw):
        return make_arg(shape, dtype, low=-4.0, high=4.0, rng=rng, **kw)

    for kw in ({}, {"approximate": "tanh"}):
        yield SampleInput((a((3, 4)), a((3, 4))), dict(kw), "contiguous")
        yield SampleInput((a((2, 3, 4), noncontiguous=True), a((2, 3, 4))), dict(kw), "noncontiguous grad")
        yield SampleInput((a((3, 4)), a((4,))), dict(kw), "broadcast self")
        yield SampleInput((a(()), a(())), dict(kw), "0-dim")
        yield SampleInput((a((0, 3)), a((0, 3))), dict(kw), "zero-size")
        special = tensor_of(_SPECIAL, dtype)
        yield SampleInput((a(special.shape), special), dict(kw), "special values")


def _gelu_backward_errors(rng):
    x = make_arg((3,), dt.float32, rng=rng)
    yield error((x, x), RuntimeError, "approximate argument must be either none or tanh.", {"approximate": "fast"})
    i = make_arg((3,), dt.int64, rng=rng)
    yield error((i, i), NotImplementedError, "\"GeluBackwardKernelImpl\" not implemented for 'Long'")


def _softplus_ref(x, beta=1, threshold=20):
    return np.where(x * beta > threshold, x, np.log1p(np.exp(x * beta)) / beta)


def _gelu_samples(dtype, rng):
    yield from unary_samples(dtype, rng, special=_SPECIAL)
    yield from unary_samples(dtype, rng, kwargs={"approximate": "tanh"}, special=_SPECIAL)


def _softplus_samples(dtype, rng):
    yield from unary_samples(dtype, rng, special=_SPECIAL)
    yield from unary_samples(dtype, rng, kwargs={"beta": 2, "threshold": 5})
    yield from unary_samples(dtype, rng, kwargs={"beta": 0.5, "threshold": 1.5})


def _one_error(dtype, exc, message, kwargs=None, *, regex=False):
    return lambda rng: [error((make_arg((3,), dtype, rng=rng),), exc, message, kwargs, regex=regex)]


_NEG_BOOL = ("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a "
             "mask, use the `~` or `logical_not()` operator instead.")


def _gelu_errors(rng):
    yield error((make_arg((3,), dt.float32, rng=rng),), RuntimeError,
                "approximate argument must be either none or tanh.", {"approximate": "fast"})
    yield error((make_arg((3,), dt.int64, rng=rng),), NotImplementedError,
                "\"(GeluKernelImpl|GeluCUDAKernelImpl)\" not implemented for 'Long'", regex=True)


neg = OpInfo("neg", _samples(), ref=np.negative, dtypes=NO_BOOL,
             errors=_one_error(dt.bool, RuntimeError, _NEG_BOOL))
abs_ = OpInfo("abs", _samples(), ref=np.absolute, dtypes=NO_BOOL,  # torch's CUDA kernel takes bool
              errors=lambda rng: [dataclasses.replace(e, devices=("cpu", "meta")) for e in _one_error(
                  dt.bool, NotImplementedError, "\"abs_cpu\" not implemented for 'Bool'")(rng)])
sign = OpInfo("sign", _samples(), ref=_sign_ref, dtypes=ALL_DTYPES)
relu = OpInfo("relu", _samples(), ref=lambda a: np.maximum(a, 0), dtypes=NO_BOOL,
              errors=_one_error(dt.bool, RuntimeError, "Boolean inputs not supported for relu"))

# Floating unary ops: integer and bool inputs give the default float dtype.
_FLOAT_UNARY = {
    "exp": (np.exp, {}), "log": (np.log, {"low": 0.1}), "log1p": (np.log1p, {"low": -0.9}),
    "expm1": (np.expm1, {}), "sqrt": (np.sqrt, {"low": 0}), "rsqrt": (lambda x: 1 / np.sqrt(x), {"low": 0.1}),
    "reciprocal": (lambda x: 1 / x, {"low": 0.1}), "sin": (np.sin, {}), "cos": (np.cos, {}),
    "tanh": (np.tanh, {}), "sigmoid": (_sigmoid, {}),
    "tan": (np.tan, {"low": -1.2, "high": 1.2}), "asin": (np.arcsin, {"low": -0.95, "high": 0.95}),
    "acos": (np.arccos, {"low": -0.95, "high": 0.95}), "atan": (np.arctan, {}), "sinh": (np.sinh, {}),
    "cosh": (np.cosh, {}), "asinh": (np.arcsinh, {}), "acosh": (np.arccosh, {"low": 1.1}),
    "atanh": (np.arctanh, {"low": -0.95, "high": 0.95}), "erf": (_as_f64(_erf), {}), "erfc": (_as_f64(_erfc), {}),
    "erfinv": (_as_f64(_erfinv_ref), {"low": -0.95, "high": 0.95}), "log2": (np.log2, {"low": 0.1}),
    "log10": (np.log10, {"low": 0.1}), "exp2": (np.exp2, {}),
    "lgamma": (_as_f64(np.frompyfunc(_lgamma_scalar, 1, 1)), {"special": _GAMMA_SPECIAL + (1e-3,)}),
    "digamma": (lambda a: _polygamma_ref(0, a), {"special": _GAMMA_SPECIAL + (1e-3,)}),
}
FLOAT_UNARY_OPS = {
    name: OpInfo(name, _samples(**ranges), ref=_f64(fn), dtypes=ALL_DTYPES, tolerances=FLOAT_RESULT_TOL)
    for name, (fn, ranges) in _FLOAT_UNARY.items()
}



def _polygamma_samples(dtype, rng):
    """polygamma(n, x) for n = 0 .. 4: x in [0.5, 9] (float16 holds every value there), plus the
    special values (negatives, poles, infinities) for floating dtypes."""
    for n in range(5):
        for s in _samples(low=0.5, high=9, special=_GAMMA_SPECIAL)(dtype, rng):
            yield SampleInput((n, *s.args), {}, f"n={n} {s.name}")


def _polygamma_errors(rng):
    x = make_arg((3,), dt.float32, rng=rng)
    yield error((-1, x), RuntimeError, "polygamma(n, x) does not support negative n.")


def _polygamma_inplace(self, n):
    """``self.polygamma_(n)`` on a copy of ``self`` with its strides (inplace_variant's call, self first)."""
    from ...factories import empty_strided

    return empty_strided(self.shape, self.stride(), dtype=self.dtype, device=self.device).copy_(self).polygamma_(n)


def _polygamma_inplace_samples(dtype, rng):
    for s in _polygamma_samples(dtype, rng):
        yield SampleInput((s.args[1], s.args[0]), {}, s.name)


def _polygamma_inplace_errors(rng):
    yield error((make_arg((3,), dt.float32, rng=rng), -1), RuntimeError,
                "polygamma(n, x) does not support negative n.")
    yield error((make_arg((3,), dt.int64, rng=rng), 1), RuntimeError,
                "result type Float can't be cast to the desired output type Long")


polygamma = OpInfo("polygamma", _polygamma_samples, ref=quiet_ref(_polygamma_ref), dtypes=ALL_DTYPES,
                   tolerances=FLOAT_RESULT_TOL, errors=_polygamma_errors)
polygamma_ = OpInfo("polygamma_", _polygamma_inplace_samples, ref=quiet_ref(lambda x, n: _polygamma_ref(n, x)),
                    op=_polygamma_inplace, dtypes=FLOATING, errors=_polygamma_inplace_errors)



def _mvlgamma_ref(x, p):
    shifts = [_lgamma_scalar(float(v) - j / 2) for v in np.asarray(x, np.float64).reshape(-1) for j in range(p)]
    sums = np.array([math.fsum(shifts[i:i + p]) for i in range(0, len(shifts), p)])
    return sums.reshape(np.shape(x)) + p * (p - 1) / 4 * math.log(math.pi)


def _mvlgamma_samples(dtype, rng):
    """mvlgamma(x, p) for p = 1, 2, 3, 5 with x in [(p - 1) / 2 + 0.1, 9] (and the special values)."""
    for p in (1, 2, 3, 5):
        for s in _samples(low=(p - 1) / 2 + 0.1, high=9, special=_GAMMA_SPECIAL)(dtype, rng):
            yield SampleInput((*s.args, p), {}, f"p={p} {s.name}")


def _mvlgamma_errors(rng):
    yield error((make_arg((3,), dt.bool, rng=rng), 2), RuntimeError, "The input tensor may not be a boolean tensor.")
    yield error((make_arg((3,), dt.float32, rng=rng), 0), RuntimeError, "p has to be greater than or equal to 1")


mvlgamma = OpInfo("mvlgamma", _mvlgamma_samples, ref=quiet_ref(_mvlgamma_ref), dtypes=NO_BOOL,
                  tolerances=FLOAT_RESULT_TOL, errors=_mvlgamma_errors)

gelu = OpInfo("gelu", _gelu_samples, ref=_f64(_gelu_ref), dtypes=FLOATING, errors=_gelu_errors)
gelu_backward = OpInfo("gelu_backward", _gelu_backward_samples,
                       ref=quiet_ref(lambda g, x, **kw: _gelu_backward_ref(np.asarray(g, dtype=np.float64),
                                                                           np.asarray(x, dtype=np.float64), **kw)),
                       dtypes=FLOATING, errors=_gelu_backward_errors)
silu = OpInfo("silu", _samples(), ref=_f64(lambda x: x * _sigmoid(x)), dtypes=FLOATING,
              errors=_one_error(dt.int64, NotImplementedError, "\"silu_(cpu|cuda)\" not implemented for 'Long'",
                                regex=True))
softplus = OpInfo("softplus", _softplus_samples, ref=_f64(_softplus_ref), dtypes=FLOATING,
                  errors=_one_error(dt.int32, NotImplementedError,
                                    "\"softplus_(cpu|cuda)\" not implemented for 'Int'", regex=True))

def _hardtanh_samples(dtype, rng):
    yield from unary_samples(dtype, rng, special=_SPECIAL)
    yield from unary_samples(dtype, rng, kwargs={"min_val": -0.5, "max_val": 2.0})
    yield from unary_samples(dtype, rng, kwargs={"min_val": 0.0, "max_val": 6.0}, low=-8, high=8)  # relu6


def _leaky_relu_samples(dtype, rng):
    yield from unary_samples(dtype, rng, special=_SPECIAL)
    yield from unary_samples(dtype, rng, kwargs={"negative_slope": 0.2})
    yield from unary_samples(dtype, rng, kwargs={"negative_slope": -1.5})


hardtanh = OpInfo("hardtanh", _hardtanh_samples,
                  ref=lambda a, min_val=-1.0, max_val=1.0: np.clip(a, min_val, max_val), dtypes=FLOATING)
leaky_relu = OpInfo("leaky_relu", _leaky_relu_samples,
                    ref=quiet_ref(lambda a, negative_slope=0.01: np.where(a > 0, a, a * negative_slope)),
                    dtypes=FLOATING,
                    errors=_one_error(dt.int64, NotImplementedError,
                                      "\"leaky_relu_(cpu|cuda|meta)\" not implemented for 'Long'", regex=True))

ROUNDING_OPS = {
    name: OpInfo(name, _samples(), ref=fn, dtypes=NO_BOOL,
                 errors=_one_error(dt.bool, NotImplementedError,
                                   f"\"{name}_vml_cpu\" not implemented for 'Bool'"))
    for name, fn in (("floor", np.floor), ("ceil", np.ceil), ("round", np.rint), ("trunc", np.trunc))
}

PREDICATES = [
    OpInfo(name, _samples(), ref=fn, dtypes=ALL_DTYPES)
    for name, fn in (("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite))
]

OPS: list = [
    neg, abs_, sign, relu, *FLOAT_UNARY_OPS.values(), polygamma, polygamma_, mvlgamma, gelu, gelu_backward, silu,
    softplus, hardtanh, leaky_relu,
    inplace_variant(hardtanh, "hardtanh_", None),  # python_module: nn, no method
    # torch's in-place gradient refuses a negative slope (the result's sign is not the input's)
    inplace_variant(leaky_relu, "leaky_relu_", None, keep=lambda s: s.kwargs.get("negative_slope", 0.01) >= 0),
    *ROUNDING_OPS.values(), *PREDICATES,
    inplace_variant(neg, "neg_", "neg_"), inplace_variant(abs_, "abs_", "abs_"),
    inplace_variant(relu, "relu_", "relu_"), inplace_variant(mvlgamma, "mvlgamma_", "mvlgamma_", dtypes=FLOATING),
    *(inplace_variant(FLOAT_UNARY_OPS[name], f"{name}_", f"{name}_", dtypes=FLOATING)
      for name in ("exp", "log", "sqrt", "tanh", "sigmoid", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh",
                   "acosh", "atanh", "erf", "erfc", "erfinv", "log2", "log10", "exp2", "lgamma", "digamma")),
]
