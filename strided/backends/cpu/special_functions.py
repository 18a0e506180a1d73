"""Special functions of float64 arrays for the CPU backend: ``erf``, ``erfc``, ``erfinv``.

Note [Vectorized erf]
NumPy has no erf and scipy is not a dependency. ``erf`` and ``erfc`` evaluate two Chebyshev
interpolants of ``math.erf``/``math.erfc``, built once on first use at Chebyshev points (no
hand-copied coefficients), by Horner's rule in place, block by block so the passes stay in cache:
``erf(x) / x`` as a polynomial in ``x**2`` for ``|x| < 2.5``, and ``erfc(x) * exp(x**2) * x`` as a
polynomial in ``(2.5 / x)**2`` for ``2.5 <= |x| <= 26`` (``erfc`` underflows soon after). erf has an
absolute error below 1e-13; erfc keeps a relative error below 1e-11 in its tail, so gelu stays
accurate where ``1 + erf(x)`` would cancel (tests/backend/test_pointwise_extra.py checks both
against ``math``). Arrays of fewer than 256 elements call ``math.erf`` per element: faster there.

Note [Vectorized erfinv]
``erfinv`` starts from the rational approximation torch's CPU kernel uses (``calc_erfinv`` in
ATen/native/Math.h: one rational function for ``|y| <= 0.7``, one in ``sqrt(-log((1 - |y|) / 2))``
beyond) and takes two Newton steps on ``erf(x) - y`` with the ``erf`` above, then, for
``|y| > 0.7``, two on ``erfc(|x|) - (1 - |y|)``, where ``erf(x) - y`` would cancel: float64
accuracy up to ``|y| = 1``. ``erfinv(+-1)`` is ``+-inf``, and ``|y| > 1`` or NaN gives NaN.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numpy.polynomial import chebyshev

__all__ = ["erf", "erfc", "erfinv"]

_SPLIT, _END = 2.5, 26.0
_S0 = (_SPLIT / _END) ** 2
_SMALL = 256
_BLOCK = 32768
_math_erf = np.frompyfunc(math.erf, 1, 1)
_math_erfc = np.frompyfunc(math.erfc, 1, 1)


@functools.cache
def _polys():
    """Power-series coefficients (in t on [-1, 1]) of the two interpolants of Note [Vectorized erf]."""

    def inner(t):  # erf(x) / x, with x**2 = (t + 1) / 2 * SPLIT**2
        x = np.sqrt((t + 1) / 2) * _SPLIT
        x = np.where(x == 0, 1e-300, x)
        return _math_erf(x).astype(np.float64) / x

    def outer(t):  # erfc(x) * exp(x**2) * x, with (SPLIT / x)**2 = S0 + (t + 1) / 2 * (1 - S0)
        x = _SPLIT / np.sqrt(_S0 + (t + 1) / 2 * (1 - _S0))
        return _math_erfc(x).astype(np.float64) * np.exp(x * x) * x

    return (tuple(chebyshev.cheb2poly(chebyshev.chebinterpolate(inner, 18))),
            tuple(chebyshev.cheb2poly(chebyshev.chebinterpolate(outer, 14))))


def _horner(coefficients, t: np.ndarray) -> np.ndarray:
    r = np.full_like(t, coefficients[-1])
    for c in coefficients[-2::-1]:
        r *= t
        r += c
    return r


def _block(x: np.ndarray, complement: bool) -> np.ndarray:
    inner, outer = _polys()
    t = x * x
    t *= 2 / _SPLIT**2
    t -= 1
    np.minimum(t, 1, out=t)  # |x| >= SPLIT is recomputed below
    r = _horner(inner, t)
    r *= x
    if complement:
        np.subtract(1, r, out=r)
    big = np.abs(x) >= _SPLIT
    if big.any():
        xb = x[big]
        ab = np.abs(xb)
        tb = (_SPLIT / ab) ** 2
        tb -= _S0
        tb *= 2 / (1 - _S0)
        tb -= 1
        np.maximum(tb, -1, out=tb)  # |x| > END: erfc has underflowed anyway
        tail = np.exp(-ab * ab) / ab * _horner(outer, tb)  # erfc(|x|)
        r[big] = np.where(xb > 0, tail, 2 - tail) if complement else np.copysign(1 - tail, xb)
    return r


def _evaluate(x, complement: bool) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.size < _SMALL:
        return np.asarray((_math_erfc if complement else _math_erf)(x), dtype=np.float64)
    flat = x.reshape(-1)
    out = np.empty_like(flat)
    for i in range(0, flat.size, _BLOCK):
        out[i:i + _BLOCK] = _block(flat[i:i + _BLOCK], complement)
    return out.reshape(x.shape)


def erf(x) -> np.ndarray:
    """The error function of a float64 array, vectorized (Note [Vectorized erf])."""
    return _evaluate(x, False)


def erfc(x) -> np.ndarray:
    """The complementary error function ``1 - erf(x)``, accurate in its tail (Note [Vectorized erf])."""
    return _evaluate(x, True)


_A = (0.886226899, -1.645349621, 0.914624893, -0.140543331)
_B = (-2.118377725, 1.442710462, -0.329097515, 0.012229801)
_C = (-1.970840454, -1.624906493, 3.429567803, 1.641345311)
_D = (3.543889200, 1.637067800)
_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def erfinv(y) -> np.ndarray:
    """The inverse error function of a float64 array (Note [Vectorized erfinv])."""
    y = np.asarray(y, dtype=np.float64)
    shape = y.shape
    y = y.reshape(-1)
    with np.errstate(all="ignore"):
        ay = np.abs(y)
        z = y * y
        num = ((_A[3] * z + _A[2]) * z + _A[1]) * z + _A[0]
        den = (((_B[3] * z + _B[2]) * z + _B[1]) * z + _B[0]) * z + 1
        x = y * num / den
        tail = ay > 0.7
        if tail.any():
            zt = np.sqrt(-np.log((1 - ay[tail]) / 2))
            num = ((_C[3] * zt + _C[2]) * zt + _C[1]) * zt + _C[0]
            den = (_D[1] * zt + _D[0]) * zt + 1
            x[tail] = np.copysign(num / den, y[tail])
        for _ in range(2):
            x -= (erf(x) - y) / (_TWO_OVER_SQRT_PI * np.exp(-x * x))
        if tail.any():  # near +-1, erf(x) - y cancels: step on erfc(|x|) - (1 - |y|) instead
            xt, rest = np.abs(x[tail]), 1 - ay[tail]
            for _ in range(2):
                xt += (erfc(xt) - rest) / (_TWO_OVER_SQRT_PI * np.exp(-xt * xt))
            x[tail] = np.copysign(xt, y[tail])
        x = np.where(ay == 1, np.copysign(np.inf, y), x)
        return np.where(ay > 1, np.nan, x).reshape(shape)
