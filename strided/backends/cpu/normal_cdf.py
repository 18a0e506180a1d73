"""Exact GELU of float32 arrays for the CPU backend: ``x * Phi(x)`` and its derivative, in float32.

Note [Float32 GELU]
``gelu(x) = x * Phi(x)`` with ``Phi(x) = erfc(-x / sqrt 2) / 2``. torch's CPU kernel computes it in float
(``0.5 * x * (1 + erf(x / sqrt 2))`` with a polynomial erf, so its result loses all relative precision below
``x = -4``, where ``1 + erf`` cancels); float16 / bfloat16 compute in float too. The float64 path
(``special_functions.erfc`` in float64) is exact but 12-17x slower than torch for a float32 tensor. This
module stays in float32 and never cancels: with ``a = |x| / sqrt 2``,

    erfc(a) / 2 = exp(-x**2 / 2) * h(t),   t = 1 / (1 + a / 3),   h(t) = erfcx(a) / 2,

``erfcx`` being the smooth, slowly varying scaled complement (1 at 0, ``1 / (a sqrt pi)`` far out). ``h`` is a
degree-8 polynomial in ``t`` (Chebyshev interpolation of ``math.erfc(a) * exp(a**2) / 2`` at first use, no
hand-copied coefficients; with its float32 coefficients its relative error is below 5e-7 on ``a <= 10.5``,
beyond which ``exp`` is 0 in float32). ``Phi(x)`` is ``e h`` for ``x < 0`` and ``1 - e h`` from 0, so

    gelu(x) = max(x, 0) - |x| * e * h           gelu'(x) = Phi(x) + x * e / sqrt(2 pi)

(``max(x, 0)`` as ``x / 2 + |x| / 2``; ``gelu(-inf)`` is nan, as torch's, and ``gelu(inf)`` inf).

Relative error: below 1e-6 for ``|x| < 5`` (1 ulp of absolute error where the result is O(1)), growing to
4e-6 where the result is ~1e-27 (``exp``'s argument ``x * x / 2`` carries float32 rounding); torch's is
1 ulp near 0 and no digit past ``x = -5``. Work is done block by block (32,768 elements) so each of the ~30
NumPy passes stays in cache: 4-7x torch's single-threaded time, where float64 was 12-18x (bench/RESULTS.md).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numpy.polynomial import Polynomial, chebyshev

__all__ = ["gelu", "gelu_backward"]

_C = 3.0  # t = 1 / (1 + a / C)
_A_MAX = 10.5  # the fit's end in a = |x| / sqrt 2: exp(-a**2) is 0 in float32 beyond
_DEGREE = 8
_BLOCK = 32768
_F = np.float32
_T_SCALE = _F(1 / (_C * math.sqrt(2)))
_INV_SQRT_2PI = _F(1 / math.sqrt(2 * math.pi))


@functools.cache
def _coefficients() -> tuple:
    """float32 power-series coefficients of h(t) = erfcx(a) / 2 on [1 / (1 + A_MAX / C), 1] (Note [Float32 GELU])."""
    lo = 1 / (1 + _A_MAX / _C)

    def h(s):  # s in [-1, 1] -> t in [lo, 1] -> a
        t = lo + (s + 1) / 2 * (1 - lo)
        a = _C * (1 / t - 1)
        return np.array([math.erfc(v) * math.exp(v * v) / 2 for v in a])

    series = chebyshev.Chebyshev(chebyshev.chebinterpolate(h, _DEGREE), domain=[lo, 1]).convert(kind=Polynomial)
    return tuple(_F(c) for c in series.coef)


def _tail_factors(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(|x|, e = exp(-x**2 / 2), e * h(t)) of one block: ``e * h`` is ``erfc(|x| / sqrt 2) / 2``.

    ``t`` is not clamped to the fit's range (NumPy's minimum with a scalar costs 5 multiplies): past ``a = 10.5``
    the polynomial is still finite on ``t in [0, lo)`` and ``e`` is 0.
    """
    coefficients = _coefficients()
    ax = np.abs(x)
    t = ax * _T_SCALE
    t += _F(1)
    np.divide(_F(1), t, out=t)
    h = np.full_like(t, coefficients[-1])
    for c in coefficients[-2::-1]:
        h *= t
        h += c
    e = np.multiply(ax, ax, out=t)
    e *= _F(-0.5)
    np.exp(e, out=e)
    h *= e
    return ax, e, h


def _gelu_block(x: np.ndarray, out: np.ndarray) -> None:
    ax, _e, eh = _tail_factors(x)
    eh *= ax
    ax *= _F(0.5)
    np.multiply(x, _F(0.5), out=out)
    out += ax  # max(x, 0) as x / 2 + |x| / 2: no NaN-aware maximum, no overflow near float32's max
    out -= eh  # x * Phi(x) = max(x, 0) - |x| * erfc(|x| / sqrt 2) / 2: no cancellation on either side
    top = x.max()
    if not top < np.inf:  # inf * 0 above (or a nan): gelu(inf) = inf, gelu(-inf) stays nan as torch's
        out[x == np.inf] = np.inf


def _gelu_backward_block(g: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    _ax, e, eh = _tail_factors(x)
    np.copysign(eh, x, out=eh)
    upper = np.signbit(x)
    np.logical_not(upper, out=upper)
    np.subtract(upper, eh, out=eh)  # Phi(x): eh below 0, 1 - eh from +0 (-0 is below, as copysign says)
    e *= _INV_SQRT_2PI
    e *= x
    e += eh
    np.multiply(g, e, out=out)


def _blocks(fn, out: np.ndarray, *arrays: np.ndarray) -> np.ndarray:
    flat_out = out.reshape(-1)
    flats = [a.reshape(-1) for a in arrays]
    for i in range(0, flat_out.size, _BLOCK):
        fn(*(f[i:i + _BLOCK] for f in flats), flat_out[i:i + _BLOCK])
    return out


def gelu(x: np.ndarray) -> np.ndarray:
    """Exact ``x * Phi(x)`` of a float32 array, in float32 (Note [Float32 GELU])."""
    x = np.ascontiguousarray(x, dtype=_F)
    return _blocks(_gelu_block, np.empty_like(x), x)


def gelu_backward(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``g * d gelu / dx`` of float32 arrays (broadcast together), in float32 (Note [Float32 GELU])."""
    g, x = np.broadcast_arrays(np.asarray(g, dtype=_F), np.asarray(x, dtype=_F))
    g, x = np.ascontiguousarray(g), np.ascontiguousarray(x)
    return _blocks(_gelu_backward_block, np.empty_like(x), g, x)
