"""OpInfos: atan2, hypot, logaddexp, logaddexp2, fmax, fmin, copysign, xlogy, fmod, true_divide,
against NumPy (``backends/*/pointwise_binary_math.py``)."""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ..opinfo import ALL_DTYPES, FLOATING, OpInfo, SampleInput, make_arg
from .pointwise_samples import (
    FLOAT_RESULT_TOL,
    NO_BOOL,
    binary_samples,
    error,
    quiet_ref,
    scalar_samples,
    scalars_for,
    tensor_of,
    unary_samples,
)

__all__ = ["OPS"]


def _samples(rhs=None, nan=False):
    def samples(d, rng):
        yield from binary_samples(d, rng, rhs=rhs)
        if nan and d.is_floating_point:
            yield SampleInput((tensor_of([np.nan, 1.0, np.nan, -np.inf, 0.0], d),
                               tensor_of([2.0, np.nan, np.nan, 3.0, -0.0], d)), name="NaN operands")

    return samples


def _xlogy_samples(d, rng):
    yield from binary_samples(d, rng, rhs={"low": 0.5, "high": 4})
    if d.is_floating_point:
        yield SampleInput((tensor_of([0.0, 0.0, 2.0, 0.0], d), tensor_of([0.0, np.nan, 3.0, np.inf], d)),
                          name="x = 0: 0 unless y is NaN")


def _xlogy_ref(x, y):
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    with np.errstate(all="ignore"):
        return np.where((x == 0) & ~np.isnan(y), 0.0, x * np.log(y))


def _float_only_errors(name):
    def errors(rng):
        i = make_arg((3,), dt.int64, rng=rng)
        yield error((i, i), NotImplementedError, f"\"{name}_cpu\" not implemented for 'Long'")

    return errors


def _divisor_range(d):
    return {"low": 1, "high": 5} if not d.is_floating_point else {"low": 0.5, "high": 4}


def _fmod_samples(d, rng):
    yield from binary_samples(d, rng, rhs=_divisor_range(d))
    if d.is_signed and not d.is_floating_point:
        yield SampleInput((make_arg((3, 4), d, rng=rng), make_arg((3, 4), d, low=-6, high=0, rng=rng)),
                          name="negative divisors: C's truncated sign")


def st_ops():
    """The ``strided`` namespace (imported when a sample runs: the op database loads before the package ends)."""
    import strided

    return strided


def _f64(fn):
    return quiet_ref(lambda a, b: fn(np.asarray(a, np.float64), np.asarray(b, np.float64)))


OPS = [
    OpInfo("atan2", _samples(), ref=_f64(np.arctan2), dtypes=ALL_DTYPES, tolerances=FLOAT_RESULT_TOL),
    OpInfo("copysign.Tensor", _samples(nan=True), ref=_f64(np.copysign), dtypes=ALL_DTYPES,
           tolerances=FLOAT_RESULT_TOL),
    OpInfo("xlogy.Tensor", _xlogy_samples, ref=_xlogy_ref, dtypes=ALL_DTYPES, tolerances=FLOAT_RESULT_TOL),
    # the Scalar overloads: the number is torch's wrapped Scalar (promotes only across categories)
    OpInfo("copysign.Scalar", lambda d, rng: unary_samples(d, rng), op=lambda x: st_ops().copysign(x, -1.5),
           ref=quiet_ref(lambda x: np.copysign(np.asarray(x, np.float64), -1.5)), dtypes=ALL_DTYPES,
           tolerances=FLOAT_RESULT_TOL),
    OpInfo("copysign_.Scalar", lambda d, rng: unary_samples(d, rng), op=lambda x: x.clone().copysign_(-0.0),
           ref=quiet_ref(lambda x: np.copysign(np.asarray(x, np.float64), -0.0)), dtypes=FLOATING),
    OpInfo("xlogy.Scalar_Other", lambda d, rng: unary_samples(d, rng), op=lambda x: st_ops().xlogy(x, 2.5),
           ref=lambda x: _xlogy_ref(x, 2.5), dtypes=ALL_DTYPES, tolerances=FLOAT_RESULT_TOL),
    OpInfo("xlogy.Scalar_Self", lambda d, rng: (SampleInput((s.args[1],)) for s in _xlogy_samples(d, rng)),
           op=lambda y: st_ops().xlogy(3, y), ref=lambda y: _xlogy_ref(3.0, y), dtypes=ALL_DTYPES,
           tolerances=FLOAT_RESULT_TOL),
    OpInfo("hypot", _samples(), ref=_f64(np.hypot), dtypes=FLOATING, errors=_float_only_errors("hypot")),
    OpInfo("logaddexp", _samples(nan=True), ref=_f64(np.logaddexp), dtypes=FLOATING,
           errors=_float_only_errors("logaddexp")),
    OpInfo("logaddexp2", _samples(nan=True), ref=_f64(np.logaddexp2), dtypes=FLOATING,
           errors=_float_only_errors("logaddexp2")),
    OpInfo("fmax", _samples(nan=True), ref=quiet_ref(np.fmax), dtypes=ALL_DTYPES),
    OpInfo("fmin", _samples(nan=True), ref=quiet_ref(np.fmin), dtypes=ALL_DTYPES),
    OpInfo("fmod.Tensor", _fmod_samples, ref=quiet_ref(np.fmod), dtypes=NO_BOOL,
           errors=lambda rng: [error((make_arg((2,), dt.bool, rng=rng),) * 2, NotImplementedError,
                                     "\"fmod_cpu\" not implemented for 'Bool'")]),
    OpInfo("fmod.Scalar", lambda d, rng: scalar_samples(d, rng, scalars_for(d, ints=(3, -2))),
           ref=quiet_ref(np.fmod), dtypes=NO_BOOL),
    OpInfo("true_divide.Tensor", lambda d, rng: binary_samples(d, rng, rhs=_divisor_range(d)),
           ref=_f64(np.true_divide), dtypes=NO_BOOL, tolerances=FLOAT_RESULT_TOL),
    OpInfo("true_divide.Scalar", lambda d, rng: scalar_samples(d, rng, (2.5, 4)), ref=_f64(np.true_divide),
           dtypes=NO_BOOL, tolerances=FLOAT_RESULT_TOL),
]
