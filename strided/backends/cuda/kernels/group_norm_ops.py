"""CUDA kernels of ``native_group_norm`` and ``native_group_norm_backward`` (Note [Group-norm passes]); inputs they
do not take (non-contiguous, more than 2^31 elements, no elements) go to the composites (ops/composite/group_norm.py).

Note [Group-norm passes]
The composite runs group norm as a batch norm over (1, N * group, .) plus a per-channel affine step: five passes
over the tensor forward (eight for half inputs, which it widens to float32) and more backward. Here, as torch's
kernels, each direction reads the input twice and writes once; everything else is on (N, C) vectors:

* forward: ``bn_stats`` over the (1, N * group, C / group * HxW) view gives the (N, group) mean and 1 / std;
  then ``y = (x - mean) * scale + bias`` per (sample, channel) (``channel_affine``, Note [Per-channel affine pass])
  with ``scale = rstd * weight``.
* backward: ``bn_grad_stats`` over the (1, N * C, HxW) view, given the statistics repeated per channel, sums
  ``g`` and ``g * xhat`` per (sample, channel): their sums over the samples are the bias's and the weight's
  gradients, and their weighted sums over a group, ``S1 = sum w g`` and ``S2 = sum w g xhat``, give
  ``dx = rstd (w g - S1 / L - xhat S2 / L)`` (``L = C / group * HxW``) as one affine pass in ``g`` and ``x``:
  ``dx = g * (rstd w) + (x - mean) * (-rstd^2 S2 / L) - rstd S1 / L``.

The statistics, coefficients and the weight's and bias's gradients are float32 for half inputs (float64 for
float64), as the composite's; a weight or bias of another dtype is converted for the coefficients.
"""

from __future__ import annotations

from ....dispatch.library import kernel
from ....ops import bound as ops
from ...meta.common import new_output
from .batch_norm_ops import _param_dtype, _takes, batch_statistics, channel_affine

__all__ = []


def _per_group(t, n: int, group: int):
    return ops.reshape(t, (n, group, 1))


def _vector(t, pd, shape):
    """A weight or bias as a ``pd`` tensor viewed as ``shape`` (None stays None)."""
    if t is None:
        return None
    return ops.reshape(t if t.dtype is pd else ops._to_copy(t, dtype=pd), shape)


def _pairs(t, shape):
    """``t`` broadcast to ``shape`` (N, group, C / group) as a contiguous vector of the N * C pairs."""
    return ops.reshape(ops.contiguous(ops.expand(t, shape)), (-1,))


@kernel("CUDA")
def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    from ....ops.composite.group_norm import _check
    from ....ops.composite.group_norm import native_group_norm as composite

    _check(input, weight, bias, N, C, HxW, group)
    stats = None
    if _takes(input) and input.numel() and input._sizes[0] == N:
        stats = batch_statistics(ops.reshape(input, (1, N * group, C // group * HxW)), eps)
    if stats is None:
        return composite(input, weight, bias, N, C, HxW, group, eps)
    mean, rstd = stats
    pd, shape = mean.dtype, (N, group, C // group)
    m, r = _per_group(mean, N, group), _per_group(rstd, N, group)
    w = _vector(weight, pd, (1, group, C // group))
    b = _vector(bias, pd, (1, group, C // group))
    scale = ops.mul(r, w) if w is not None else r
    shift = b if b is not None else ops.zeros((1, 1, 1), dtype=pd, device=input.device)
    out = channel_affine(input, HxW, _pairs(m, shape), _pairs(scale, shape), _pairs(shift, shape))
    return out, ops.reshape(mean, (N, group)), ops.reshape(rstd, (N, group))


@kernel("CUDA")
def native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask):
    from ....autograd.grad_mode import no_grad
    from ....ops.composite.group_norm import native_group_norm_backward as composite

    args = (grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask)
    pd = _param_dtype(input.dtype) if input.dtype.is_floating_point else None
    if (not _takes(input) or input.numel() == 0 or grad_out._sizes != input._sizes or grad_out.dtype is not input.dtype
            or pd is None or mean.dtype is not pd or rstd.dtype is not pd or tuple(mean.shape) != (N, group)
            or tuple(rstd.shape) != (N, group) or input._sizes[0] != N or grad_out.device != input.device):
        return composite(*args)
    g = grad_out if grad_out.is_contiguous() else ops.contiguous(grad_out)
    need_input, need_weight, need_bias = (bool(m) for m in output_mask)
    shape = (N, group, C // group)
    m, r = _per_group(mean, N, group), _per_group(rstd, N, group)
    m_nc, r_nc = _pairs(m, shape), _pairs(r, shape)
    flat = (1, N * C, HxW)
    with no_grad():  # a grad-mode batch-norm backward would recompute the statistics per (sample, channel)
        _, sum_gxhat, sum_g = ops.native_batch_norm_backward(ops.reshape(g, flat), ops.reshape(input, flat), None,
                                                             None, None, m_nc, r_nc, True, 0.0, [False, True, True])
    sum_gxhat, sum_g = ops.reshape(sum_gxhat, shape), ops.reshape(sum_g, shape)
    # the composite's dtypes: the sums' (float32 for half inputs); the engine casts them to the parameters'
    gw = ops.reshape(ops.sum(sum_gxhat, [0]), (C,)) if need_weight else None
    gb = ops.reshape(ops.sum(sum_g, [0]), (C,)) if need_bias else None
    gi = None
    if need_input:
        w = _vector(weight, pd, (1, group, C // group))
        s1 = ops.sum(ops.mul(sum_g, w) if w is not None else sum_g, [2], True)  # (N, group, 1): sum w g
        s2 = ops.sum(ops.mul(sum_gxhat, w) if w is not None else sum_gxhat, [2], True)  # sum w g xhat
        inv_l = -1.0 / (C // group * HxW)
        a = ops.mul(r, w) if w is not None else r
        bx = ops.mul(ops.mul(ops.mul(r, r), s2), inv_l)
        c0 = ops.mul(ops.mul(r, s1), inv_l)
        gi = channel_affine(input, HxW, m_nc, _pairs(bx, shape), _pairs(c0, shape), g=g, a=_pairs(a, shape))
    empty_dtype = weight.dtype if weight is not None else pd
    return tuple(t if t is not None else new_output((0,), d, input.device)
                 for t, d in ((gi, input.dtype), (gw, empty_dtype), (gb, empty_dtype)))
