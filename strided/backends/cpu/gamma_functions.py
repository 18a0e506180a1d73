"""Gamma-family functions of float64 arrays for the CPU backend: ``lgamma``, ``digamma``,
``trigamma``, ``polygamma`` and ``mvlgamma`` (and ``zeta``, the Hurwitz zeta of ``hurwitz_zeta.py``, re-exported).

Note [Vectorized lgamma]
NumPy has no lgamma and scipy is not a dependency. Positive ``x`` take one of two forms:
* ``x >= 10``: Stirling's series ``(x - 1/2)(log x - 1) + (log(2 pi) - 1) / 2 + sum_k B_2k / (2k (2k - 1)
  x^(2k - 1))``, seven terms (truncation below 1e-17 relative), written so that ``x log x`` does not
  overflow before the result does;
* ``0 < x < 10``: the Taylor series ``lgamma(2 + z) = z ((1 - gamma) + sum_k (-1)^k (zeta(k) - 1) / k
  z^(k - 1))`` for ``|z| <= 1/2`` (30 terms; the coefficients come from ``zeta`` below, built on first
  use, none copied by hand), with ``lgamma(1 + z) = lgamma(2 + z) - log1p(z)``, ``lgamma(z) = lgamma(2 + z)
  - log1p(z) - log(z)`` for ``z`` in (0, 1/2), and ``x`` in [2.5, 10) shifted down into [1.5, 2.5) by
  ``lgamma(x) = lgamma(x - k) + log((x - 1) ... (x - k))``. The factor ``z`` keeps the result accurate
  relative to its size next to the zeros at 1 and 2.
``x <= 0`` uses the reflection ``lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x)`` with the sine of
the exact remainder ``x - rint(x)``; poles (0, -0, negative integers, -inf) give +inf, as torch's
``std::lgamma``. Accuracy (tests/backend/test_gamma_functions.py): against glibc's ``lgamma`` (torch's)
at 2e5 points of (1e-300, 1e6) and next to the zeros, at most 8e-16 relative for ``x > 0``; against
``math.lgamma`` (CPython's own Lanczos sum, itself good to about 1e-14 away from the zeros and only
absolutely next to them) 5e-14. For ``x < 0`` the reflection's subtraction makes the error absolute,
about 1e-15 of ``|lgamma(1 - x)|``, next to lgamma's negative zeros, as glibc's.

Note [digamma and polygamma]
``digamma`` is torch's ``calc_digamma`` (ATen/native/Math.h) step by step: ``0 -> copysign(inf, -x)``
(so ``-0`` gives +inf), negative integers and -inf give NaN, ``x < 0`` reflects with ``pi / tan(pi r)``
(``r = x - rint(x)``, exact, where torch's ``modf`` remainder loses up to 1e-13 relative next to the
poles: the only change), the recurrence ``psi(x) = psi(x + 1) - 1/x`` takes ``x`` to
``>= 10``, then ``psi(10)`` exactly or the asymptotic series in ``1 / x**2`` (coefficients
``B_2k / 2k``). ``trigamma`` has torch's structure (reflection, here for ``x < 0``, recurrence, asymptotic series) but
shifts to ``x >= 10`` and keeps eight series terms, where torch's six shifts and three terms stop at
about 1e-9 relative; it reflects with the sine of the exact remainder, so negative integers are poles
(+inf) instead of torch's large finite values. ``polygamma(n >= 2)`` is torch's ``calc_polygamma``:
``(-1)**(n + 1) n! zeta(n + 1, x)`` with Cephes' Hurwitz ``zeta`` (direct sum to ``a > 9``, then
Euler-Maclaurin with twelve terms, both stopping at machine epsilon; ``hurwitz_zeta.py``), which splits the
sum at zero below -64 where torch's takes ``|x|`` steps (Note [Hurwitz zeta far below zero]). ``n!`` is exact
(torch: ``exp(lgamma(n + 1))``).
The CUDA device functions (kernels/elementwise.cuh) are the same algorithms.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from .hurwitz_zeta import zeta

__all__ = ["lgamma", "digamma", "trigamma", "zeta", "polygamma", "mvlgamma", "BERNOULLI"]

# B_2, B_4, ..., B_18
BERNOULLI = (Fraction(1, 6), Fraction(-1, 30), Fraction(1, 42), Fraction(-1, 30), Fraction(5, 66),
             Fraction(-691, 2730), Fraction(7, 6), Fraction(-3617, 510), Fraction(43867, 798))
_STIRLING = tuple(float(b / (2 * k * (2 * k - 1))) for k, b in enumerate(BERNOULLI[:7], 1))
_STIRLING_C = (math.log(2 * math.pi) - 1) / 2
_PSI_A = tuple(float(b / (2 * k)) for k, b in reversed(list(enumerate(BERNOULLI[:7], 1))))  # highest first
_PSI_10 = 2.25175258906672110764  # psi(10) = H_9 - Euler's gamma
_TRIGAMMA = tuple(float(b) for b in BERNOULLI[:8])
_LOG_PI = math.log(math.pi)
_EULER = 0.5772156649015329
_TAYLOR_TERMS = 30


@functools.cache
def _taylor() -> tuple:
    """Coefficients of lgamma(2 + z) / z in z, highest power first (Note [Vectorized lgamma])."""
    c = [1 - _EULER] + [(-1) ** k * float(zeta(float(k), np.array(2.0))) / k for k in range(2, _TAYLOR_TERMS + 1)]
    return tuple(reversed(c))


def _horner(coefficients, t):
    r = np.full_like(t, coefficients[0])
    for c in coefficients[1:]:
        r *= t
        r += c
    return r


def _lgamma_positive(x: np.ndarray) -> np.ndarray:
    """lgamma of positive (finite or +inf) float64 values."""
    out = np.empty_like(x)
    big = x >= 10
    if big.any():
        xb = x[big]
        w = 1 / xb
        out[big] = (xb - 0.5) * (np.log(xb) - 1) + _STIRLING_C + w * _horner(_STIRLING[::-1], w * w)
    small = ~big
    if small.any():
        xs = x[small]
        steps = np.maximum(np.floor(xs - 1.5), 0)  # 0..8 steps down into [1.5, 2.5)
        y = xs - steps
        prod = np.ones_like(y)
        for j in range(8):
            prod *= np.where(j < steps, y + j, 1)
        z = np.where(y >= 1.5, y - 2, np.where(y >= 0.5, y - 1, y))  # exact
        r = z * _horner(_taylor(), z)
        r -= np.where(y < 1.5, np.log1p(z), 0)
        r -= np.where(y < 0.5, np.log(np.where(y < 0.5, y, 1)), 0)
        out[small] = r + np.log(prod)
    return out


def lgamma(x) -> np.ndarray:
    """log |Gamma(x)| of a float64 array (Note [Vectorized lgamma])."""
    x = np.asarray(x, dtype=np.float64)
    out = np.full(x.shape, np.nan)
    with np.errstate(all="ignore"):
        pos = x > 0
        if pos.any():
            out[pos] = _lgamma_positive(x[pos])
        neg = x <= 0
        if neg.any():
            xn = x[neg]
            finite = np.isfinite(xn)
            xn = np.where(finite, xn, -1.0)
            r = xn - np.rint(xn)  # exact; |sin(pi x)| = |sin(pi r)|
            out[neg] = np.where(finite, _LOG_PI - np.log(np.abs(np.sin(np.pi * r))) - _lgamma_positive(1 - xn),
                                np.inf)
    return out


def digamma(x) -> np.ndarray:
    """torch's digamma of a float64 array (Note [digamma and polygamma])."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        neg = x < 0
        whole = np.trunc(x)
        result = np.where(neg, -np.pi / np.tan(np.pi * (x - np.rint(x))), 0.0)
        y = np.where(neg, 1 - x, x)
        for _ in range(10):
            low = y < 10
            if not low.any():
                break
            result -= np.where(low, 1 / y, 0)
            y = np.where(low, y + 1, y)
        z = 1 / (y * y)
        tail = np.where(y < 1e17, z * _horner(_PSI_A, z), 0)
        out = np.where(y == 10, result + _PSI_10, result + np.log(y) - 0.5 / y - tail)
        out = np.where(neg & (x == whole), np.nan, out)
        return np.where(x == 0, np.copysign(np.inf, -x), out)


def trigamma(x) -> np.ndarray:
    """The trigamma function psi'(x) of a float64 array (Note [digamma and polygamma])."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        neg = x < 0
        s = np.sin(np.pi * (x - np.rint(x)))
        y = np.where(neg, 1 - x, x)
        acc = np.zeros_like(y)
        for _ in range(10):
            low = y < 10
            if not low.any():
                break
            acc += np.where(low, 1 / (y * y), 0)
            y = np.where(low, y + 1, y)
        w = 1 / y
        w2 = w * w
        psi1 = acc + (w + 0.5 * w2 + w * w2 * _horner(_TRIGAMMA[::-1], w2))
        return np.where(neg, np.pi**2 / (s * s) - psi1, psi1)


def polygamma(n: int, x) -> np.ndarray:
    """torch's polygamma(n, x) of a float64 array (Note [digamma and polygamma])."""
    if n == 0:
        return digamma(x)
    if n == 1:
        return trigamma(x)
    factorial = float(math.factorial(n)) if n <= 170 else math.inf
    with np.errstate(all="ignore"):
        return (1.0 if n % 2 else -1.0) * factorial * zeta(n + 1.0, x)


def mvlgamma(x, p: int) -> np.ndarray:
    """The multivariate log-gamma ``sum_j lgamma(x - j / 2) + p (p - 1) / 4 log(pi)``, j < p."""
    x = np.asarray(x, dtype=np.float64)
    return lgamma(x[..., None] - np.arange(p) / 2).sum(-1) + p * (p - 1) / 4 * _LOG_PI
