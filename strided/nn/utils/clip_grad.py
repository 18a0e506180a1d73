"""Gradient clipping (torch.nn.utils.clip_grad_norm_ / clip_grad_value_)."""

from __future__ import annotations

import math
from collections.abc import Iterable

from ... import dtypes as _dt
from ...autograd.grad_mode import no_grad
from ...ops import bound as ops
from ...tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_value_"]


def _grads(parameters) -> list[Tensor]:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def clip_grad_norm_(parameters: Iterable[Tensor] | Tensor, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False) -> Tensor:
    """Scale the gradients in place so that their joint ``norm_type``-norm is at most ``max_norm``.

    The norm is computed over all gradients together, as if concatenated into one vector; returns
    it (before clipping) as a 0-dim tensor. Nothing waits for the device unless
    ``error_if_nonfinite`` is set.
    """
    grads = _grads(parameters)
    norm_type = float(norm_type)
    if not grads:
        return ops.zeros(())
    device = grads[0].device
    with no_grad():
        if math.isinf(norm_type):
            norms = [g.abs().max().to(device, _dt.float32) for g in grads]
            total = norms[0] if len(norms) == 1 else ops.stack(norms).max()
        else:
            norms = [ops.norm(g, norm_type).to(device, _dt.float32) for g in grads]
            total = norms[0] if len(norms) == 1 else ops.norm(ops.stack(norms), norm_type)
        if error_if_nonfinite and not ops.isfinite(total).item():
            raise RuntimeError(
                f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it "
                "cannot be clipped. To disable this error and scale the gradients by the non-finite norm "
                "anyway, set `error_if_nonfinite=False`"
            )
        coef = ops.clamp(max_norm / (total + 1e-6), max=1.0)
        for g in grads:
            g.mul_(coef.to(g.device, g.dtype))
    return total


def clip_grad_value_(parameters: Iterable[Tensor] | Tensor, clip_value: float) -> None:
    """Clamp every gradient element to ``[-clip_value, clip_value]`` in place."""
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)
