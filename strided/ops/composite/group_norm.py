"""The ``native_group_norm`` op and its gradient op (torch's ``at::native_group_norm``): ``F.group_norm`` as one
op, and so one autograd node (``NativeGroupNormBackward0``) that keeps what torch's keeps.

Note [Group-norm node]
Group norm normalizes each (sample, group) over its channels and positions, then scales and shifts per channel.
Viewed as (1, N * G, C / G * HxW), each (sample, group) is one channel of a batch norm in training, so the
kernel is ``native_batch_norm`` (two launches on CUDA, float32 statistics for half inputs) followed by the
per-channel affine step. As one op the node keeps the input, the weight and the (N, G) mean and inverse
standard deviation, as torch's; recorded op by op, autograd kept the normalized output too (twice the memory
of torch's for an affine group norm). The gradient is batch norm's again:

    grad_input  = native_batch_norm_backward(grad * weight viewed as (1, N * G, .), ...)
    grad_weight = sum over N of rstd * (sum over HxW of grad * input - mean * sum over HxW of grad)
    grad_bias   = sum over N and HxW of grad

(``autograd/functions_norm.py``: ``group_norm_backward``; under ``create_graph=True`` its decomposition into
differentiable ops, which makes the normalized input). The mean and the inverse standard deviation are float32
for half inputs, where torch's are in the input's dtype.
"""

from __future__ import annotations

from ... import dtypes as dt
from ...dispatch.library import kernel
from .. import bound as ops

__all__ = []

_HALF = (dt.float16, dt.bfloat16)


def _check(input, weight, bias, n, c, hxw, group) -> None:
    """torch's checks of native_group_norm's arguments."""
    from .batch_norm import check_batch_norm_input

    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    if group <= 0 or c % group:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={group}")
    if input.numel() != n * c * hxw:
        raise RuntimeError(f"Expected the input of size {list(input.shape)} to have N * C * HxW = {n} * {c} * {hxw} "
                           "elements")
    if c <= 0:
        raise RuntimeError(f"Expected number of channels to be greater than 0, got {c}")
    if hxw <= 0:
        raise RuntimeError(f"Expected HxW to be greater than 0, got {hxw}")
    check_batch_norm_input(input)
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, but "
                               f"got {name} of shape {list(t.shape)} and input of shape {list(input.shape)}")


def check_backward(grad_out, input, mean, rstd, weight, n, c, hxw, group) -> None:
    """The checks of ``native_group_norm_backward``'s arguments (every backend's kernel makes them)."""
    if grad_out._sizes != input._sizes:
        raise RuntimeError(f"native_group_norm_backward: grad_out of size {list(grad_out._sizes)} does not match "
                           f"input of size {list(input._sizes)}")
    _check(input, weight, None, n, c, hxw, group)
    if tuple(mean.shape) != (n, group) or tuple(rstd.shape) != (n, group):
        raise RuntimeError(f"native_group_norm_backward: expected mean and rstd of size [{n}, {group}], got "
                           f"{list(mean.shape)} and {list(rstd.shape)}")


@kernel("CompositeExplicitAutograd")
def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(output, mean, inverse standard deviation): ``input`` (N, C, *) normalized per (sample, channel group), then
    scaled and shifted per channel; the statistics are (N, group) (Note [Group-norm node])."""
    _check(input, weight, bias, N, C, HxW, group)
    if input.numel() == 0:  # no samples: nothing to normalize, and no statistics
        stats = dt.float32 if input.dtype in _HALF else input.dtype
        return (ops.clone(input), ops.empty((N, group), dtype=stats, device=input.device),
                ops.empty((N, group), dtype=stats, device=input.device))
    affine = weight is not None or bias is not None
    # half inputs: the affine step in float32, one rounding to the input's dtype
    x = ops._to_copy(input, dtype=dt.float32) if affine and input.dtype in _HALF else input
    flat = ops.reshape(x, (1, N * group, C // group * HxW))
    out, mean, invstd = ops.native_batch_norm(flat, None, None, None, None, True, 0.0, eps)
    shape = [1, C] + [1] * (input.dim() - 2)
    out = ops.reshape(out, tuple(input.shape))
    if weight is not None and bias is not None:
        out = ops.addcmul(ops.reshape(bias, shape), out, ops.reshape(weight, shape))
    elif weight is not None:
        out = ops.mul(out, ops.reshape(weight, shape))
    elif bias is not None:
        out = ops.add(out, ops.reshape(bias, shape))
    if out.dtype is not input.dtype:
        out = ops._to_copy(out, dtype=input.dtype)
    return out, ops.reshape(mean, (N, group)), ops.reshape(invstd, (N, group))


@kernel("CompositeExplicitAutograd")
def native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask):
    """(grad_input, grad_weight, grad_bias) of ``native_group_norm`` from its saved (N, group) statistics; an output
    ``output_mask`` does not ask for is an empty vector (torch's is undefined)."""
    from ...autograd.functions_norm import group_norm_backward_saved
    from ...autograd.grad_mode import no_grad

    check_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group)
    mask = [bool(m) for m in output_mask]
    with no_grad():
        grads = group_norm_backward_saved(grad_out, input, mean, rstd, weight, N, group, mask)
    pd = weight.dtype if weight is not None else mean.dtype
    return tuple(t if t is not None else ops.empty((0,), dtype=input.dtype if i == 0 else pd, device=input.device)
                 for i, t in enumerate(grads))
