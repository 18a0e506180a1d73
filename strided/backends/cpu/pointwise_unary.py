"""CPU kernels for pointwise unary ops, and a vectorized ``erf`` for gelu.

Note [Vectorized erf]
NumPy has no erf and scipy is not a dependency. ``erf`` evaluates two Chebyshev interpolants of
``math.erf`` built once, on first use, at Chebyshev points (no hand-copied coefficients):
``erf(x) / x`` as a function of ``x**2`` on ``|x| < 2.5`` and ``erfc(x) * exp(x**2)`` on
``2.5 <= |x| < 6``; beyond 6, ``erf`` is +-1 to double precision. The error is below 1e-14
(tests/backend/test_pointwise_extra.py checks it against ``math.erf``).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numpy.polynomial import chebyshev

from ... import dtypes as dt
from ...dispatch.library import kernel
from ..meta import pointwise_unary as meta
from .common import as_numpy, operand, store
from .pointwise import apply_ufunc, quiet, scalar_operand

__all__ = ["erf"]

_ERF_SPLIT, _ERF_END = 2.5, 6.0


@functools.cache
def _erf_series():
    erf = np.frompyfunc(math.erf, 1, 1)
    erfc = np.frompyfunc(math.erfc, 1, 1)

    def inner(t):  # t in [-1, 1] <-> x**2 in [0, SPLIT**2]
        x = np.sqrt((t + 1) / 2) * _ERF_SPLIT
        x = np.where(x == 0, 1e-300, x)
        return erf(x).astype(np.float64) / x

    def outer(t):  # t in [-1, 1] <-> x in [SPLIT, END]
        x = _ERF_SPLIT + (t + 1) / 2 * (_ERF_END - _ERF_SPLIT)
        return erfc(x).astype(np.float64) * np.exp(x * x)

    return chebyshev.chebinterpolate(inner, 24), chebyshev.chebinterpolate(outer, 24)


def erf(x) -> np.ndarray:
    """The error function of a float64 array, vectorized (Note [Vectorized erf])."""
    inner, outer = _erf_series()
    x = np.asarray(x, dtype=np.float64)
    ax = np.abs(x)
    small = ax < _ERF_SPLIT
    r = x * chebyshev.chebval(2 * (x * x) / _ERF_SPLIT**2 - 1, inner)
    mid = ~small & (ax < _ERF_END)
    if np.any(~small):
        t = 2 * (np.minimum(ax, _ERF_END) - _ERF_SPLIT) / (_ERF_END - _ERF_SPLIT) - 1
        tail = np.copysign(1 - np.exp(-ax * ax) * chebyshev.chebval(t, outer), x)
        r = np.where(small, r, np.where(mid, tail, np.copysign(1.0, x)))
    return np.where(np.isnan(x), x, r)


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
        return store(out, a if self.dtype is dt.bool else a != 0)
    if self.dtype.is_floating_point:  # torch: sign(nan) is 0, not nan
        a = operand(self, self.dtype)
        return store(out, (a > 0).astype(a.dtype) - (a < 0))
    return apply_ufunc(np.sign, out, a)


@kernel("CPU")
def relu(self):
    out = meta.relu(self)
    return apply_ufunc(np.maximum, out, as_numpy(self), scalar_operand(0, self.dtype))


def _rounding(name, ufunc):
    def rounding(self):
        out = meta.rounding(self, name)
        if not self.dtype.is_floating_point:
            return store(out, as_numpy(self))  # integers are whole already: a copy, as in torch
        return apply_ufunc(ufunc, out, operand(self, self.dtype))

    rounding.__name__ = rounding.__qualname__ = name
    return kernel("CPU")(rounding)


floor = _rounding("floor", np.floor)
ceil = _rounding("ceil", np.ceil)
round = _rounding("round", np.rint)  # noqa: A001 - half to even, as torch
trunc = _rounding("trunc", np.trunc)


# ---------------------------------------------------------------------------- int to float
def _rsqrt(x):
    return np.divide(1, np.sqrt(x))


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


_FLOAT_FNS = {
    "exp": np.exp, "log": np.log, "log1p": np.log1p, "expm1": np.expm1, "sqrt": np.sqrt,
    "rsqrt": _rsqrt, "reciprocal": np.reciprocal, "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
    "sigmoid": _sigmoid,
}


def _float_unary(name, fn):
    if isinstance(fn, np.ufunc):
        def unary(self):
            out = meta.float_unary(self)
            return quiet(apply_ufunc, fn, out, operand(self, out.dtype))
    else:
        def unary(self):
            out = meta.float_unary(self)
            return store(out, quiet(fn, operand(self, out.dtype)))

    unary.__name__ = unary.__qualname__ = name
    return kernel("CPU")(unary)


for _name in meta.FLOAT_UNARY:
    globals()[_name] = _float_unary(_name, _FLOAT_FNS[_name])


# ---------------------------------------------------------------------------- activations
_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)


def _gelu(x, approximate):
    if approximate == "tanh":
        inner = _SQRT_2_OVER_PI * (x + 0.044715 * (x * x * x))
        return 0.5 * x * (1 + np.tanh(inner))
    x64 = x.astype(np.float64, copy=False)
    return 0.5 * x64 * (1 + erf(x64 * math.sqrt(0.5)))


@kernel("CPU")
def gelu(self, *, approximate="none"):
    out = meta.gelu(self, approximate=approximate)
    return store(out, quiet(_gelu, operand(self, out.dtype), approximate))


def _silu(x):
    return x / (1 + np.exp(-x))


@kernel("CPU")
def silu(self):
    out = meta.silu(self)
    return store(out, quiet(_silu, operand(self, out.dtype)))


def _softplus(x, beta, threshold):
    z = x * beta
    return np.where(z > threshold, x, np.log1p(np.exp(z)) / beta)


@kernel("CPU")
def softplus(self, beta=1, threshold=20):
    out = meta.softplus(self, beta, threshold)
    d = out.dtype
    return store(out, quiet(_softplus, operand(self, d), scalar_operand(beta, d),
                            scalar_operand(threshold, d)))


# ---------------------------------------------------------------------------- predicates
def _predicate(name, ufunc, integer_value):
    def predicate(self):
        out = meta.predicate(self)
        if not self.dtype.is_floating_point:
            return store(out, integer_value)
        return apply_ufunc(ufunc, out, as_numpy(self))

    predicate.__name__ = predicate.__qualname__ = name
    return kernel("CPU")(predicate)


isnan = _predicate("isnan", np.isnan, False)
isinf = _predicate("isinf", np.isinf, False)
isfinite = _predicate("isfinite", np.isfinite, True)
