"""Derivative helpers of the normalization layers: layer norm, batch norm and group norm (derivatives.yaml
formulas call them). While no graph is recorded each is one backward op (Note [Fused layer_norm backward],
Note [Batch-norm node], Note [Group-norm node]); under ``create_graph`` the decompositions record a
differentiable graph.
"""

from __future__ import annotations

import math

from .. import dtypes as _dt
from ..dispatch.dispatcher import grad_mode
from ..ops import bound as ops
from ..ops.composite.views import int_list
from .functions_nn import _mean, _sum, _var

__all__ = [
    "layer_norm_backward",
    "batch_norm_backward",
    "batch_norm_backward_decomposed",
    "group_norm_backward",
    "group_norm_backward_decomposed",
    "group_norm_backward_saved",
]


def layer_norm_backward(grad, input, normalized_shape, weight, eps, grad_input_mask):
    """Gradients of layer_norm for (input, weight, bias), each only where ``grad_input_mask`` asks.

    mean and rstd are recomputed from ``input`` (the forward keeps no statistics), once for all three.
    """
    need_input, need_weight, need_bias = grad_input_mask
    if not grad_mode.enabled:
        # Note [Fused layer_norm backward]: one op; the decomposition below is for create_graph=True
        mask = [need_input, need_weight and weight is not None, need_bias]
        dx, dw, db = ops._layer_norm_backward(grad, input, normalized_shape, weight, eps, mask)
        return dx if need_input else None, dw if need_weight else None, db if need_bias else None
    nd = input.dim()
    n = len(int_list(normalized_shape))
    dims, lead = list(range(nd - n, nd)), list(range(nd - n))
    gb = (_sum(grad, lead) if lead else grad) if need_bias else None
    if not (need_input or need_weight):
        return None, None, gb
    if math.prod(input._sizes[d] for d in dims) == 0:
        return (ops.zeros_like(input) if need_input else None,
                _sum(grad * input, lead) if need_weight and lead else (grad * input if need_weight else None), gb)
    mean = _mean(input, dims, keepdim=True)
    rstd = ops.rsqrt(_var(input, dims, correction=0, keepdim=True) + eps)
    xhat = (input - mean) * rstd
    gw = None
    if need_weight:
        gw = grad * xhat
        if lead:
            gw = _sum(gw, lead)
    gi = None
    if need_input:
        g = grad * weight if weight is not None else grad
        # rstd * (g - mean(g) - xhat * mean(g * xhat))
        inner = ops.addcmul(g - _mean(g, dims, keepdim=True), xhat,
                            _mean(g * xhat, dims, keepdim=True), value=-1)
        gi = inner * rstd
    return gi, gw, gb


def batch_norm_backward(grad, input, weight, save_mean, save_invstd, training, eps, grad_input_mask):
    """Gradients of ``native_batch_norm`` for (input, weight, bias) from the saved per-channel mean and inverse
    standard deviation (Note [Batch-norm node]): the ``native_batch_norm_backward`` op (two launches on CUDA),
    or, under ``create_graph=True``, its decomposition into differentiable ops."""
    if not grad_mode.enabled:
        mask = [bool(m) for m in grad_input_mask]
        out = ops.native_batch_norm_backward(grad, input, weight, None, None, save_mean, save_invstd, training, eps,
                                             mask)
        return tuple(t if m else None for t, m in zip(out, mask))
    return batch_norm_backward_decomposed(grad, input, weight, save_mean, save_invstd, training, eps,
                                          grad_input_mask)


def batch_norm_backward_decomposed(grad, input, weight, save_mean, save_invstd, training, eps, grad_input_mask):
    """The batch-norm gradients as ops: ``scale * (g - mean(g) - xhat * mean(g * xhat))`` per channel in
    training (the statistics depend on the input), ``scale * g`` in evaluation."""
    need_input, need_weight, need_bias = grad_input_mask
    half = input.dtype in (_dt.float16, _dt.bfloat16)
    x = ops._to_copy(input, dtype=_dt.float32) if half else input
    g = ops._to_copy(grad, dtype=_dt.float32) if half else grad
    c = x.shape[1]
    dims = [0, *range(2, x.dim())]
    shape = [1, c] + [1] * (x.dim() - 2)
    mean, invstd = save_mean, save_invstd
    if training and grad_mode.enabled:  # a double backward: the statistics as functions of the input
        var, mean = ops.var_mean(x, dims, correction=0)
        invstd = ops.rsqrt(var + eps)
    needs_stats = need_weight or (need_input and training)
    xhat = (x - ops.reshape(mean, shape)) * ops.reshape(invstd, shape) if needs_stats else None
    sum_g = _sum(g, dims) if need_bias or (need_input and training) else None
    sum_gx = _sum(g * xhat, dims) if needs_stats else None
    gi = None
    if need_input:
        scale = invstd if weight is None else invstd * weight
        if training:
            count = x.numel() // c
            inner = ops.addcmul(g - ops.reshape(sum_g / count, shape), xhat, ops.reshape(sum_gx / count, shape),
                                value=-1)
            gi = inner * ops.reshape(scale, shape)
        else:
            gi = g * ops.reshape(scale, shape)
        if gi.dtype is not input.dtype:
            gi = ops._to_copy(gi, dtype=input.dtype)
    # the engine casts the float32 sums to the parameters' dtypes
    return gi, sum_gx if need_weight else None, sum_g if need_bias else None


def group_norm_backward_saved(grad, input, mean, rstd, weight, N, group, grad_input_mask):
    """The group-norm gradients from the saved statistics, no graph recorded (the ``native_group_norm_backward``
    op's kernel): batch norm's gradient op over (1, N * group, .) for the input (two launches on CUDA); for the
    weight, per-(sample, channel) sums of ``grad`` and ``grad * input`` combined with the statistics, so no
    normalized copy of the input is made."""
    need_input, need_weight, need_bias = grad_input_mask
    c = input.shape[1]
    if input.numel() == 0:
        return group_norm_backward_decomposed(grad, input, mean, rstd, weight, N, group, 0.0, grad_input_mask)
    half = input.dtype in (_dt.float16, _dt.bfloat16)
    x = ops._to_copy(input, dtype=_dt.float32) if half else input
    g = ops._to_copy(grad, dtype=_dt.float32) if half else grad
    flat = (1, N * group, input.numel() // (N * group))
    gi = gw = gb = None
    if need_input:
        gy = g if weight is None else g * ops.reshape(weight, [1, c] + [1] * (x.dim() - 2))
        gi = ops.native_batch_norm_backward(ops.reshape(gy, flat), ops.reshape(x, flat), None, None, None,
                                            ops.reshape(mean, (-1,)), ops.reshape(rstd, (-1,)), True, 0.0,
                                            [True, False, False])[0]
        gi = ops.reshape(gi, tuple(input.shape))
        if gi.dtype is not input.dtype:
            gi = ops._to_copy(gi, dtype=input.dtype)
    if need_weight or need_bias:
        g3 = ops.reshape(g, (N, c, -1))
        sum_g = _sum(g3, [2])  # (N, C)
        gb = _sum(sum_g, [0]) if need_bias else None
        if need_weight:  # sum over n of rstd * (sum(g * x) - mean * sum(g)), per channel
            per_channel = (N, group, c // group)
            sum_gx = ops.reshape(_sum(g3 * ops.reshape(x, (N, c, -1)), [2]), per_channel)
            centered = sum_gx - ops.reshape(mean, (N, group, 1)) * ops.reshape(sum_g, per_channel)
            gw = ops.reshape(_sum(centered * ops.reshape(rstd, (N, group, 1)), [0]), (c,))
    return gi, gw, gb


def group_norm_backward(grad, input, mean, rstd, weight, N, group, eps, grad_input_mask):
    """Gradients of ``native_group_norm`` for (input, weight, bias) from the saved (N, group) statistics (Note
    [Group-norm node]): the ``native_group_norm_backward`` op, or, under ``create_graph=True``, its decomposition
    into differentiable ops."""
    if not grad_mode.enabled:
        mask = [bool(m) for m in grad_input_mask]
        c = input.shape[1]
        out = ops.native_group_norm_backward(grad, input, mean, rstd, weight, N, c, input.numel() // max(N * c, 1),
                                             group, mask)
        return tuple(t if m else None for t, m in zip(out, mask))
    return group_norm_backward_decomposed(grad, input, mean, rstd, weight, N, group, eps, grad_input_mask)


def group_norm_backward_decomposed(grad, input, mean, rstd, weight, N, group, eps, grad_input_mask):
    """The group-norm gradients as ops: batch norm's over (1, N * group, .) for the input (of ``grad * weight``),
    per-channel sums for the weight and the bias. Under grad mode (a double backward) the statistics are
    recomputed from the input, as functions of it."""
    need_input, need_weight, need_bias = grad_input_mask
    c = input.shape[1]
    if input.numel() == 0:  # no samples: zero gradients
        params = _dt.float32 if weight is None else weight.dtype
        zeros = ops.zeros((c,), dtype=params, device=input.device)
        return (ops.zeros_like(input) if need_input else None, zeros if need_weight else None,
                zeros if need_bias else None)
    half = input.dtype in (_dt.float16, _dt.bfloat16)
    x = ops._to_copy(input, dtype=_dt.float32) if half else input
    g = ops._to_copy(grad, dtype=_dt.float32) if half else grad
    shape = [1, c] + [1] * (x.dim() - 2)
    flat = (1, N * group, input.numel() // max(N * group, 1))
    xf = ops.reshape(x, flat)
    mean_f, rstd_f = ops.reshape(mean, (-1,)), ops.reshape(rstd, (-1,))
    if grad_mode.enabled:
        var, mean_f = ops.var_mean(xf, [0, 2], correction=0)
        rstd_f = ops.rsqrt(var + eps)
    gi = gw = gb = None
    if need_input:
        gy = g if weight is None else g * ops.reshape(weight, shape)
        gi = batch_norm_backward_decomposed(ops.reshape(gy, flat), xf, None, mean_f, rstd_f, True, eps,
                                            (True, False, False))[0]
        gi = ops.reshape(gi, tuple(input.shape))
        if gi.dtype is not input.dtype:
            gi = ops._to_copy(gi, dtype=input.dtype)
    dims = [0, *range(2, x.dim())]
    if need_weight:
        stats = [1, N * group, 1]
        xhat = ops.reshape((xf - ops.reshape(mean_f, stats)) * ops.reshape(rstd_f, stats), tuple(x.shape))
        gw = _sum(g * xhat, dims)
    if need_bias:
        gb = _sum(g, dims)
    # the engine casts the float32 sums to the parameters' dtypes
    return gi, gw, gb
