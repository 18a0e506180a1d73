"""Negative log-likelihood losses of ``strided.nn.functional`` for Poisson and Gaussian targets,
composed of existing operators (so differentiable through them, on every backend).

Each follows torch.nn.functional's signature, defaults, checks and messages.
"""

from __future__ import annotations

import math

from ..autograd.grad_mode import no_grad
from ..ops import bound as ops
from ..tensor import Tensor
from ._reduction import apply_reduction, get_enum, legacy_get_string

__all__ = ["poisson_nll_loss", "gaussian_nll_loss"]


def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average=None,
    eps: float = 1e-8,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """``exp(x) - target * x`` (``log_input``) or ``x - target * log(x + eps)``; ``full`` adds the
    Stirling approximation of ``log(target!)`` where ``target > 1``."""
    if size_average is not None or reduce is not None:
        reduction = legacy_get_string(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = ops.exp(input) - target * input
    else:
        loss = input - target * ops.log(input + eps)
    if full:
        stirling = target * ops.log(target) - target + 0.5 * ops.log(2 * math.pi * target)
        loss = loss + ops.masked_fill(stirling, ops.le(target, 1), 0)
    return apply_reduction(loss, get_enum(reduction))


def _var_shape(input: Tensor, var: Tensor) -> Tensor:
    """torch's rules: ``var`` has the input's shape, or one dim fewer (then unsqueezed last), or the
    input's rank with exactly one dim of size 1 where the input's differs."""
    if var.shape == input.shape:
        return var
    if tuple(input.shape[:-1]) == tuple(var.shape):
        return ops.unsqueeze(var, -1)
    if input.dim() == var.dim() and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1:
        return var
    raise ValueError("var is of incorrect size")


def gaussian_nll_loss(
    input: Tensor,
    target: Tensor,
    var: Tensor | float,
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    """``0.5 (log(var) + (input - target)**2 / var)`` (plus ``0.5 log(2 pi)`` if ``full``), with ``var``
    clamped at ``eps`` as torch does: the gradient flows as if unclamped."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * ops.ones_like(input)
    # torch's check reads the device (a sync off the CPU); here too. A meta tensor has no data to read.
    elif (not isinstance(var, Tensor) or var.device.type != "meta") and ops.any(var < 0).item():
        raise ValueError("var has negative entry/entries")
    var = _var_shape(input, var)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (ops.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return apply_reduction(loss, get_enum(reduction))


from ..amp.composed_functions import wrap_native as _wrap_native  # noqa: E402

# torch's poisson_nll_loss is an op on its CPU and CUDA float32 autocast lists (Note [Autocast
# around composed functions])
_AUTOCAST_FP32 = ("poisson_nll_loss",)
_wrap_native(globals(), _AUTOCAST_FP32, fp32=_AUTOCAST_FP32)
