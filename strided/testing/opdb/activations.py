"""OpInfos: the activation operators of Note [Functional operators] (elu, celu, hardsigmoid, hardswish, mish,
softshrink, hardshrink, threshold, log_sigmoid, glu, _prelu_kernel and the in-place forms; hardtanh and leaky_relu
are in ``pointwise_unary``) against NumPy, with the edges where the branches meet, NaN and infinities."""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ..opinfo import FLOATING, OpInfo, SampleInput, make_arg
from .pointwise_samples import NO_BOOL, error, inplace_variant, quiet_ref, tensor_of, unary_samples

__all__ = ["OPS"]

_SPECIAL = (np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, -3.0, 3.0, -1.5, 2.5, -30.0, 30.0)
_FLOAT_ONLY = "\"{}_(cpu|cuda)\" not implemented for 'Long'"


def _f64(fn):
    return quiet_ref(lambda a, *args, **kw: fn(np.asarray(a, np.float64), *args, **kw))


def _samples(*kwargs_list, low=None, high=None):
    def samples(dtype, rng):
        yield from unary_samples(dtype, rng, special=_SPECIAL, low=low, high=high)
        for kwargs in kwargs_list:
            yield from unary_samples(dtype, rng, kwargs=kwargs, low=low, high=high)
    return samples


def _float_only(name, message=_FLOAT_ONLY):
    return lambda rng: [error((make_arg((3,), dt.int64, rng=rng),), NotImplementedError, message.format(name),
                              regex=True)]


def _elu_ref(a, alpha=1.0, scale=1.0, input_scale=1.0):
    return np.where(a > 0, a * scale, np.expm1(np.minimum(a, 0) * input_scale) * alpha * scale)


def _celu_ref(a, alpha=1.0):
    return _elu_ref(a, alpha, 1.0, 1.0 / alpha)


def _celu_errors(rng):
    return [error((make_arg((3,), dt.float32, rng=rng),), RuntimeError,
                  "ZeroDivisionError: alpha cannot be 0 for CELU", {"alpha": 0.0})]


def _hardsigmoid_ref(a):
    return np.clip(a + 3, 0, 6) / 6


def _hardswish_ref(a):
    return a * np.clip(a + 3, 0, 6) / 6


def _mish_ref(a):
    return a * np.tanh(np.logaddexp(0, a))


def _softshrink_ref(a, lambd=0.5):
    return np.where(np.abs(a) <= lambd, 0.0, a - np.sign(a) * lambd)


def _hardshrink_ref(a, lambd=0.5):
    return np.where(np.abs(a) <= lambd, 0.0, a)


def _softshrink_errors(rng):
    return [error((make_arg((3,), dt.float32, rng=rng),), RuntimeError,
                  r"lambda must be in range \[0, 3\.40282e\+38\] for input dtype Float, but found -1", {"lambd": -1.0},
                  regex=True),
            error((make_arg((3,), dt.int64, rng=rng),), NotImplementedError,
                  "\"softshrink_check\" not implemented for 'Long'")]


def _threshold_samples(dtype, rng):
    low, high = (0, 10) if dtype is dt.uint8 else (None, None)
    th, value = (4, 7) if not dtype.is_floating_point else (0.25, -2.0)
    yield from unary_samples(dtype, rng, kwargs={"threshold": th, "value": value}, low=low, high=high)
    if dtype.is_floating_point:
        yield SampleInput((tensor_of(_SPECIAL, dtype),), {"threshold": 0.5, "value": 9.0}, "special values")
        yield SampleInput((make_arg((3, 4), dtype, rng=rng),), {"threshold": 0.0, "value": float("nan")}, "NaN value")


def _threshold_ref(a, threshold, value):
    out = np.where(a <= threshold, value, a)
    return out.astype(a.dtype) if a.dtype.kind in "iu" else out


def _threshold_errors(rng):
    return [error((make_arg((3,), dt.bool, rng=rng),), NotImplementedError,
                  "\"threshold_(cpu|cuda)\" not implemented for 'Bool'", {"threshold": 0, "value": 1}, regex=True),
            error((make_arg((3,), dt.int8, rng=rng),), RuntimeError, "value cannot be converted to type int8_t without "
                  "overflow", {"threshold": 0, "value": 300})]


def _log_sigmoid_ref(a):
    return -np.logaddexp(0, -a)


def _glu_samples(dtype, rng):
    def a(shape, **kw):
        return make_arg(shape, dtype, rng=rng, **kw)

    yield SampleInput((a((3, 4)),), {}, "the last dim")
    yield SampleInput((a((4, 3)),), {"dim": 0}, "dim 0")
    yield SampleInput((a((2, 6, 3), noncontiguous=True),), {"dim": 1}, "noncontiguous")
    yield SampleInput((a((0, 4)),), {}, "zero-size")


def _glu_ref(a, dim=-1):
    x, y = np.split(a, 2, axis=dim)
    return x / (1 + np.exp(-y))


def _glu_errors(rng):
    return [error((make_arg((), dt.float32, rng=rng),), RuntimeError,
                  "glu does not support scalars because halving size must be even"),
            error((make_arg((2, 3), dt.float32, rng=rng),), RuntimeError,
                  "Halving dimension must be even, but dimension 1 is size 3"),
            error((make_arg((2, 4), dt.int64, rng=rng),), NotImplementedError, _FLOAT_ONLY.format("glu"), regex=True)]


def _prelu_samples(dtype, rng):
    def a(shape, **kw):
        return make_arg(shape, dtype, rng=rng, **kw)

    yield SampleInput((a((3, 4, 5)), a((1, 4, 1), low=0, high=1)), {}, "one weight per channel")
    yield SampleInput((a((2, 3, 4, 4), noncontiguous=True), a((1, 3, 1, 1))), {}, "4-d, noncontiguous")
    yield SampleInput((a((3, 4)), a((1, 1))), {}, "one weight")
    yield SampleInput((a(()), a(())), {}, "0-dim")


elu = OpInfo("elu", _samples({"alpha": 0.7}, {"alpha": 1.3, "scale": 2.0, "input_scale": 0.5}, {"alpha": -0.5}),
             ref=_f64(_elu_ref), dtypes=FLOATING, errors=_float_only("elu"))
celu = OpInfo("celu", _samples({"alpha": 1.5}, {"alpha": 0.25}), ref=_f64(_celu_ref), dtypes=FLOATING,
              errors=_celu_errors)
hardsigmoid = OpInfo("hardsigmoid", _samples(low=-5, high=5), ref=_f64(_hardsigmoid_ref), dtypes=FLOATING,
                     errors=_float_only("hardsigmoid"))
hardswish = OpInfo("hardswish", _samples(low=-5, high=5), ref=_f64(_hardswish_ref), dtypes=FLOATING,
                   errors=_float_only("hardswish"))
mish = OpInfo("mish", _samples(), ref=_f64(_mish_ref), dtypes=FLOATING, errors=_float_only("mish"))
softshrink = OpInfo("softshrink", _samples({"lambd": 0.2}, {"lambd": 0.0}), ref=_f64(_softshrink_ref),
                    dtypes=FLOATING, errors=_softshrink_errors)
hardshrink = OpInfo("hardshrink", _samples({"lambd": 0.2}, {"lambd": 1.5}), ref=_f64(_hardshrink_ref),
                    dtypes=FLOATING, errors=_float_only("hardshrink"))
threshold = OpInfo("threshold", _threshold_samples, ref=quiet_ref(_threshold_ref), dtypes=NO_BOOL,
                   errors=_threshold_errors)
log_sigmoid = OpInfo("log_sigmoid", _samples(), ref=_f64(_log_sigmoid_ref), dtypes=FLOATING,
                     errors=_float_only("log_sigmoid", "\"{}_(cpu|forward_cuda)\" not implemented for 'Long'"))
glu = OpInfo("glu", _glu_samples, ref=_f64(_glu_ref), dtypes=FLOATING, errors=_glu_errors)
prelu_kernel = OpInfo("_prelu_kernel", _prelu_samples, ref=quiet_ref(lambda a, w: np.where(a > 0, a, w * a)),
                      dtypes=FLOATING, errors=lambda rng: [error((make_arg((3,), dt.int64, rng=rng),
                                                                  make_arg((1,), dt.int64, rng=rng)),
                                                                 NotImplementedError, _FLOAT_ONLY.format("prelu"),
                                                                 regex=True)])

OPS: list = [
    elu, celu, hardsigmoid, hardswish, mish, softshrink, hardshrink, threshold, log_sigmoid, glu, prelu_kernel,
    # python_module: nn, no method; the explicit in-place gradients read the result: torch refuses a negative alpha
    inplace_variant(elu, "elu_", None, keep=lambda s: s.kwargs.get("alpha", 1.0) >= 0),
    inplace_variant(celu, "celu_", None, keep=lambda s: s.kwargs.get("alpha", 1.0) >= 0),
    inplace_variant(hardsigmoid, "hardsigmoid_", None), inplace_variant(hardswish, "hardswish_", None),
    inplace_variant(mish, "mish_", None), inplace_variant(threshold, "threshold_", None),
]
