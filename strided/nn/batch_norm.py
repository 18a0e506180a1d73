"""``F.batch_norm`` (the ``native_batch_norm`` op: Note [Batch-norm node] in ops/composite/batch_norm.py),
``F.instance_norm`` and ``F.group_norm`` (both through that op): per-channel (dim 1) normalization with batch
statistics in training, running statistics in evaluation; per-sample, per-channel normalization (batch norm of
the input seen as one sample of N * C channels, as torch lowers it); per-sample normalization of channel groups
(one sample of N * groups channels, then the per-channel affine step).

Note [Batch-norm statistics]
As torch: half-precision inputs are normalized in float32 and the result cast back; training
normalizes with the biased batch variance and updates the running variance with the unbiased one
(``n / (n - 1)``), as in-place updates of the buffers below autograd; evaluation uses the running
statistics, which then take no gradient.
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..autograd.grad_mode import no_grad
from ..backends.meta.reductions import type_name
from ..ops import bound as ops
from ..ops.complex_support import refuse_complex
from ..ops.composite.batch_norm import check_batch_norm_input
from ..tensor import Tensor

__all__ = ["batch_norm", "instance_norm", "group_norm"]


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize ``input`` (N, C, ...) per channel, then scale by ``weight`` and shift by ``bias``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"batch_norm(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.dim() < 2:
        raise ValueError(f"Expected 2D or higher input, got {input.dim()}D input")
    check_batch_norm_input(input)  # torch's words (instance_norm lowers to batch_norm, as here)
    c = input.shape[1]
    if training:
        if eps <= 0:  # the variance of a constant channel would divide by zero
            raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
        count = input.numel() // c if c else 0
        if count == 1:  # torch's _verify_batch_size: an empty batch passes (and normalizes nothing)
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape}")
    if input.numel() == 0:  # torch's _batch_norm_impl_index: a clone kept in the graph, running statistics untouched
        out = ops.clone(input)
        if weight is not None:
            out = out * weight[0]
        if bias is not None:
            out = out + bias[0]
        return out
    # one op, one node keeping the input and the statistics (Note [Batch-norm node]); the running statistics are
    # updated in place without a gradient (Note [Batch-norm statistics])
    return ops.native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)[0]


def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize each channel of each sample of ``input`` (N, C, ...) over its positions.

    torch's lowering (ATen ``instance_norm``): the input viewed as (1, N * C, ...) goes through
    ``batch_norm`` with the per-channel tensors repeated N times; the running statistics become the
    mean over the N copies batch_norm updated.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"instance_norm(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.dim() < 2:
        raise ValueError(f"instance_norm(): expected an input with at least 2 dims (N, C, ...), got {input.dim()}D")
    if use_input_stats:
        positions = 1
        for n in input.shape[2:]:
            positions *= n
        if positions == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input size {input.shape}")
    elif running_mean is None or running_var is None:
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    b, c = input.shape[0], input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and (not isinstance(t, Tensor) or t.numel() != c):
            got = f"{t.numel()} elements" if isinstance(t, Tensor) else type(t).__name__
            raise RuntimeError(f"instance_norm(): {name} should be a tensor of {c} elements (one per channel "
                               f"of input {list(input.shape)}), got {got}")

    def repeated(t):
        return None if t is None else ops.repeat(t, [b])

    mean_, var_ = repeated(running_mean), repeated(running_var)
    flat = ops.reshape(ops.contiguous(input), (1, b * c) + tuple(input.shape[2:]))
    out = batch_norm(flat, mean_, var_, repeated(weight), repeated(bias), use_input_stats, momentum, eps)
    with no_grad():
        if running_mean is not None:
            running_mean.copy_(ops.mean(ops.reshape(mean_, (b, c)), [0]))
        if running_var is not None:
            running_var.copy_(ops.mean(ops.reshape(var_, (b, c)), [0]))
    return ops.reshape(out, tuple(input.shape))


def group_norm(
    input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None, eps: float = 1e-5
) -> Tensor:
    """Normalize each of ``num_groups`` channel groups of every sample (biased variance over the group's
    channels and positions), then scale and shift per channel; half inputs use float32 statistics."""
    if not isinstance(input, Tensor):
        raise TypeError(f"group_norm(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    if not isinstance(num_groups, int) or isinstance(num_groups, bool) or num_groups <= 0:
        raise ValueError(f"group_norm(): num_groups must be a positive integer, got {num_groups!r}")
    n, c = input.shape[0], input.shape[1]
    if c % num_groups:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by num_groups, but got input of "
            f"shape {list(input.shape)} and num_groups={num_groups}"
        )
    refuse_complex(input, "GroupNormKernelImpl", "GroupNormKernelImpl")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"GroupNormKernelImpl\" not implemented for '{type_name(input.dtype)}'")
    input, weight, bias = _autocast_fp32(input, weight, bias)
    # one op, one node (Note [Group-norm node])
    hxw = 1
    for size in input.shape[2:]:
        hxw *= size
    return ops.native_group_norm(input, weight, bias, n, c, hxw, num_groups, eps)[0]


def _autocast_fp32(*tensors):
    """Under CUDA autocast, group_norm's floating operands in float32 (torch's CUDA autocast lists it there; its
    CPU autocast does not)."""
    from ..amp.autocast_mode import is_autocast_enabled

    if tensors[0].device.type != "cuda" or not is_autocast_enabled("cuda"):
        return tensors
    return tuple(t if t is None or t.dtype is not _dt.float16 and t.dtype is not _dt.bfloat16 else t.float()
                 for t in tensors)
