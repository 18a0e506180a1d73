"""torch.special's Airy function ``airy_ai`` (``strided.special``): Cephes' ``airy`` approximations, composed of
strided's ops so it runs on every backend.

Note [Cephes Airy function]
torch's kernel (``ATen/native/Math.h``) is Cephes' ``airy`` for Ai, in three regions, chosen with ``where``:

* ``x < -2.09``: the oscillating asymptotic form ``(sin(t) f - cos(t) g) / (sqrt(pi) |x|^(1/4))`` with
  ``t = 2/3 |x|^(3/2) + pi/4``, where ``f = 1 + z^2 P(z^2) / Q(z^2)`` and ``g = z R(z^2) / S(z^2)``, ``z = 1/zeta``;
* ``x >= 2.09``: the decaying form ``A(1/zeta) / B(1/zeta) / (2 sqrt(pi) x^(1/4) exp(zeta))``,
  ``zeta = 2/3 x^(3/2)``; 0 beyond 103.892, where it underflows;
* between: the Maclaurin series ``c1 f(x) - c2 g(x)`` in ``x^3`` (16 terms: at ``|x| <= 2.09`` the last is
  below 1e-19 of the sum, where Cephes stops at machine epsilon).

Infinities give NaN, as torch's. Cephes evaluates the denominators ``Q`` and ``S`` of the oscillating form with
``p1evl``, a polynomial whose leading coefficient 1 is not stored; torch's kernel runs an ordinary Horner loop over
the stored coefficients, dropping that term (as in its J and Y, Note [Cephes Bessel functions]): its Ai is up to
2e-7 off between -2.09 and about -5. strided keeps the leading 1 and is within ~1e-15 of mpmath there
(``tests/backend/test_special_airy_zeta.py``). float32 inputs compute in float64 and round once (torch's float32
kernel overflows ``exp(zeta)`` past x = 26, returning 0 for values float32 still holds). As torch's, the result
carries no gradient; half and complex inputs are refused; integer inputs give the default float dtype.
"""

from __future__ import annotations

import math

from . import dtypes as _dt
from . import special as _special
from .autograd.grad_mode import no_grad
from .ops import bound as _ops
from .tensor import Tensor

__all__ = ["airy_ai"]

_AN = (3.46538101525629032477e-01, 1.20075952739645805542e+01, 7.62796053615234516538e+01,
       1.68089224934630576269e+02, 1.59756391350164413639e+02, 7.05360906840444183113e+01,
       1.40264691163389668864e+01, 9.99999999999999995305e-01)
_AD = (5.67594532638770212846e-01, 1.47562562584847203173e+01, 8.45138970141474626562e+01,
       1.77318088145400459522e+02, 1.64234692871529701831e+02, 7.14778400825575695274e+01,
       1.40959135607834029598e+01, 1.00000000000000000470e+00)
_AFN = (-1.31696323418331795333e-01, -6.26456544431912369773e-01, -6.93158036036933542233e-01,
        -2.79779981545119124951e-01, -4.91900132609500318020e-02, -4.06265923594885404393e-03,
        -1.59276496239262096340e-04, -2.77649108155232920844e-06, -1.67787698489114633780e-08)
_AFD = (1.0, 1.33560420706553243746e+01, 3.26825032795224613948e+01, 2.67367040941499554804e+01,
        9.18707402907259625840e+00, 1.47529146771666414581e+00, 1.15687173795188044134e-01,
        4.40291641615211203805e-03, 7.54720348287414296618e-05, 4.51850092970580378464e-07)  # p1evl's leading 1
_AGN = (1.97339932091685679179e-02, 3.91103029615688277255e-01, 1.06579897599595591108e+00,
        9.39169229816650230044e-01, 3.51465656105547619242e-01, 6.33888919628925490927e-02,
        5.85804113048388458567e-03, 2.82851600836737019778e-04, 6.98793669997260967291e-06,
        8.11789239554389293311e-08, 3.41551784765923618484e-10)
_AGD = (1.0, 9.30892908077441974853e+00, 1.98352928718312140417e+01, 1.55646628932864612953e+01,
        5.47686069422975497931e+00, 9.54293611618961883998e-01, 8.64580826352392193095e-02,
        4.12656523824222607191e-03, 1.01259085116509135510e-04, 1.17166733214413521882e-06,
        4.91834570062930015649e-09)  # p1evl's leading 1
_C1, _C2 = 0.355028053887817239260, 0.258819403792806798405  # Ai(0) and -Ai'(0)
_INV_SQRT_PI = 5.64189583547756286948e-01
_SERIES_TERMS = 16
_EDGE = 2.09
_UNDERFLOW = 103.892


def _rational(numerator, denominator, t: Tensor) -> Tensor:
    return _special._horner(numerator, t) / _special._horner(denominator, t)


def _oscillating(x: Tensor) -> Tensor:
    """Ai at ``x <= -2.09``."""
    a = -x
    zeta = a * a.sqrt() * (2 / 3)
    z = 1 / zeta
    zz = z * z
    f = 1 + zz * _rational(_AFN, _AFD, zz)
    g = z * _rational(_AGN, _AGD, zz)
    t = zeta + math.pi / 4
    return (t.sin() * f - t.cos() * g) * _INV_SQRT_PI / a.sqrt().sqrt()


def _decaying(x: Tensor) -> Tensor:
    """Ai at ``2.09 <= x <= 103.892``."""
    zeta = x * x.sqrt() * (2 / 3)
    return _rational(_AN, _AD, 1 / zeta) * (_INV_SQRT_PI / 2) / (x.sqrt().sqrt() * zeta.exp())


def _series(x: Tensor) -> Tensor:
    """Ai at ``|x| <= 2.09``: ``c1 f - c2 g``, ``f = sum x^3k / ((2 3)(5 6)...)``, ``g = sum x^(3k+1) / ((3 4)...)``."""
    z = x * x * x
    f, g = _ops.ones_like(x), x
    m, n = _ops.ones_like(x), x
    k = 1.0
    for _ in range(_SERIES_TERMS):
        m = m * z / ((k + 1) * (k + 2))
        n = n * z / ((k + 2) * (k + 3))
        f = f + m
        g = g + n
        k += 3
    return f * _C1 - g * _C2


def _airy_ai(x: Tensor) -> Tensor:
    value = _ops.where(x < -_EDGE, _oscillating(x.clamp(max=-_EDGE)),
                       _ops.where(x >= _EDGE, _decaying(x.clamp(_EDGE, _UNDERFLOW)), _series(x.clamp(-_EDGE, _EDGE))))
    return _ops.where(x.isinf(), math.nan, _ops.where(x > _UNDERFLOW, 0.0, value))


def airy_ai(input: Tensor, *, out=None) -> Tensor:  # noqa: A002 - torch's name
    """torch.special.airy_ai: the Airy function Ai (Note [Cephes Airy function])."""
    if not isinstance(input, Tensor):
        raise TypeError(f"special_airy_ai(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input.dtype in (_dt.float16, _dt.bfloat16) or input.dtype.is_complex:
        device = "cuda" if input.device.type == "cuda" else "cpu"
        raise NotImplementedError(f"\"airy_ai_{device}\" not implemented for '{_special._type_name(input.dtype)}'")
    d = input.dtype if input.dtype.is_floating_point else _dt.get_default_dtype()
    with no_grad():
        result = _airy_ai(input.detach().to(_dt.float64)).to(d)
    return _special._out("airy_ai", result, out)
