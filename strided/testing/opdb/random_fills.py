"""OpInfos: the random fills and factories (``ops/composite/random_fills.py``): ranges, rough moments on
a few thousand draws and reproducibility under a seeded Generator on the result's device (``check``)."""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ...ops import bound
from ..opinfo import FLOATING, INTEGRAL, OpInfo, SampleInput, make_arg
from .factories_random import _random_check
from .helpers import err

__all__ = ["OPS"]

_N = 4000
_SIZES = ((_N,), (2, 3), (), (0, 2))


def _fill_samples(args):
    def samples(d, rng):
        for size in _SIZES:
            yield SampleInput((make_arg(size, d, rng=rng), *args), name=f"size {size}")
        yield SampleInput((make_arg((6, 4), d, rng=rng, noncontiguous=True), *args), name="noncontiguous")

    return samples


def _quantile_check(op, quantile, q=0.5, lo=None, integral=False):
    """The empirical ``q``-quantile near ``quantile`` (heavy-tailed laws have no moments), plus range and
    reproducibility."""
    base = _random_check(op, integral=integral, inplace=True)

    def check(result, sample):
        v = result.numpy(force=True).astype(np.float64)
        if lo is not None and v.size:
            assert v.min() >= lo, f"values below {lo}: {v.min()}"
        if v.size >= _N:
            got = np.quantile(v, q)
            assert abs(got - quantile) < 0.1 * max(abs(quantile), 1), f"quantile {q}: {got}, expected {quantile}"
        base(result, sample)

    return check


def _tensor_normal(name, make):
    def samples(d, rng):
        for size in ((_N,), (2, 3), (), (0, 2)):
            yield SampleInput(make(size, d, rng), name=f"size {size}")

    return samples


def _normal_check(op, mean, std):
    return _random_check(op, mean=mean, std=std)


def _ones(size, d, rng, v):
    return make_arg(size, d, rng=rng).fill_(v)


def _probe_normal(probe, mean, std, size, **kw):
    return bound.normal.float_float(mean, std, size, device=probe.device, **kw)


def _randint_like_check(lo, hi):
    """Integral values in ``[lo, hi)`` shaped and typed like ``self``, every value drawn on large samples (these
    overloads take no generator: torch's ``.generator`` overloads are not added)."""

    def check(result, sample):
        v = result.numpy(force=True).astype(np.float64)
        assert result.shape == sample.args[0].shape and result.dtype is sample.args[0].dtype
        assert np.array_equal(v, np.round(v)) and (not v.size or (v.min() >= lo and v.max() < hi)), (v.min(), v.max())
        if v.size >= _N:
            assert set(np.unique(v)) == set(range(lo, hi)), "every value in range should be drawn"

    return check


_LN_MEDIAN = float(np.exp(0.5))
# No float64: tests/backend/test_gradcheck.py finite-differences every float64 OpInfo it does not list as random,
# and a fresh draw per call has no finite differences; float64 draws are checked in
# tests/backend/test_math_indexing_counting.py.
_FLOAT = (dt.float32, dt.float16, dt.bfloat16)

OPS = [
    OpInfo("exponential_", _fill_samples((2.0,)), dtypes=_FLOAT,
           check=_quantile_check(bound.exponential_, np.log(2) / 2, lo=0),
           errors=lambda rng: [err((make_arg((3,), dt.float32, rng=rng), -1), RuntimeError,
                                   "exponential_ expects lambda > 0.0, but found lambda=-1")]),
    OpInfo("geometric_", _fill_samples((0.3,)), dtypes=_FLOAT + (dt.int64, dt.int32),
           check=_quantile_check(bound.geometric_, 2.0, q=0.4, lo=1, integral=True),  # P(X <= 1) = .3, P(X <= 2) = .51
           errors=lambda rng: [err((make_arg((3,), dt.float32, rng=rng), 2), RuntimeError,
                                   "geometric_ expects p to be in (0, 1), but got p=2")]),
    OpInfo("log_normal_", _fill_samples((0.5, 0.25)), dtypes=_FLOAT,
           check=_quantile_check(bound.log_normal_, _LN_MEDIAN, lo=0),
           errors=lambda rng: [err((make_arg((3,), dt.float32, rng=rng), 1, -1), RuntimeError,
                                   "log_normal_ expects std > 0.0, but found std=-1")]),
    OpInfo("cauchy_", _fill_samples((1.0, 2.0)), dtypes=_FLOAT,
           check=_quantile_check(bound.cauchy_, 3.0, q=0.75),
           errors=lambda rng: [err((make_arg((3,), dt.float32, rng=rng), 0, -1), RuntimeError,
                                   "cauchy_ expects sigma > 0.0, but found sigma=-1")]),
    OpInfo("normal.Tensor_float", _tensor_normal("Tensor_float", lambda s, d, r: (_ones(s, d, r, 3.0), 2.0)),
           dtypes=_FLOAT, check=_normal_check(bound.normal.Tensor_float, 3, 2),
           errors=lambda rng: [err((make_arg((3,), dt.float32, rng=rng), -1.0), RuntimeError,
                                   "normal expects std >= 0.0, but found std -1")]),
    OpInfo("normal.float_Tensor", _tensor_normal("float_Tensor", lambda s, d, r: (-1.0, _ones(s, d, r, 0.5))),
           dtypes=_FLOAT, check=_normal_check(bound.normal.float_Tensor, -1, 0.5)),
    OpInfo("normal.Tensor_Tensor", _tensor_normal("Tensor_Tensor", lambda s, d, r: (_ones(s, d, r, 1.0),
                                                                                    _ones((), d, r, 3.0))),
           dtypes=_FLOAT, check=_normal_check(bound.normal.Tensor_Tensor, 1, 3)),
    OpInfo("normal.float_float", lambda d, rng: (SampleInput((make_arg((), dt.float32), 2.0, 0.5, s), {"dtype": d})
                                                for s in _SIZES), op=_probe_normal, dtypes=FLOATING,
           check=lambda r, s: _random_check(_probe_normal, mean=2, std=0.5)(r, s)),
    OpInfo("randint_like", lambda d, rng: (SampleInput((make_arg(s, d, rng=rng), 7)) for s in _SIZES),
           dtypes=FLOATING + INTEGRAL, check=_randint_like_check(0, 7)),
    OpInfo("randint_like.low_dtype", lambda d, rng: (SampleInput((make_arg(s, d, rng=rng), -3, 4)) for s in _SIZES),
           dtypes=FLOATING + (dt.int64, dt.int8), check=_randint_like_check(-3, 4)),
]
