"""OpInfos: Elementwise math (``backends/*/math_more.py``, ``ops/composite/pointwise_math.py``) and counting
ops (``ops/composite/counting.py``) against NumPy."""

from __future__ import annotations

import math

import numpy as np

from ... import dtypes as dt
from ...ops import bound
from ..opinfo import ALL_DTYPES, FLOATING, INTEGRAL, TOLERANCES, OpInfo, SampleInput, make_arg
from .pointwise_samples import (
    FLOAT_RESULT_TOL,
    binary_samples,
    error,
    inplace_variant,
    quiet_ref,
    tensor_of,
    unary_samples,
)

__all__ = ["OPS"]

_NO_BOOL = FLOATING + INTEGRAL
# float_power computes integer inputs in float64, where CUDA's pow may differ from the CPU's by an ulp
_FLOAT64_RESULT_TOL = {d: TOLERANCES[dt.float64] for d in INTEGRAL}
_SIGNED_INT = (dt.int64, dt.int32, dt.int16, dt.int8)
_F = (dt.float32, dt.float64)
_SPECIAL = (0.0, -0.0, np.inf, -np.inf, np.nan, 1.5, -2.25)


def _f64(fn):
    return quiet_ref(lambda *a, **k: fn(*(np.asarray(x, np.float64) if isinstance(x, np.ndarray) else x
                                          for x in a), **k))


def _unary(name, ref, dtypes, special=_SPECIAL, low=None, high=None, kwargs=None, tol=FLOAT_RESULT_TOL, **kw):
    return OpInfo(name, lambda d, rng: unary_samples(d, rng, low=low, high=high, special=special, kwargs=kwargs),
                  ref=ref, dtypes=dtypes, tolerances=tol, **kw)


def _int_errors(name):
    def errors(rng):
        f = make_arg((3,), dt.float32, rng=rng)
        yield error((f, f), NotImplementedError, f"\"{name}_cpu\" not implemented for 'Float'")

    return errors


def _float_errors(name):
    def errors(rng):
        i = make_arg((3,), dt.int64, rng=rng)
        yield error((i, i), NotImplementedError, f"\"{name}_cpu\" not implemented for 'Long'")

    return errors


def _lcm_ref(a, b):
    return np.lcm(a.astype(np.int64), b.astype(np.int64))


def _igamma_samples(d, rng):
    yield from binary_samples(d, rng, lhs={"low": 0.1, "high": 12}, rhs={"low": 0.0, "high": 15})
    yield SampleInput((tensor_of([0.0, -1, 1, 1, 2, np.inf, 1, np.nan, 0, 3, 50, 0.5], d),
                       tensor_of([1.0, 1, 0, -1, np.inf, 3, 1e-30, 1, 0, 0, 49, 80], d)), name="edge cases")


def _igamma_ref(upper):
    def ref(a, x):
        from mpmath import gammainc, mp

        mp.dps = 30
        out = np.empty(np.broadcast(a, x).shape)
        for i, (ai, xi) in enumerate(zip(*(np.broadcast_to(v, out.shape).ravel() for v in (a, x)))):
            ai, xi = float(ai), float(xi)
            if math.isnan(ai) or math.isnan(xi) or ai < 0 or xi < 0 or (ai == 0 and xi == 0) or (
                    math.isinf(ai) and math.isinf(xi)):
                v = math.nan
            elif xi == 0 or math.isinf(ai):
                v = 0.0
            elif ai == 0 or math.isinf(xi):
                v = 1.0
            else:
                v = float(gammainc(ai, 0, xi, regularized=True))
            out.ravel()[i] = 1 - v if upper and not math.isnan(v) else v
        return out

    return ref


def _zeta_samples(d, rng):
    yield from binary_samples(d, rng, lhs={"low": 1.1, "high": 9}, rhs={"low": 0.05, "high": 12})
    yield SampleInput((tensor_of([2.0, 1, 0.5, 3, 2.5, 2, 4, 3, np.nan, 2, np.inf, 6], d),
                       tensor_of([1.0, 2, 2, -2, -1.5, -1.5, -70.25, -100.5, 1, np.nan, 2, -3.75], d)),
                      name="domain, poles and negative q")


def _zeta_ref(x, q):
    """torch's domain (Cephes), then the negative terms one by one and mpmath at a positive argument."""
    from mpmath import fsum, mp, mpf, power
    from mpmath import zeta as mp_zeta

    mp.dps = 30
    out = np.empty(np.broadcast(x, q).shape)
    for i, (xi, qi) in enumerate(zip(*(np.broadcast_to(v, out.shape).ravel() for v in (x, q)))):
        xi, qi = float(xi), float(qi)
        if math.isnan(xi) or math.isnan(qi) or xi < 1 or math.isinf(xi):
            v = math.nan
        elif xi == 1 or (qi <= 0 and qi == math.floor(qi)):
            v = math.inf
        elif qi < 0 and xi != math.floor(xi):
            v = math.nan
        else:
            m = max(0, math.ceil(-qi))
            v = float(fsum(power(mpf(qi) + k, -xi) for k in range(m)) + mp_zeta(xi, mpf(qi) + m))
        out.ravel()[i] = v
    return out


def _frexp_ref(x):
    m, e = np.frexp(np.asarray(x, np.float64))
    return m, np.where(np.isfinite(m), e, 0)


def _ldexp_samples(d, rng):
    yield from binary_samples(d, rng, rhs={"low": -4, "high": 5}, rhs_dtype=dt.int64)


def _heaviside_samples(d, rng):
    yield from (s for s in binary_samples(d, rng) if s.args[1].dtype is d)
    yield SampleInput((tensor_of([0, 1, -1, 0], d), tensor_of([1, 1, 1, 0], d)), name="zeros take values")


def _heaviside_ref(x, v):
    return np.heaviside(x, v) if x.dtype != np.bool_ else np.logical_or(x, v)


def _logit_ref(x, eps=None):
    x = np.asarray(x, np.float64)
    if eps is not None:
        x = np.clip(x, eps, 1 - eps)
    return np.log(x / (1 - x))


def _pow_ref(a, b):
    return np.power(np.asarray(a, np.float64), np.asarray(b, np.float64))


def _float_power_samples(d, rng):
    yield from binary_samples(d, rng, lhs={"low": 0.5, "high": 3} if d.is_floating_point else {"low": 1, "high": 4},
                              rhs={"low": -2, "high": 3})


def _kth_samples(d, rng):
    x = tensor_of(np.random.default_rng(3).permutation(24).reshape(4, 6), d)
    yield SampleInput((x, 2), name="last dim")
    yield SampleInput((x.t(), 3, 0, True), name="dim 0, keepdim, noncontiguous")
    yield SampleInput((tensor_of(5, d), 1), name="0-dim")
    yield SampleInput((tensor_of(np.zeros((0, 3)), d), 1, 1), name="zero rows")


def _kth_ref(x, k, dim=-1, keepdim=False):
    x = np.asarray(x)
    if x.ndim == 0:
        return x, np.int64(0)
    idx = np.argsort(x, axis=dim, kind="stable")
    i = np.take(idx, [k - 1], axis=dim)
    v = np.take_along_axis(x, i, dim)
    return (v, i) if keepdim else (np.squeeze(v, dim), np.squeeze(i, dim))


def _bincount_samples(d, rng):
    x = make_arg((20,), d, low=0, high=7, rng=rng)
    yield SampleInput((x,), name="counts")
    yield SampleInput((x, make_arg((20,), dt.float32, rng=rng)), name="float weights")
    yield SampleInput((x[::2], make_arg((10,), dt.int64, rng=rng), 12), name="int weights, minlength")
    yield SampleInput((tensor_of(np.zeros(0), d), None, 3), name="empty")


def _bincount_ref(x, weights=None, minlength=0):
    out = np.bincount(x, weights=weights, minlength=minlength)
    return out if weights is None or np.asarray(weights).dtype == np.float32 else out.astype(np.float64)


def _histc_samples(d, rng):
    # explicit ranges first: the gradcheck takes the first small samples, and a data range moves every bin
    # with its extreme elements (no derivative, as torch's histc)
    yield SampleInput((tensor_of([1.3, 2.9, np.nan, 4.6, -1, 5.5], d), 4, 1, 5), name="outside, NaN")
    edges = tensor_of([-5.0, 6.0, 0.5, 6.0001], d)  # both edges in, the top one closing the last bin
    yield SampleInput((bound.cat([make_arg((46,), d, rng=rng), edges]), 7, -5, 6), name="range, edges")
    yield SampleInput((make_arg((4, 10), d, rng=rng, noncontiguous=True), 5), name="data range")
    yield SampleInput((tensor_of([2.0] * 31, d), 4), name="one value")


def _histc_ref(x, bins=100, min=0, max=0):  # noqa: A002
    x = np.asarray(x).astype(np.float64).ravel()
    lo, hi = float(min), float(max)
    if lo == hi and x.size:
        lo, hi = np.nanmin(x), np.nanmax(x)
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    return np.histogram(x[(x >= lo) & (x <= hi)], bins=bins, range=(lo, hi))[0]


def _histogram_samples(tensor_bins):
    def samples(d, rng):
        x = make_arg((40,), d, rng=rng)
        if tensor_bins:
            yield SampleInput((x, tensor_of([-9.0, -2, 0, 0.5, 9], d)), name="edges")
            yield SampleInput((x.reshape(5, 8), tensor_of([-3.0, 0, 3], d)), {"weight": make_arg((5, 8), d, rng=rng),
                                                                             "density": True},
                              name="weights, density")
        else:
            yield SampleInput((make_arg((10,), d, rng=rng), 3), {"range": [-2.5, 6.5]}, name="small, range")
            yield SampleInput((x, 6), name="data range")
            yield SampleInput((x, 4), {"range": [-3.0, 5.0], "weight": make_arg((40,), d, low=0, rng=rng)},
                              name="range, weights")
            yield SampleInput((x, 5), {"density": True}, name="density")

    return samples


def _histogram_ref(x, bins=100, range=None, weight=None, density=False):  # noqa: A002
    x = np.asarray(x, np.float64).ravel()
    w = None if weight is None else np.asarray(weight, np.float64).ravel()
    h, e = np.histogram(x, bins=bins, range=range, weights=w, density=density)
    return h, e


def _isin_samples(d, rng):
    a = make_arg((3, 5), d, rng=rng, low=0, high=6)
    b = make_arg((7,), d, rng=rng, low=0, high=6)
    yield SampleInput((a, b), name="tensors")
    yield SampleInput((a.t(), b.reshape(7, 1)), {"invert": True}, name="invert, noncontiguous")
    yield SampleInput((a, b[:0]), name="empty test elements")
    if d.is_floating_point:
        yield SampleInput((tensor_of([np.nan, 1.0], d), tensor_of([np.nan, 1.0], d)), name="NaN is never in")


def _isin_ref(a, b, assume_unique=False, invert=False):
    return np.isin(a, b, invert=invert)


def _unravel_samples(d, rng):
    yield SampleInput((make_arg((2, 3), d, low=0, high=24, rng=rng), (2, 3, 4)), name="3-D shape")
    yield SampleInput((make_arg((), d, low=0, high=5, rng=rng), 5), name="int shape")


def _unravel_ref(indices, shape):
    return np.unravel_index(indices, shape)


def _xlogy_samples(d, rng):
    for s in binary_samples(d, rng, rhs={"low": 0.5, "high": 4}):
        if s.args[0].shape == np.broadcast_shapes(s.args[0].shape, s.args[1].shape):
            yield s


def _xlogy_inplace(self, other):
    dst = self.clone()
    assert dst.xlogy_(other) is dst
    return dst


def _xlogy_ref(x, y):
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    return np.where((x == 0) & ~np.isnan(y), 0.0, x * np.log(y))


_GCD = OpInfo("gcd", binary_samples, ref=np.gcd, dtypes=INTEGRAL, errors=_int_errors("gcd"))
_LCM = OpInfo("lcm", binary_samples, ref=_lcm_ref, dtypes=INTEGRAL, errors=_int_errors("lcm"))
_NEXT = OpInfo("nextafter", binary_samples, ref=None, dtypes=FLOATING,
               check=lambda r, s: None if r.dtype is not dt.float64 else np.testing.assert_array_equal(
                   r.numpy(force=True), np.nextafter(s.args[0].numpy(), s.args[1].numpy())))
_IGAMMA_TOL = {dt.float32: (1e-5, 1e-6), dt.float16: (2e-3, 1e-3), dt.bfloat16: (1.6e-2, 1e-2)}
# float64 is checked in tests/backend/test_math_indexing_counting.py (Note [igamma's gradient] in derivatives.yaml:
# the gradcheck of every float64 OpInfo would ask for the gradient in self, which raises as torch's)
_IGAMMA_DTYPES = (dt.float32, dt.float16, dt.bfloat16)
_IGAMMA = OpInfo("igamma", _igamma_samples, ref=_igamma_ref(False), dtypes=_IGAMMA_DTYPES, tolerances=_IGAMMA_TOL,
                 errors=_float_errors("igamma"))
_IGAMMAC = OpInfo("igammac", _igamma_samples, ref=_igamma_ref(True), dtypes=_IGAMMA_DTYPES, tolerances=_IGAMMA_TOL)
# float32 only: a float64 OpInfo is gradchecked in every input, and zeta's derivative in x raises (as igamma's);
# float64 and the split below q = -64 are checked in tests/backend/test_special_airy_zeta.py
_ZETA = OpInfo("special_zeta", _zeta_samples, ref=_zeta_ref, dtypes=(dt.float32,), tolerances=_IGAMMA_TOL,
               errors=lambda rng: [error((make_arg((2,), dt.float16, rng=rng), make_arg((2,), dt.float16, rng=rng)),
                                         NotImplementedError, "\"zeta_cpu\" not implemented for 'Half'")])
_LDEXP = OpInfo("ldexp.Tensor", _ldexp_samples, ref=lambda a, b: np.asarray(a, np.float64) * 2.0 ** b,
                dtypes=_NO_BOOL, tolerances=FLOAT_RESULT_TOL)
_HEAVI = OpInfo("heaviside", _heaviside_samples, ref=_heaviside_ref, dtypes=ALL_DTYPES)
_LOGIT = _unary("logit", _logit_ref, FLOATING, low=0.05, high=0.95)
_SINC = _unary("sinc", _f64(np.sinc), ALL_DTYPES)
_DEG = _unary("deg2rad", _f64(np.deg2rad), ALL_DTYPES)
_RAD = _unary("rad2deg", _f64(np.rad2deg), ALL_DTYPES)
_FP = OpInfo("float_power.Tensor_Tensor", _float_power_samples, ref=_pow_ref, dtypes=_NO_BOOL,
             tolerances=_FLOAT64_RESULT_TOL)

OPS = [
    _GCD, inplace_variant(_GCD, "gcd_", "gcd_"), _LCM, inplace_variant(_LCM, "lcm_", "lcm_"),
    _NEXT, inplace_variant(_NEXT, "nextafter_", "nextafter_"),
    OpInfo("frexp.Tensor", lambda d, rng: unary_samples(d, rng, special=_SPECIAL), ref=_frexp_ref, dtypes=FLOATING,
           errors=lambda rng: [error((make_arg((2,), dt.int64, rng=rng),), RuntimeError,
                                     "torch.frexp() only supports floating-point dtypes")]),
    _LDEXP, inplace_variant(_LDEXP, "ldexp_", "ldexp_", dtypes=FLOATING),
    _unary("signbit", lambda x: np.signbit(x) if x.dtype.kind == "f" else x < 0, ALL_DTYPES),
    _HEAVI, inplace_variant(_HEAVI, "heaviside_", "heaviside_"),
    _LOGIT, inplace_variant(_LOGIT, "logit_", "logit_", dtypes=FLOATING),
    _unary("logit", _logit_ref, _F, special=(0.0, 0.5, 1.0, 2.0), kwargs={"eps": 0.1}),
    _SINC, inplace_variant(_SINC, "sinc_", "sinc_", dtypes=FLOATING),
    _FP,
    OpInfo("float_power.Tensor_Scalar", lambda d, rng: (SampleInput((s.args[0], 2.5)) for s in
                                                        _float_power_samples(d, rng)), ref=_pow_ref, dtypes=_NO_BOOL,
           tolerances=_FLOAT64_RESULT_TOL),
    OpInfo("float_power.Scalar", lambda d, rng: (SampleInput((2, s.args[1])) for s in _float_power_samples(d, rng)),
           ref=_pow_ref, dtypes=_NO_BOOL, tolerances=_FLOAT64_RESULT_TOL),
    OpInfo("float_power_.Tensor", lambda d, rng: (s for s in _float_power_samples(d, rng)
                                                  if s.args[0].shape == np.broadcast_shapes(s.args[0].shape,
                                                                                            s.args[1].shape)),
           ref=_pow_ref, op=lambda a, b: a.clone().float_power_(b), dtypes=(dt.float64,)),
    OpInfo("float_power_.Scalar", lambda d, rng: (SampleInput((s.args[0], 3)) for s in _float_power_samples(d, rng)),
           ref=_pow_ref, op=lambda a, b: a.clone().float_power_(b), dtypes=(dt.float64,),
           errors=lambda rng: [error((make_arg((2,), dt.float32, rng=rng), 2), RuntimeError,
                                     "the base given to float_power_ has dtype Float but the operation's result "
                                     "requires dtype Double")]),
    _DEG, inplace_variant(_DEG, "deg2rad_", "deg2rad_", dtypes=FLOATING),
    _RAD, inplace_variant(_RAD, "rad2deg_", "rad2deg_", dtypes=FLOATING),
    _unary("isneginf", np.isneginf, ALL_DTYPES),
    _unary("isposinf", np.isposinf, ALL_DTYPES),
    _unary("isreal", lambda x: np.ones(np.shape(x), bool), ALL_DTYPES),
    OpInfo("xlogy_.Tensor", _xlogy_samples, ref=_xlogy_ref, op=_xlogy_inplace, dtypes=FLOATING,
           tolerances=FLOAT_RESULT_TOL),
    OpInfo("xlogy_.Scalar_Other", lambda d, rng: unary_samples(d, rng, kwargs=None), ref=lambda x: _xlogy_ref(x, 2.5),
           op=lambda x: _xlogy_inplace(x, 2.5), dtypes=FLOATING, tolerances=FLOAT_RESULT_TOL),
    _ZETA,
    OpInfo("special_zeta.other_scalar", lambda d, rng: (SampleInput((s.args[0],)) for s in _zeta_samples(d, rng)),
           ref=lambda x: _zeta_ref(x, 2.5), op=lambda x: bound.special_zeta(x, 2.5), dtypes=(dt.float32,),
           tolerances=_IGAMMA_TOL),
    OpInfo("special_zeta.self_scalar", lambda d, rng: (SampleInput((s.args[1],)) for s in _zeta_samples(d, rng)),
           ref=lambda q: _zeta_ref(3.0, q), op=lambda q: bound.special_zeta(3, q), dtypes=(dt.float32,),
           tolerances=_IGAMMA_TOL),
    _IGAMMA, inplace_variant(_IGAMMA, "igamma_", "igamma_"),
    _IGAMMAC, inplace_variant(_IGAMMAC, "igammac_", "igammac_"),
    OpInfo("kthvalue", _kth_samples, ref=_kth_ref, dtypes=_NO_BOOL),
    OpInfo("bincount", _bincount_samples, ref=_bincount_ref, dtypes=(dt.int64, dt.int32, dt.uint8),
           data_dependent=True, tolerances={dt.int64: (1e-6, 1e-5), dt.int32: (1e-6, 1e-5), dt.uint8: (1e-6, 1e-5)}),
    OpInfo("histc", _histc_samples, ref=_histc_ref, dtypes=_F),
    OpInfo("histogram.bins_tensor", _histogram_samples(True), ref=_histogram_ref, dtypes=_F,
           tolerances={dt.float32: (1e-5, 1e-6)}),
    OpInfo("histogram.bin_ct", _histogram_samples(False), ref=_histogram_ref, dtypes=_F,
           tolerances={dt.float32: (1e-5, 1e-5)}),
    OpInfo("isin.Tensor_Tensor", _isin_samples, ref=_isin_ref, dtypes=_NO_BOOL),
    OpInfo("isin.Tensor_Scalar", lambda d, rng: (SampleInput((s.args[0], 3), s.kwargs) for s in _isin_samples(d, rng)),
           ref=_isin_ref, dtypes=_NO_BOOL),
    OpInfo("isin.Scalar_Tensor", lambda d, rng: (SampleInput((3, s.args[1]), s.kwargs) for s in _isin_samples(d, rng)),
           ref=_isin_ref, dtypes=_NO_BOOL),
    OpInfo("unravel_index", _unravel_samples, ref=_unravel_ref, dtypes=(dt.int64, dt.int32)),
]
