"""OpInfos: ``mse_loss``, ``smooth_l1_loss``, ``huber_loss``, ``nll_loss_forward`` / ``nll_loss2d_forward``,
``binary_cross_entropy`` and ``binary_cross_entropy_with_logits`` (F's ops, Note [Functional operators]) against
NumPy for the three reductions, contiguous, strided and 0-dim operands, a target of another dtype, the edges of the
piecewise losses, class weights, ignored targets and empty batches."""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ..opinfo import FLOATING, OpInfo, SampleInput, make_arg
from .pointwise_samples import tensor_of

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


def _nll_samples(d, rng):
    def x(shape, **kw):
        return make_arg(shape, d, rng=rng, low=-4, high=0, **kw)

    def t(shape, n_classes):
        return make_arg(shape, dt.int64, rng=rng, low=0, high=n_classes)

    w = make_arg((5,), d, rng=rng, low=0.5, high=2)
    for reduction, label in ((1, "mean"), (2, "sum"), (0, "none")):
        yield SampleInput((x((4, 5)), t((4,), 5), None, reduction, -100), {}, label)
        yield SampleInput((x((4, 5), noncontiguous=True), t((4,), 5), w, reduction, -100), {}, f"{label}, weighted")
    ignored = tensor_of([1, 3, 1, 0], dt.int64)
    yield SampleInput((x((4, 5)), ignored, w, 1, 1), {}, "ignore_index 1, weighted mean")
    yield SampleInput((x((4, 5)), ignored, None, 0, 3), {}, "ignore_index 3, unreduced")
    yield SampleInput((x((5,)), tensor_of(2, dt.int64), w, 0, -100), {}, "1-d input, 0-dim target")
    yield SampleInput((x((0, 5)), t((0,), 5), None, 2, -100), {}, "empty batch, sum")


def _nll2d_samples(d, rng):
    def x(shape, **kw):
        return make_arg(shape, d, rng=rng, low=-4, high=0, **kw)

    target = make_arg((2, 3, 2), dt.int64, rng=rng, low=0, high=4)
    w = make_arg((4,), d, rng=rng, low=0.5, high=2)
    for reduction, label in ((1, "mean"), (2, "sum"), (0, "none")):
        yield SampleInput((x((2, 4, 3, 2)), target, None, reduction, -100), {}, label)
        yield SampleInput((x((2, 4, 3, 2), noncontiguous=True), target, w, reduction, 0), {}, f"{label}, weighted, "
                          "ignore_index 0")


def _nll_ref(x, t, w, reduction, ignore_index):
    x = np.asarray(x, np.float64)
    t = np.asarray(t).astype(np.int64)
    class_dim = 0 if x.ndim == 1 else 1
    counted = t != ignore_index
    safe = np.where(counted, t, 0)
    picked = np.squeeze(np.take_along_axis(x, np.expand_dims(safe, class_dim), class_dim), class_dim)
    weights = (np.ones(x.shape[class_dim]) if w is None else np.asarray(w, np.float64))[safe] * counted
    loss = -picked * weights
    if reduction == 0:
        return loss, (weights if x.ndim == 1 else np.float64(0))
    total = weights.sum()
    with np.errstate(all="ignore"):
        return (loss.sum() / total if reduction == 1 else loss.sum()), total


def _bce_samples(d, rng):
    def x(shape, **kw):
        return make_arg(shape, d, rng=rng, low=0.05, high=0.95, **kw)

    def t(shape):
        return make_arg(shape, d, rng=rng, low=0, high=1)

    for reduction, label in ((1, "mean"), (2, "sum"), (0, "none")):
        yield SampleInput((x((3, 4)), t((3, 4)), None, reduction), {}, label)
        yield SampleInput((x((3, 4), noncontiguous=True), t((3, 4)), x((3, 4)), reduction), {}, f"{label}, weighted")
    yield SampleInput((x(()), t(())), {}, "0-dim, the default reduction")


def _bce_ref(x, t, w=None, reduction=1):
    x, t = np.asarray(x, np.float64), np.asarray(t, np.float64)
    loss = -(t * np.maximum(np.log(x), -100) + (1 - t) * np.maximum(np.log1p(-x), -100))
    return _reduced(loss if w is None else loss * np.asarray(w, np.float64), reduction)


def _bce_logits_samples(d, rng):
    def x(shape, **kw):
        return make_arg(shape, d, rng=rng, low=-6, high=6, **kw)

    def t(shape):
        return make_arg(shape, d, rng=rng, low=0, high=1)

    for reduction, label in ((1, "mean"), (2, "sum"), (0, "none")):
        yield SampleInput((x((3, 4)), t((3, 4)), None, None, reduction), {}, label)
        yield SampleInput((x((3, 4), noncontiguous=True), t((3, 4)), t((3, 4)), t((4,)) * 3, reduction), {},
                          f"{label}, weight and pos_weight")
    yield SampleInput((x(()), t(())), {}, "0-dim, the default reduction")


def _bce_logits_ref(x, t, w=None, pos_weight=None, reduction=1):
    x, t = np.asarray(x, np.float64), np.asarray(t, np.float64)
    log_sig = -np.logaddexp(0, -x)
    if pos_weight is not None:
        log_sig = log_sig * ((np.asarray(pos_weight, np.float64) - 1) * t + 1)
    loss = (1 - t) * x - log_sig
    return _reduced(loss if w is None else loss * np.asarray(w, np.float64), reduction)


OPS = [
    OpInfo("mse_loss", _mse_samples, ref=_mse_ref, dtypes=FLOATING, tolerances=HALF_TOL),
    OpInfo("smooth_l1_loss", _piecewise_samples("beta"), ref=_smooth_l1_ref, dtypes=FLOATING, tolerances=HALF_TOL),
    OpInfo("huber_loss", _piecewise_samples("delta"), ref=_huber_ref, dtypes=FLOATING, tolerances=HALF_TOL),
    OpInfo("nll_loss_forward", _nll_samples, ref=_nll_ref, dtypes=FLOATING, tolerances=HALF_TOL),
    OpInfo("nll_loss2d_forward", _nll2d_samples, ref=_nll_ref, dtypes=FLOATING, tolerances=HALF_TOL),
    OpInfo("binary_cross_entropy", _bce_samples, ref=_bce_ref, dtypes=FLOATING, tolerances=HALF_TOL),
    OpInfo("binary_cross_entropy_with_logits", _bce_logits_samples, ref=_bce_logits_ref, dtypes=FLOATING,
           tolerances=HALF_TOL),
]
