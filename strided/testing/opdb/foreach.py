"""OpInfos: the ``_foreach_*`` multi-tensor ops and the fused optimizer steps.

In-place list ops return nothing, so each OpInfo calls them on copies of the inputs (same sizes and
strides, so non-contiguous members stay non-contiguous) and returns the written lists. Lists mix
shapes: a non-contiguous matrix, a vector, a 0-dim tensor and a zero-size tensor.
"""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ..opinfo import FLOATING, OpInfo, SampleInput, make_arg
from .pointwise_samples import error

SHAPES = (((3, 4), True), ((5,), False), ((), False), ((0, 3), False), ((2, 3, 2), True))
HALF_TOL = {dt.float16: (2e-3, 2e-3), dt.bfloat16: (1.6e-2, 2e-2)}


def _list(dtype, rng, low=-3.0, high=3.0):
    return [make_arg(s, dtype, rng=rng, low=low, high=high, noncontiguous=nc) for s, nc in SHAPES]


def _copy(t):
    from ... import empty_strided

    out = empty_strided(t.shape, t.stride(), dtype=t.dtype, device=t.device)
    return out.copy_(t)


def _inplace(overload_name):
    """Call the in-place list op on copies of ``self`` (and of the lists it writes) and return them."""

    def run(self, *args, **kwargs):
        from ...ops import bound

        base, _, overload = overload_name.partition(".")
        op = getattr(getattr(bound, base), overload or "default")
        out = [_copy(t) for t in self]
        op(out, *args, **kwargs)
        return out

    run.__name__ = overload_name
    return run


def _f64(x):
    return [np.asarray(a, dtype=np.float64) for a in x]


def _lerp(a, b, w):
    d = b - a
    return a + w * d if w < 0.5 else b - d * (1 - w)


def _samples(kind):
    def samples(dtype, rng):
        a = _list(dtype, rng)
        if kind == "scalar":
            yield SampleInput((a, 1.5), {}, "scalar")
            yield SampleInput((_list(dtype, rng), -2), {}, "int scalar")
        elif kind == "list":
            yield SampleInput((a, _list(dtype, rng)), {}, "list")
            yield SampleInput((_list(dtype, rng), _list(dtype, rng)), {"alpha": -0.5}, "list, alpha")
        elif kind == "maximum":
            yield SampleInput((a, _list(dtype, rng)), {}, "list")
        elif kind == "scalarlist":
            yield SampleInput((a, [1.5, -2.0, 0.5, 3.0, 4]), {}, "scalar list")
        elif kind == "lerp":
            yield SampleInput((a, _list(dtype, rng), 0.25), {}, "weight < 0.5")
            yield SampleInput((_list(dtype, rng), _list(dtype, rng), 0.75), {}, "weight >= 0.5")
        elif kind == "addcmul":
            yield SampleInput((a, _list(dtype, rng), _list(dtype, rng)), {}, "default value")
            yield SampleInput((_list(dtype, rng), _list(dtype, rng), _list(dtype, rng), -0.5), {}, "value")
        elif kind == "addcdiv":
            yield SampleInput((a, _list(dtype, rng), _list(dtype, rng, 0.5, 3.0), [1.0, -0.5, 2.0, 1.0, 0.25]),
                              {}, "scalar list")
        elif kind == "unary":
            yield SampleInput((_list(dtype, rng, 0.0, 4.0),), {}, "list")
    return samples


_EXTRA = {"scalar": (1.5,), "scalarlist": ([1.0],), "lerp": (0.5,), "addcdiv": ([1.0],)}


def _errors(nargs, kind):
    extra = _EXTRA.get(kind, ())

    def errors(rng):
        a = [make_arg((2,), dt.float32, rng=rng)]
        b = [make_arg((2,), dt.float32, rng=rng) for _ in range(2)]
        yield error(([],) + tuple([a] * (nargs - 1)) + extra, RuntimeError,
                    "Tensor list must have at least one tensor.")
        if nargs > 1:
            yield error((a,) + tuple([b] * (nargs - 1)) + extra, RuntimeError,
                        "Tensor lists must have the same number of tensors, got 1 and 2")
        if kind == "scalarlist":
            yield error((a, [1.0, 2.0]), RuntimeError,
                        "Tensor list must have same number of elements as scalar list, got 1 and 2")
    return errors


def _fe(name, kind, ref, nargs, inplace=True):
    return OpInfo(name, _samples(kind), ref=ref, op=_inplace(name) if inplace else None, dtypes=FLOATING,
                  errors=_errors(nargs, kind), tolerances=HALF_TOL)


FOREACH_OPS = [
    _fe("_foreach_add.Scalar", "scalar", lambda s, x: [a + x for a in _f64(s)], 1, inplace=False),
    _fe("_foreach_add_.Scalar", "scalar", lambda s, x: [a + x for a in _f64(s)], 1),
    _fe("_foreach_add.List", "list", lambda s, o, alpha=1: [a + alpha * b for a, b in zip(_f64(s), _f64(o))], 2,
        inplace=False),
    _fe("_foreach_add_.List", "list", lambda s, o, alpha=1: [a + alpha * b for a, b in zip(_f64(s), _f64(o))], 2),
    _fe("_foreach_sub_.List", "list", lambda s, o, alpha=1: [a - alpha * b for a, b in zip(_f64(s), _f64(o))], 2),
    _fe("_foreach_mul_.Scalar", "scalar", lambda s, x: [a * x for a in _f64(s)], 1),
    _fe("_foreach_div_.ScalarList", "scalarlist", lambda s, xs: [a / x for a, x in zip(_f64(s), xs)], 1),
    _fe("_foreach_maximum_.List", "maximum", lambda s, o: [np.maximum(a, b) for a, b in zip(_f64(s), _f64(o))], 2),
    _fe("_foreach_lerp_.Scalar", "lerp", lambda s, e, w: [_lerp(a, b, w) for a, b in zip(_f64(s), _f64(e))], 2),
    _fe("_foreach_addcmul_.Scalar", "addcmul",
        lambda s, x, y, value=1: [a + value * b * c for a, b, c in zip(_f64(s), _f64(x), _f64(y))], 3),
    _fe("_foreach_addcdiv_.ScalarList", "addcdiv",
        lambda s, x, y, v: [a + k * (b / c) for a, b, c, k in zip(_f64(s), _f64(x), _f64(y), v)], 3),
    _fe("_foreach_sqrt", "unary", lambda s: [np.sqrt(a) for a in _f64(s)], 1, inplace=False),
    _fe("_foreach_neg", "unary", lambda s: [-a for a in _f64(s)], 1, inplace=False),
    _fe("_foreach_zero_", "unary", lambda s: [np.zeros_like(a) for a in _f64(s)], 1),
]


# ------------------------------------------------------------------------------------------ fused
def _adam_ref(decoupled):
    def ref(p, g, m, v, vmax, steps, *, lr, beta1, beta2, weight_decay, eps, amsgrad, maximize,
            grad_scale=None, found_inf=None):
        outs = ([], [], [], [])
        for i in range(len(p)):
            grad = g[i] / (grad_scale if grad_scale is not None else 1.0)
            gr = -grad if maximize else grad
            param = p[i]
            if decoupled:
                param = param - lr * weight_decay * param
            else:
                gr = gr + weight_decay * param
            mi = beta1 * m[i] + (1 - beta1) * gr
            vi = beta2 * v[i] + (1 - beta2) * gr * gr
            step = float(steps[i])
            bc2 = np.sqrt(1 - beta2 ** step)
            vm = np.maximum(vmax[i], vi) if amsgrad else vi
            param = param - (lr / (1 - beta1 ** step)) * mi / (np.sqrt(vm) / bc2 + eps)
            for lst, val in zip(outs, (param, mi, vi, vm if amsgrad else grad)):
                lst.append(val)
        return outs
    return ref


def _adam_op(name):
    def run(p, g, m, v, vmax, steps, **kw):
        from ...ops import bound

        lists = [[_copy(t) for t in lst] for lst in (p, g, m, v, vmax)]
        getattr(bound, name).default(*lists, steps, **kw)
        return lists[0], lists[2], lists[3], lists[4] if kw["amsgrad"] else lists[1]
    run.__name__ = name
    return run


def _state_lists(dtype, rng):
    p = _list(dtype, rng)
    g = _list(dtype, rng)
    m = _list(dtype, rng, -0.5, 0.5)
    v = _list(dtype, rng, 0.0, 0.5)
    vmax = _list(dtype, rng, 0.0, 0.6)
    return p, g, m, v, vmax


def _adam_samples(dtype, rng):
    from ... import tensor

    steps = [tensor(float(k), dtype=dt.float32) for k in (1, 2, 3, 7, 10)]
    base = dict(lr=0.1, beta1=0.9, beta2=0.99, eps=1e-8)
    yield SampleInput((*_state_lists(dtype, rng), steps), dict(base, weight_decay=0.0, amsgrad=False,
                                                             maximize=False), "plain")
    yield SampleInput((*_state_lists(dtype, rng), steps), dict(base, weight_decay=0.1, amsgrad=True,
                                                             maximize=True), "amsgrad, maximize, weight_decay")
    yield SampleInput((*_state_lists(dtype, rng), steps),
                      dict(base, weight_decay=0.05, amsgrad=False, maximize=False,
                           grad_scale=tensor(4.0), found_inf=tensor(0.0)), "grad_scale")


def _sgd_ref(p, g, bufs, *, weight_decay, momentum, lr, dampening, nesterov, maximize, is_first_step,
             grad_scale=None, found_inf=None):
    out_p, out_b = [], []
    for i in range(len(p)):
        gr = g[i] / (grad_scale if grad_scale is not None else 1.0)
        gr = -gr if maximize else gr
        gr = gr + weight_decay * p[i]
        b = gr if is_first_step else momentum * bufs[i] + (1 - dampening) * gr
        gr = gr + momentum * b if nesterov else b
        out_p.append(p[i] - lr * gr)
        out_b.append(b)
    return out_p, out_b


def _sgd_op(p, g, bufs, **kw):
    from ...ops import bound

    lists = [[_copy(t) for t in lst] for lst in (p, g, bufs)]
    bound._fused_sgd_.default(*lists, **kw)
    return lists[0], lists[2]


def _sgd_samples(dtype, rng):
    from ... import tensor

    base = dict(lr=0.1, weight_decay=0.1, momentum=0.9)
    p, g, b = _list(dtype, rng), _list(dtype, rng), _list(dtype, rng)
    yield SampleInput((p, g, b), dict(base, dampening=0.1, nesterov=False, maximize=False, is_first_step=False),
                      "momentum, dampening")
    p, g, b = _list(dtype, rng), _list(dtype, rng), _list(dtype, rng)
    yield SampleInput((p, g, b), dict(base, dampening=0.0, nesterov=True, maximize=True, is_first_step=True,
                                      grad_scale=tensor(2.0)), "first step, nesterov, maximize, grad_scale")


def _adagrad_ref(p, g, sums, steps, *, lr, lr_decay, weight_decay, eps, maximize, grad_scale=None,
                 found_inf=None):
    out_p, out_s = [], []
    for i in range(len(p)):
        gr = g[i] / (grad_scale if grad_scale is not None else 1.0)
        gr = (-gr if maximize else gr) + weight_decay * p[i]
        total = sums[i] + gr * gr
        clr = lr / (1 + (float(np.asarray(steps[i])) - 1) * lr_decay)
        out_p.append(p[i] - clr * gr / (np.sqrt(total) + eps))
        out_s.append(total)
    return out_p, out_s


def _adagrad_op(p, g, sums, steps, **kw):
    from ...ops import bound

    lists = [[_copy(t) for t in lst] for lst in (p, g, sums)]
    bound._fused_adagrad_.default(*lists, steps, **kw)
    return lists[0], lists[2]


def _adagrad_samples(dtype, rng):
    from ... import tensor

    steps = [tensor(float(k), dtype=dt.float32) for k in (1, 2, 3, 7, 10)]
    p, g, s = _list(dtype, rng), _list(dtype, rng), _list(dtype, rng, 0.0, 2.0)
    yield SampleInput((p, g, s, steps), dict(lr=0.1, lr_decay=0.0, weight_decay=0.0, eps=1e-10, maximize=False),
                      "plain")
    p, g, s = _list(dtype, rng), _list(dtype, rng), _list(dtype, rng, 0.0, 2.0)
    yield SampleInput((p, g, s, steps), dict(lr=0.1, lr_decay=0.05, weight_decay=0.1, eps=1e-6, maximize=True,
                                             grad_scale=tensor(4.0)), "lr_decay, weight_decay, maximize, grad_scale")


def _fused_errors(rng):
    from ... import tensor

    a = [make_arg((2,), dt.float32, rng=rng)]
    b = [make_arg((3,), dt.float32, rng=rng)]
    i = [make_arg((2,), dt.int64, rng=rng)]
    kw = dict(lr=0.1, beta1=0.9, beta2=0.99, weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False)
    s = [tensor(1.0)]
    yield error(([], [], [], [], [], []), RuntimeError, "Tensor list must have at least one tensor.", kw)
    yield error((a, a + a, a, a, [], s), RuntimeError, "Tensor lists must have the same number of tensors, got 1 and 2",
                kw)
    yield error((a, b, a, a, [], s), RuntimeError, "shape mismatch at index 0: [3] vs param [2]", kw)
    yield error((i, i, i, i, [], s), RuntimeError, "expected floating point params", kw)


FUSED_TOL = {dt.float32: (1e-5, 1e-5), dt.float16: (2e-3, 2e-3), dt.bfloat16: (1.6e-2, 2e-2)}

FUSED_OPS = [
    OpInfo("_fused_adam_", _adam_samples, ref=_adam_ref(False), op=_adam_op("_fused_adam_"), dtypes=FLOATING,
           errors=_fused_errors, tolerances=FUSED_TOL),
    OpInfo("_fused_adamw_", _adam_samples, ref=_adam_ref(True), op=_adam_op("_fused_adamw_"), dtypes=FLOATING,
           errors=_fused_errors, tolerances=FUSED_TOL),
    OpInfo("_fused_sgd_", _sgd_samples, ref=_sgd_ref, op=_sgd_op, dtypes=FLOATING, tolerances=FUSED_TOL),
    # CPU and Meta only, as torch's (its CUDA test is skipped: no CUDA kernel)
    OpInfo("_fused_adagrad_", _adagrad_samples, ref=_adagrad_ref, op=_adagrad_op, dtypes=FLOATING,
           tolerances=FUSED_TOL),
]

OPS = FOREACH_OPS + FUSED_OPS
