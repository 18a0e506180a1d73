"""CPU kernels for pointwise unary ops (erf, erfc and erfinv come from ``special_functions``; lgamma,
digamma, polygamma and mvlgamma from ``gamma_functions``)."""

from __future__ import annotations

import math

import numpy as np

from ... import dtypes as dt
from ...dispatch.library import kernel
from ..meta import pointwise_unary as meta
from . import complex_math, normal_cdf
from . import gamma_functions as gamma
from . import special_functions as special
from .common import as_numpy, operand, store
from .pointwise import apply_ufunc, quiet, scalar_operand, store_result

__all__ = []


# ---------------------------------------------------------------------------- keep the dtype
@kernel("CPU")
def neg(self):
    return apply_ufunc(np.negative, meta.neg(self), as_numpy(self))


@kernel("CPU")
def abs(self):  # noqa: A001 - the op's name
    return apply_ufunc(np.absolute, meta.abs(self), as_numpy(self))


@kernel("CPU")
def sign(self):
    out = meta.sign(self)
    a = as_numpy(self)
    if self.dtype is dt.bool or self.dtype is dt.uint8:
        return store_result(out, a if self.dtype is dt.bool else a != 0)
    if self.dtype.is_floating_point:  # torch: sign(nan) is 0, not nan
        a = operand(self, self.dtype)
        return store_result(out, (a > 0).astype(a.dtype) - (a < 0))
    return apply_ufunc(np.sign, out, a)


@kernel("CPU")
def relu(self):
    out = meta.relu(self)
    return apply_ufunc(np.maximum, out, as_numpy(self), scalar_operand(0, self.dtype))


def _rounding(name, ufunc):
    def rounding(self):
        out = meta.rounding(self, name)
        if not self.dtype.is_floating_point:
            return store_result(out, as_numpy(self))  # integers are whole already: a copy, as in torch
        return apply_ufunc(ufunc, out, operand(self, self.dtype))

    rounding.__name__ = rounding.__qualname__ = name
    return kernel("CPU")(rounding)


floor = _rounding("floor", np.floor)
ceil = _rounding("ceil", np.ceil)
round = _rounding("round", np.rint)  # noqa: A001 - half to even, as torch
trunc = _rounding("trunc", np.trunc)


# ---------------------------------------------------------------------------- int to float
# Note [Pointwise chains in place]
# A chain such as ``1 / (1 + np.exp(-x))`` makes a new array per step; at 2 MB each one is fresh pages the kernel
# must fault in (NumPy frees big arrays back to the system). The chains below make one array and write every step
# into it: the same operations in the same order, so the same bits, in less time (bench/RESULTS.md, thirty-fourth
# session).
def _rsqrt(x):
    t = np.sqrt(x)
    return np.divide(1, t, out=t) if isinstance(t, np.ndarray) else 1 / t


def _sigmoid(x):
    t = np.negative(x)
    if not isinstance(t, np.ndarray):  # a NumPy scalar (0-dim input)
        return 1 / (1 + np.exp(t))
    np.exp(t, out=t)
    t += 1
    return np.divide(1, t, out=t)  # not np.reciprocal: NumPy's reciprocal loop is not vectorized (10-20% slower)


_FLOAT_FNS = {
    "exp": np.exp, "log": np.log, "log1p": np.log1p, "expm1": np.expm1, "sqrt": np.sqrt,
    "rsqrt": _rsqrt, "reciprocal": np.reciprocal, "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
    "sigmoid": _sigmoid, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh,
    "cosh": np.cosh, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "log2": np.log2,
    "log10": np.log10, "exp2": np.exp2, "erf": special.erf, "erfc": special.erfc, "erfinv": special.erfinv,
    "lgamma": gamma.lgamma, "digamma": gamma.digamma,
}


def _evaluate_into(out, fn, *args):
    """``fn(*args)`` (computed in float64) stored into ``out``; run under ``quiet``: results beyond the
    range of ``out``'s dtype become inf without a warning, as in torch."""
    return store(out, fn(*args))


def _float_unary(name, fn):
    cfn = complex_math.COMPLEX_FNS.get(name)  # Note [Complex math ops]
    if cfn is not None:
        def unary(self):
            out = meta.float_unary(self)
            if self.dtype.is_complex:
                return quiet(_evaluate_into, out, cfn, operand(self, out.dtype))
            return quiet(apply_ufunc, fn, out, operand(self, out.dtype))
    elif isinstance(fn, np.ufunc):
        def unary(self):
            out = meta.float_unary(self)
            return quiet(apply_ufunc, fn, out, operand(self, out.dtype))
    else:
        def unary(self):
            out = meta.float_unary(self)
            return quiet(_evaluate_into, out, fn, operand(self, out.dtype))

    unary.__name__ = unary.__qualname__ = name
    return kernel("CPU")(unary)


for _name in meta.FLOAT_UNARY:
    globals()[_name] = _float_unary(_name, _FLOAT_FNS[_name])


@kernel("CPU")
def polygamma(n, self):
    out = meta.polygamma(n, self)
    return quiet(_evaluate_into, out, gamma.polygamma, n, operand(self, out.dtype))


@kernel("CPU")
def polygamma_(self, n):
    meta.polygamma_(self, n)
    return quiet(_evaluate_into, self, gamma.polygamma, n, operand(self, self.dtype))


@kernel("CPU")
def mvlgamma(self, p):
    out = meta.mvlgamma(self, p)
    return quiet(_evaluate_into, out, gamma.mvlgamma, operand(self, out.dtype), p)


# ---------------------------------------------------------------------------- activations
_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)


def _gelu(x, approximate):
    if approximate == "tanh":
        inner = _SQRT_2_OVER_PI * (x + 0.044715 * (x * x * x))
        return 0.5 * x * (1 + np.tanh(inner))
    if x.dtype == np.float32:  # float32, float16, bfloat16: Note [Float32 GELU]
        return normal_cdf.gelu(x)
    x64 = x.astype(np.float64, copy=False)
    return 0.5 * x64 * special.erfc(x64 * -math.sqrt(0.5))  # Phi(x) = erfc(-x / sqrt 2) / 2: no cancellation


@kernel("CPU")
def gelu(self, *, approximate="none"):
    out = meta.gelu(self, approximate=approximate)
    return store_result(out, quiet(_gelu, operand(self, out.dtype), approximate))


def _gelu_backward(g, x, approximate):
    """d gelu / dx times ``g``: torch's formulas (tanh: through t = tanh(k (x + c x^3)))."""
    if approximate == "tanh":
        k, c = _SQRT_2_OVER_PI, 0.044715
        x2 = x * x
        t = np.tanh(k * (x + c * x2 * x))
        return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * c * x2))
    if x.dtype == np.float32:  # Note [Float32 GELU]
        return normal_cdf.gelu_backward(g, x)
    x64 = x.astype(np.float64, copy=False)
    cdf = 0.5 * special.erfc(x64 * -math.sqrt(0.5))
    pdf = np.exp(-0.5 * x64 * x64) / math.sqrt(2 * math.pi)
    return g * (cdf + x64 * pdf)


@kernel("CPU")
def gelu_backward(grad_output, self, *, approximate="none"):
    out = meta.gelu_backward(grad_output, self, approximate=approximate)
    g, x = operand(grad_output, out.dtype), operand(self, out.dtype)
    return store_result(out, quiet(_gelu_backward, g, x, approximate))


def _silu(x):
    t = np.negative(x)  # Note [Pointwise chains in place]
    if not isinstance(t, np.ndarray):
        return x / (1 + np.exp(t))
    np.exp(t, out=t)
    t += 1
    return np.divide(x, t, out=t)


@kernel("CPU")
def silu(self):
    out = meta.silu(self)
    return store_result(out, quiet(_silu, operand(self, out.dtype)))


def _softplus(x, beta, threshold):
    z = x * beta
    return np.where(z > threshold, x, np.log1p(np.exp(z)) / beta)


@kernel("CPU")
def softplus(self, beta=1, threshold=20):
    out = meta.softplus(self, beta, threshold)
    d = out.dtype
    return store_result(out, quiet(_softplus, operand(self, d), scalar_operand(beta, d),
                            scalar_operand(threshold, d)))


# ---------------------------------------------------------------------------- predicates
def _predicate(name, ufunc, integer_value):
    def predicate(self):
        out = meta.predicate(self)
        if self.dtype.category < dt.FLOATING:  # complex: NumPy's (either part nan / inf; both finite)
            return store_result(out, integer_value)
        return apply_ufunc(ufunc, out, as_numpy(self))

    predicate.__name__ = predicate.__qualname__ = name
    return kernel("CPU")(predicate)


isnan = _predicate("isnan", np.isnan, False)
isinf = _predicate("isinf", np.isinf, False)
isfinite = _predicate("isfinite", np.isfinite, True)
