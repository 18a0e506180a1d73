"""OpInfos: ``mse_loss``, ``smooth_l1_loss`` and ``huber_loss`` (F's ops, Note [Functional operators]) against NumPy
for the three reductions, contiguous, strided and 0-dim operands, a target of another dtype, and the edges of the
piecewise losses."""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ..opinfo import FLOATING, OpInfo, SampleInput, make_arg

__all__ = ["OPS"]

HALF_TOL = {dt.float16: (2e-3, 4e-3), dt.bfloat16: (1.6e-2, 3e-2)}


def _mse_samples(d, rng):
    def a(shape, **kw):
        return make_arg(shape, d, rng=rng, **kw)

    for reduction, label in ((1, "mean"), (2, "sum"), (0, "none")):
        yield SampleInput((a((4, 5)), a((4, 5)), reduction), {}, label)
        yield SampleInput((a((3, 4), noncontiguous=True), a((3, 4)), reduction), {}, f"{label}, strided input")
    yield SampleInput((a(()), a(())), {}, "0-dim, the default reduction")
    yield SampleInput((a((0, 3)), a((0, 3)), 2), {}, "empty, sum")
    if d is dt.float32:
        yield SampleInput((a((2, 3)), make_arg((2, 3), dt.float64, rng=rng), 1), {}, "a float64 target promotes")


def _mse_ref(x, t, reduction=1):
    sq = (np.asarray(x, np.float64) - np.asarray(t, np.float64)) ** 2
    if reduction == 0:
        return sq
    return sq.mean() if reduction == 1 else sq.sum()


def _reduced(loss, reduction):
    if reduction == 0:
        return loss
    return loss.mean() if reduction == 1 else loss.sum()


def _piecewise_samples(param):
    def samples(d, rng):
        for s in _mse_samples(d, rng):
            yield s
            if len(s.args) == 3 and s.args[0].dim() == 2 and s.args[0].is_contiguous():
                yield SampleInput(s.args, {param: 0.5}, f"{s.name}, {param}=0.5")
    return samples


def _smooth_l1_ref(x, t, reduction=1, beta=1.0):
    z = np.abs(np.asarray(x, np.float64) - np.asarray(t, np.float64))
    return _reduced(np.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta), reduction)


def _huber_ref(x, t, reduction=1, delta=1.0):
    z = np.abs(np.asarray(x, np.float64) - np.asarray(t, np.float64))
    return _reduced(np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta)), reduction)


OPS = [
    OpInfo("mse_loss", _mse_samples, ref=_mse_ref, dtypes=FLOATING, tolerances=HALF_TOL),
    OpInfo("smooth_l1_loss", _piecewise_samples("beta"), ref=_smooth_l1_ref, dtypes=FLOATING, tolerances=HALF_TOL),
    OpInfo("huber_loss", _piecewise_samples("delta"), ref=_huber_ref, dtypes=FLOATING, tolerances=HALF_TOL),
]
