"""CUDA kernels of ``native_group_norm`` and ``native_group_norm_backward`` (``batch_norm.cu``, Note [Group-norm
kernels]): two launches forward and three backward, 16-byte vectors where the layout allows, where the composite
(ops/composite/group_norm.py) runs group norm as a batch norm over (1, N * group, .) plus a per-channel affine
step, five passes over the tensor forward (eight for half inputs, which it widens to float32) and more backward,
and a dozen small ops. Inputs the kernels do not take (non-contiguous, more than 2^31 elements, no elements) go to
the composite. As the composite's, the statistics and the weight's and bias's gradients are float32 for half inputs
(float64 for float64); a weight or bias of another dtype is converted to that for the kernels.
"""

from __future__ import annotations

from ....dispatch.library import kernel
from ....ops import bound as ops
from ...meta.common import new_output
from .batch_norm_ops import GN_VEC_BYTES, _param_dtype, _ptr, _takes, launch_group_norm

__all__ = []


def _param(t, pd):
    """A weight or bias as a contiguous ``pd`` vector (None stays None)."""
    if t is None:
        return None
    t = t if t.dtype is pd else ops._to_copy(t, dtype=pd)
    return t if t.is_contiguous() else ops.contiguous(t)


def _vector_path(hxw: int, *tensors) -> int:
    """1 when the kernels may move 16 bytes per thread: HxW a multiple of the vector's elements and every tensor's
    data 16-byte aligned (a view with an offset may not be)."""
    return int(hxw % (GN_VEC_BYTES // tensors[0].dtype.itemsize) == 0
               and all(t.data_ptr() % GN_VEC_BYTES == 0 for t in tensors))


@kernel("CUDA")
def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    from ....ops.composite.group_norm import _check
    from ....ops.composite.group_norm import native_group_norm as composite

    _check(input, weight, bias, N, C, HxW, group)
    if not _takes(input) or not input.numel() or input._sizes[0] != N:
        return composite(input, weight, bias, N, C, HxW, group, eps)
    pd, dev = _param_dtype(input.dtype), input.device
    mean, rstd = new_output((N, group), pd, dev), new_output((N, group), pd, dev)
    w, b = _param(weight, pd), _param(bias, pd)
    out = new_output(input._sizes, input.dtype, dev)
    fields = (input.data_ptr(), 0, out.data_ptr(), _ptr(w), _ptr(b), mean.data_ptr(), rstd.data_ptr(), 0, 0, 0, 0,
              N, C, HxW, group, _vector_path(HxW, input, out), float(eps))
    launch_group_norm("gn_stats", input, fields)
    launch_group_norm("gn_apply", input, fields)
    return out, mean, rstd


@kernel("CUDA")
def native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask):
    from ....ops.composite.group_norm import native_group_norm_backward as composite

    args = (grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask)
    pd = _param_dtype(input.dtype) if input.dtype.is_floating_point else None
    if (not _takes(input) or input.numel() == 0 or grad_out._sizes != input._sizes or grad_out.dtype is not input.dtype
            or pd is None or mean.dtype is not pd or rstd.dtype is not pd or tuple(mean.shape) != (N, group)
            or tuple(rstd.shape) != (N, group) or input._sizes[0] != N or grad_out.device != input.device
            or mean.device != input.device or rstd.device != input.device):
        return composite(*args)
    g = grad_out if grad_out.is_contiguous() else ops.contiguous(grad_out)
    mean = mean if mean.is_contiguous() else ops.contiguous(mean)
    rstd = rstd if rstd.is_contiguous() else ops.contiguous(rstd)
    need_input, need_weight, need_bias = (bool(m) for m in output_mask)
    dev = input.device
    w = _param(weight, pd)
    pair_sums, group_sums = new_output((2 * N * C,), pd, dev), new_output((2 * N * group,), pd, dev)
    gw = new_output((C,) if need_weight else (0,), pd if need_weight or weight is None else weight.dtype, dev)
    gb = new_output((C,) if need_bias else (0,), pd if need_bias or weight is None else weight.dtype, dev)
    gi = new_output(input._sizes if need_input else (0,), input.dtype, dev)
    fields = (input.data_ptr(), g.data_ptr(), gi.data_ptr() if need_input else 0, _ptr(w), 0, mean.data_ptr(),
              rstd.data_ptr(), pair_sums.data_ptr(), group_sums.data_ptr(), gw.data_ptr() if need_weight else 0,
              gb.data_ptr() if need_bias else 0, N, C, HxW, group, _vector_path(HxW, input, g, gi), 0.0)
    launch_group_norm("gn_grad_stats", input, fields)
    launch_group_norm("gn_grad_sums", input, fields)
    if need_input:
        launch_group_norm("gn_grad_apply", input, fields)
    return gi, gw, gb
