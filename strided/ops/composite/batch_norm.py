"""The ``native_batch_norm`` op (``F.batch_norm``, and ``F.instance_norm`` through it): one op, one autograd node
(``NativeBatchNormBackward0``), whose node keeps the input, the weight and the per-channel statistics only, as
torch's (Note [Batch-norm node]).

Note [Batch-norm node]
Composed of ops under autograd, batch norm kept the centered input and the normalized one from the forward to
the backward (two activations' worth besides the input, in float32 for a half input), for every normalization
layer of a network at once. As one CompositeExplicitAutograd op its intermediate tensors are freed as the
forward goes; the gradient (``autograd/functions_norm.py``: ``batch_norm_backward``) recomputes the normalized
input from the saved mean and inverse standard deviation (the op's second and third outputs). Half-precision
inputs are normalized in float32 and the result cast back (Note [Batch-norm statistics] in nn/batch_norm.py).
"""

from __future__ import annotations

from ... import dtypes as dt
from ...dispatch.library import kernel
from .. import bound as ops

__all__ = []


def check_batch_norm_input(input) -> None:
    """torch's refusal of a non-floating batch-norm input (its kernel's name: the CUDA one on CUDA)."""
    if not input.dtype.is_floating_point:
        from ...backends.meta.reductions import type_name

        kernel_name = "batch_norm_stats_cuda" if input.device.type == "cuda" else "batch_norm"
        raise NotImplementedError(f"\"{kernel_name}\" not implemented for '{type_name(input.dtype)}'")


def _check_arguments(input, weight, bias, running_mean, running_var) -> None:
    """torch's checks of the op's arguments: a channel dim, a floating input, one element per channel."""
    from ...backends.meta.common import wrap_dim

    wrap_dim(1, input.dim())  # torch's IndexError for an input without a channel dim
    check_batch_norm_input(input)
    c = input.shape[1]
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean), ("running_var", running_var)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")


@kernel("CompositeExplicitAutograd")
def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """(output, mean, inverse standard deviation): the statistics of the batch in training (the running ones,
    which are updated in place, otherwise), per channel (dim 1)."""
    _check_arguments(input, weight, bias, running_mean, running_var)
    x = ops._to_copy(input, dtype=dt.float32) if input.dtype in (dt.float16, dt.bfloat16) else input
    c = x.shape[1]
    dims = [0, *range(2, x.dim())]
    shape = [1, c] + [1] * (x.dim() - 2)
    if training:
        count = x.numel() // c if c else 0
        var, mean = ops.var_mean(x, dims, correction=0)
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean, alpha=momentum)
        if running_var is not None:
            running_var.mul_(1 - momentum).add_(ops.mul(var, count / (count - 1)), alpha=momentum)
    else:
        for name, stat in (("running_mean", running_mean), ("running_var", running_var)):
            if stat is None:  # torch's words (its native_batch_norm, unlike F.batch_norm, crashes here)
                raise RuntimeError(f"{name} must be defined in evaluation mode")
        # copies (an output is never an alias of an input the op does not view)
        mean, var = ops._to_copy(running_mean, dtype=x.dtype), ops._to_copy(running_var, dtype=x.dtype)
    invstd = ops.rsqrt(ops.add(var, eps))
    scale = invstd if weight is None else ops.mul(invstd, weight)
    centered = ops.sub(x, ops.reshape(mean, shape))
    if bias is None:
        out = ops.mul(centered, ops.reshape(scale, shape))
    else:
        out = ops.addcmul(ops.reshape(bias, shape), centered, ops.reshape(scale, shape))
    if out.dtype is not input.dtype:
        out = ops._to_copy(out, dtype=input.dtype)
    return out, mean, invstd


@kernel("CompositeExplicitAutograd")
def native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean, save_invstd, train,
                               eps, output_mask):
    """(grad_input, grad_weight, grad_bias) of ``native_batch_norm``; an output ``output_mask`` does not ask for is
    an empty vector (torch's is undefined). Evaluation normalizes with the running statistics when given."""
    from ...autograd.functions_norm import batch_norm_backward_decomposed

    if grad_out._sizes != input._sizes:
        raise RuntimeError(f"native_batch_norm_backward: grad_out of size {list(grad_out._sizes)} does not match "
                           f"input of size {list(input._sizes)}")
    _check_arguments(input, weight, None, running_mean, running_var)
    if not train and running_mean is not None and running_var is not None:
        save_mean, save_invstd = running_mean, ops.rsqrt(ops.add(running_var, eps))
    if save_mean is None or save_invstd is None:
        raise RuntimeError("native_batch_norm_backward: the saved mean and invstd (or, in evaluation, the running "
                           "statistics) must be defined")
    mask = [bool(m) for m in output_mask]
    grads = batch_norm_backward_decomposed(grad_out, input, weight, save_mean, save_invstd, train, eps, mask)
    pd = weight.dtype if weight is not None else save_mean.dtype
    return tuple(t if t is not None else ops.empty((0,), dtype=input.dtype if i == 0 else pd, device=input.device)
                 for i, t in enumerate(grads))
