"""torch.special's modified Bessel functions of the first kind beyond ``i0`` (``strided.special``): ``i0e``, ``i1``,
``i1e``, and ``modified_bessel_i0`` / ``modified_bessel_i1`` (torch's newer names for the same functions); and
``spherical_bessel_j0`` (``sin(x) / x``).

Note [Modified Bessel series]
As ``i0`` (Note [Special compositions]): below ``|x| = 20`` the power series ``I_v(x) = (x/2)^v sum_k (x^2/4)^k /
(k! (k + v)!)`` (36 terms), beyond it the asymptotic series ``I_v(x) ~ e^|x| / sqrt(2 pi |x|) sum_k (-1)^k a_k(v) /
|x|^k``, ``a_k(v) = prod_{j <= k} (4 v^2 - (2j - 1)^2) / (k! 8^k)`` (25 terms): both below 1e-16 relative. The
exponentially scaled forms (``i0e = e^-|x| I0``) multiply the series by ``e^-|x|`` and drop ``e^|x|`` from the
asymptote, so they stay finite where ``I_v`` overflows (``i0e(inf) = 0``). ``I1`` is odd. At +-inf ``I0`` is +inf and
``I1`` +-inf, where torch's Cephes code returns NaN. Gradients go through the
compositions (``where`` routes each point to one branch; the clamps keep the other finite). Every dtype computes in
float64 and rounds once: in float32 the backward of the 36-term Horner chain multiplies by t = x^2 / 4 at every step,
so the series' gradient overflowed to inf (then NaN against coefficients that underflow) past |x| ~ 7.
"""

from __future__ import annotations

import math

from . import special as _special
from .ops import bound as _ops
from .tensor import Tensor

__all__ = ["i0e", "i1", "i1e", "modified_bessel_i0", "modified_bessel_i1", "spherical_bessel_j0"]

_TERMS, _ASYMPTOTIC_TERMS = 36, 25


def _series(v: int) -> tuple:
    """Horner coefficients (highest power first) of ``sum_k t^k / (k! (k + v)!)``."""
    return tuple(1 / (math.factorial(k) * math.factorial(k + v)) for k in range(_TERMS - 1, -1, -1))


def _asymptotic(v: int) -> tuple:
    """Horner coefficients in ``1 / |x|`` of ``sum_k (-1)^k a_k(v) / |x|^k``."""
    coefficients, a = [], 1.0
    for k in range(_ASYMPTOTIC_TERMS):
        if k:
            a *= -(4 * v * v - (2 * k - 1) ** 2) / (k * 8)
        coefficients.append(a)
    return tuple(reversed(coefficients))


_SERIES = {0: _series(0), 1: _series(1)}
_ASYMPTOTE = {0: _asymptotic(0), 1: _asymptotic(1)}


def _bessel_i(input: Tensor, v: int, scaled: bool, name: str) -> Tensor:
    x, d = _special._opmath(input, name, half_ok=not name.startswith("modified_"))  # the newer names: float, double
    x = x.double()  # float64 throughout: the series' gradient overflows float32 (Note [Modified Bessel series])
    a = x.abs()
    small = x.clamp(-20.0, 20.0)
    near = _special._horner(_SERIES[v], small * small / 4)
    if v == 1:
        near = near * small / 2
    if scaled:
        near = near * (-small.abs()).exp()
    big = a.clamp(20.0, math.inf if scaled else 1000.0)  # e^|x| overflows past 709.8 (as torch's)
    far = _special._horner(_ASYMPTOTE[v], 1 / big) / (2 * math.pi * big).sqrt()
    if not scaled:
        far = far * big.exp()
    if v == 1:
        far = far * x.sign()
    return _ops.where(a < 20, near, far).to(d)


def i0e(input: Tensor, *, out=None) -> Tensor:  # noqa: A002 - torch's name
    """``exp(-|x|) I0(x)``, the exponentially scaled modified Bessel function of order 0 (Note [Modified Bessel
    series])."""
    return _special._out("i0e", _bessel_i(input, 0, True, "i0e"), out, (input,))


def i1(input: Tensor, *, out=None) -> Tensor:  # noqa: A002
    """The modified Bessel function of the first kind, order 1 (Note [Modified Bessel series])."""
    return _special._out("i1", _bessel_i(input, 1, False, "i1"), out, (input,))


def i1e(input: Tensor, *, out=None) -> Tensor:  # noqa: A002
    """``exp(-|x|) I1(x)`` (Note [Modified Bessel series])."""
    return _special._out("i1e", _bessel_i(input, 1, True, "i1e"), out, (input,))


def modified_bessel_i0(input: Tensor, *, out=None) -> Tensor:  # noqa: A002
    """torch.special.modified_bessel_i0: ``I0(x)``, as ``i0``."""
    return _special._out("modified_bessel_i0", _bessel_i(input, 0, False, "modified_bessel_i0"), out, (input,))


def modified_bessel_i1(input: Tensor, *, out=None) -> Tensor:  # noqa: A002
    """torch.special.modified_bessel_i1: ``I1(x)``, as ``i1``."""
    return _special._out("modified_bessel_i1", _bessel_i(input, 1, False, "modified_bessel_i1"), out, (input,))


_J0_SERIES = tuple((-1) ** k / math.factorial(2 * k + 1) for k in range(6, -1, -1))  # sin(x)/x in x^2, 7 terms


def spherical_bessel_j0(input: Tensor, *, out=None) -> Tensor:  # noqa: A002
    """``sin(x) / x``, the spherical Bessel function of the first kind of order 0: its Taylor series below |x| = 0.5
    (torch's), 0 at +-inf."""
    x, d = _special._opmath(input, "spherical_bessel_j0", "x", half_ok=False)
    near = x.abs() < 0.5
    small = x.clamp(-0.5, 0.5)
    series = _special._horner(_J0_SERIES, small * small)
    safe = _ops.where(near, 1.0, x)
    result = _ops.where(near, series, safe.sin() / safe)
    return _special._out("spherical_bessel_j0", _ops.where(x.isinf(), 0.0, result).to(d), out, (input,))

