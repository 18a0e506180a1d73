"""torch.special's Bessel functions of the first and second kind, ``bessel_j0`` / ``bessel_j1`` / ``bessel_y0`` /
``bessel_y1``, and the modified ones of the second kind, ``modified_bessel_k0`` / ``modified_bessel_k1`` and their
exponentially scaled forms (``strided.special``).

Note [Cephes Bessel functions]
torch's kernels (``ATen/native/Math.h``) are Cephes' rational and Chebyshev approximations; these are the same
approximations composed of strided's ops (so they run on every backend), branch by branch with ``where``:

* J0, J1: ``|x| <= 5`` a rational function of ``x^2`` times its factors at the first zeros; beyond, the
  Hankel asymptotic form ``sqrt(2 / (pi x)) (P(25/x^2) cos(x - phase) - 5/x Q(25/x^2) sin(x - phase))`` with
  ``P`` and ``Q`` ratios of polynomials. J1 is odd, J0 even.
* Y0, Y1: ``x <= 5`` a rational function plus ``2/pi log(x) J0(x)`` (Y1: ``2/pi (J1(x) log(x) - 1/x)``); beyond,
  the same asymptotic form with sine and cosine exchanged. ``-inf`` at 0, NaN below.
* K0, K1: ``x <= 2`` Chebyshev series in ``x^2 - 2`` minus (plus) ``log(x/2) I0(x)`` (``I1``); beyond,
  ``exp(-x) / sqrt(x)`` times a Chebyshev series in ``8/x - 2``. The scaled forms multiply by ``exp(x)``. ``inf``
  at 0, NaN below.

Cephes evaluates the denominators of J and Y with ``p1evl`` -- a polynomial whose leading coefficient 1 is not
stored. torch's kernels evaluate those arrays with an ordinary Horner loop, dropping that term; their J0, J1, Y0
and Y1 are off by up to ~1e-6 absolute (1e-4 relative near the zeros) between 5 and about 20. strided keeps
Cephes' leading 1: its values are within ~1e-15 of mpmath's there (``tests/backend/test_special_bessel_jyk.py``).
torch's K0 and K1 are exact to rounding and strided agrees with them. As torch's, the results carry no gradient
and half and complex inputs are refused; integer inputs give the default float dtype.
"""

from __future__ import annotations

import math

from . import dtypes as _dt
from . import special as _special
from .autograd.grad_mode import no_grad
from .ops import bound as _ops
from .tensor import Tensor

__all__ = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_k0", "modified_bessel_k1",
           "scaled_modified_bessel_k0", "scaled_modified_bessel_k1"]

_J0_PP = (0.0007969367292973471, 0.08283523921074408, 1.239533716464143, 5.447250030587687, 8.74716500199817,
    5.303240382353949, 1.0)
_J0_PQ = (0.0009244088105588637, 0.08562884743544745, 1.2535274390105895, 5.470977403304171, 8.761908832370695,
    5.306052882353947, 1.0)
_J0_QP = (-0.011366383889846916, -1.2825271867050931, -19.553954425773597, -93.20601521237683, -177.68116798048806,
    -147.07750515495118, -51.41053267665993, -6.050143506007285)
_J0_QQ = (1.0, 64.3178256118178, 856.4300259769806, 3882.4018360540163, 7240.467741956525, 5930.727011873169,
    2062.0933166032783, 242.0057402402914)
_J0_RP = (-4794432209.782018, 1956174919465.5657, -249248344360967.72, 9708622510473064.0)
_J0_RQ = (1.0, 499.563147152651, 173785.4016763747, 48440965.83399621, 11185553704.535683, 2112775201154.892,
    310518229857422.56, 3.1812195594320496e+16, 1.7108629408104315e+18)
_Y0_YP = (15592.436785523574, -14663929.59039716, 5435264770.518765, -982136065717.9115, 87590639439536.7,
    -3466283033847297.0, 4.4273326857256984e+16, -1.8495080043698668e+16)
_Y0_YQ = (1.0, 1041.2835366425984, 626107.330137135, 268919633.39381415, 86400248710.3935, 20297961275010.555,
    3171577528429750.5, 2.5059625617265306e+17)
_J1_PP = (0.0007621256162081731, 0.07313970569409176, 1.1271960812968493, 5.112079511468076, 8.424045901417724,
    5.214515986823615, 1.0)
_J1_PQ = (0.0005713231280725487, 0.06884559087544954, 1.105142326340617, 5.073863861286015, 8.399855543276042,
    5.209828486823619, 1.0)
_J1_QP = (0.05108625947501766, 4.982138729512334, 75.82382841325453, 366.7796093601508, 710.8563049989261,
    597.4896124006136, 211.68875710057213, 25.207020585802372)
_J1_QQ = (1.0, 74.23732770356752, 1056.4488603826283, 4986.410583376536, 9562.318924047562, 7997.041604473507,
    2826.1927851763908, 336.0936078106983)
_J1_RP = (-899971225.7055594, 452228297998.19403, -72749424522181.83, 3682957328638529.0)
_J1_RQ = (1.0, 620.8364781180543, 256987.25675774884, 83514679.14319493, 22151159547.97925, 4749141220799.914,
    784369607876235.9, 8.952223361846274e+16, 5.322786203326801e+18)
_Y1_YP = (1263204747.9017804, -647355876379.1603, 114509511541823.73, -8127702555013251.0, 2.024394757135949e+17,
    -7.788771962659501e+17)
_Y1_YQ = (1.0, 594.3015923461282, 235564.09294306856, 73481194.44597217, 18760131610.870617, 3882312774962.3857,
    620557727146953.8, 6.871410873553005e+16, 3.9727060811656064e+18)
_K0_A = (1.374465435613523e-16, 4.25981614279661e-14, 1.0349695257633842e-11, 1.904516377220209e-09,
    2.5347910790261494e-07, 2.286212103119452e-05, 0.001264615411446926, 0.0359799365153615, 0.3442898999246285,
    -0.5353273932339028)
_K0_B = (5.300433772686263e-18, -1.6475804301524212e-17, 5.2103915050390274e-17, -1.678231096805412e-16,
    5.512055978524319e-16, -1.848593377343779e-15, 6.3400764774050706e-15, -2.2275133269916698e-14,
    8.032890775363575e-14, -2.9800969231727303e-13, 1.140340588208475e-12, -4.514597883373944e-12,
    1.8559491149547177e-11, -7.957489244477107e-11, 3.577397281400301e-10, -1.69753450938906e-09,
    8.574034017414225e-09, -4.660489897687948e-08, 2.766813639445015e-07, -1.8317555227191195e-06,
    1.39498137188765e-05, -0.00012849549581627802, 0.0015698838857300533, -0.0314481013119645, 2.4403030820659555)
_K1_A = (-7.023863479386288e-18, -2.427449850519366e-15, -6.666901694199329e-13, -1.4114883926335278e-10,
    -2.213387630734726e-08, -2.4334061415659684e-06, -0.0001730288957513052, -0.006975723859639864,
    -0.12261118082265715, -0.3531559607765449, 1.5253002273389478)
_K1_B = (-5.756744483665017e-18, 1.7940508731475592e-17, -5.689462558442859e-17, 1.838093544366639e-16,
    -6.057047248373319e-16, 2.038703165624334e-15, -7.019837090418314e-15, 2.4771544244813043e-14,
    -8.976705182324994e-14, 3.3484196660784293e-13, -1.2891739609510289e-12, 5.13963967348173e-12,
    -2.1299678384275683e-11, 9.218315187605006e-11, -4.1903547593418965e-10, 2.015049755197033e-09,
    -1.0345762465678097e-08, 5.7410841254500495e-08, -3.5019606030878126e-07, 2.406484947837217e-06,
    -1.936197974166083e-05, 0.00019521551847135162, -0.002857816859622779, 0.10392373657681724, 2.7206261904844427)

_PIO4, _THPIO4 = math.pi / 4, 3 * math.pi / 4
_SQ2OPI, _TWOOPI = math.sqrt(2 / math.pi), 2 / math.pi
_J0_ZEROS2 = (5.78318596294678452118e00, 3.04712623436620863991e01)  # squares of J0's first two zeros
_J1_ZEROS2 = (1.46819706421238932572e01, 4.92184563216946036703e01)


def _operand(input, name: str) -> Tensor:
    """``input`` in the float dtype the function computes and returns, detached (no gradient, as torch's)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"special_{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if input.dtype in (_dt.float16, _dt.bfloat16) or input.dtype.is_complex:
        device = "cuda" if input.device.type == "cuda" else "cpu"
        raise NotImplementedError(f"\"{name}_{device}\" not implemented for '{_special._type_name(input.dtype)}'")
    d = input.dtype if input.dtype.is_floating_point else _dt.get_default_dtype()
    return input.detach().to(d)


def _rational(numerator, denominator, t: Tensor) -> Tensor:
    return _special._horner(numerator, t) / _special._horner(denominator, t)


def _chebyshev_series(coefficients, t: Tensor) -> Tensor:
    """Cephes' ``chbevl``: the Chebyshev series with ``coefficients`` (highest order first) at ``t``."""
    b0 = _ops.full_like(t, coefficients[0])
    b1 = b2 = _ops.zeros_like(t)
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = t * b1 - b2 + c
    return (b0 - b2) * 0.5


def _hankel(x: Tensor, pp, pq, qp, qq, phase: float, second_kind: bool) -> Tensor:
    """The asymptotic form of J (``second_kind``: Y) beyond 5, at ``x >= 5``."""
    w = 5 / x
    z = w * w
    p, q = _rational(pp, pq, z), _rational(qp, qq, z)
    xn = x - phase
    if second_kind:
        return (p * xn.sin() + w * q * xn.cos()) * _SQ2OPI / x.sqrt()
    return (p * xn.cos() - w * q * xn.sin()) * _SQ2OPI / x.sqrt()


def _j0(x: Tensor) -> Tensor:
    a = x.abs()
    small = a.clamp(max=5.0)
    z = small * small
    near = (z - _J0_ZEROS2[0]) * (z - _J0_ZEROS2[1]) * _rational(_J0_RP, _J0_RQ, z)
    near = _ops.where(a < 1e-5, 1 - z / 4, near)
    far = _hankel(a.clamp(min=5.0), _J0_PP, _J0_PQ, _J0_QP, _J0_QQ, _PIO4, False)
    return _ops.where(a <= 5, near, far)


def _j1(x: Tensor) -> Tensor:
    a = x.abs()
    small = a.clamp(max=5.0)
    z = small * small
    near = _rational(_J1_RP, _J1_RQ, z) * small * (z - _J1_ZEROS2[0]) * (z - _J1_ZEROS2[1])
    far = _hankel(a.clamp(min=5.0), _J1_PP, _J1_PQ, _J1_QP, _J1_QQ, _THPIO4, False)
    return _ops.where(a <= 5, near, far) * x.sign()


def _tiny(x: Tensor) -> float:
    return 1e-300 if x.dtype is _dt.float64 else 1e-37


def _singular_at_zero(x: Tensor, value: Tensor, at_zero: float) -> Tensor:
    """``value`` with ``at_zero`` at 0 and NaN below it (the Y and K functions' domain)."""
    return _ops.where(x < 0, math.nan, _ops.where(x == 0, at_zero, value))


def _y0(x: Tensor) -> Tensor:
    small = x.clamp(_tiny(x), 5.0)
    near = _rational(_Y0_YP, _Y0_YQ, small * small) + _TWOOPI * small.log() * _j0(small)
    far = _hankel(x.clamp(min=5.0), _J0_PP, _J0_PQ, _J0_QP, _J0_QQ, _PIO4, True)
    return _singular_at_zero(x, _ops.where(x <= 5, near, far), -math.inf)


def _y1(x: Tensor) -> Tensor:
    small = x.clamp(_tiny(x), 5.0)
    near = small * _rational(_Y1_YP, _Y1_YQ, small * small) + _TWOOPI * (_j1(small) * small.log() - 1 / small)
    far = _hankel(x.clamp(min=5.0), _J1_PP, _J1_PQ, _J1_QP, _J1_QQ, _THPIO4, True)
    return _singular_at_zero(x, _ops.where(x <= 5, near, far), -math.inf)


def _k(x: Tensor, order: int, scaled: bool) -> Tensor:
    from .special_bessel import i1

    small = x.clamp(_tiny(x), 2.0)
    series = _chebyshev_series(_K0_A if order == 0 else _K1_A, small * small - 2)
    if order == 0:
        near = series - (small * 0.5).log() * _special.i0(small)
    else:
        near = (small * 0.5).log() * i1(small) + series / small
    big = x.clamp(min=2.0)
    far = _chebyshev_series(_K0_B if order == 0 else _K1_B, 8 / big - 2) / big.sqrt()
    if scaled:
        near = near * small.exp()
    else:
        far = far * (-big).exp()
    return _singular_at_zero(x, _ops.where(x <= 2, near, far), math.inf)


def _function(name: str, compute, doc: str):
    def fn(input: Tensor, *, out=None) -> Tensor:  # noqa: A002 - torch's name
        x = _operand(input, name)
        with no_grad():
            result = compute(x)
        return _special._out(name, result, out)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.special.{name}: {doc} (Note [Cephes Bessel functions])."
    return fn


bessel_j0 = _function("bessel_j0", _j0, "the Bessel function of the first kind of order 0")
bessel_j1 = _function("bessel_j1", _j1, "the Bessel function of the first kind of order 1")
bessel_y0 = _function("bessel_y0", _y0, "the Bessel function of the second kind of order 0")
bessel_y1 = _function("bessel_y1", _y1, "the Bessel function of the second kind of order 1")
modified_bessel_k0 = _function("modified_bessel_k0", lambda x: _k(x, 0, False),
                               "the modified Bessel function of the second kind of order 0")
modified_bessel_k1 = _function("modified_bessel_k1", lambda x: _k(x, 1, False),
                               "the modified Bessel function of the second kind of order 1")
scaled_modified_bessel_k0 = _function("scaled_modified_bessel_k0", lambda x: _k(x, 0, True),
                                      "``exp(x) K0(x)``")
scaled_modified_bessel_k1 = _function("scaled_modified_bessel_k1", lambda x: _k(x, 1, True),
                                      "``exp(x) K1(x)``")
