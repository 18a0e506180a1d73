"""Gradient clipping, as torch.nn.utils: ``get_total_norm`` (the norm of the tensors' norms) and
``clip_grads_with_norm_`` (scale by ``min(max_norm / (total + 1e-6), 1)``), which ``clip_grad_norm_`` chains;
``clip_grad_value_``. Each tensor's norm is taken in its own dtype and the norms are stacked on the first
tensor's device, as torch's, so a bfloat16 gradient's norm is rounded as torch rounds it. Nothing waits for
the device unless ``error_if_nonfinite`` is set. ``foreach`` is accepted (strided's per-tensor path gives the
same values as torch's foreach one).
"""

from __future__ import annotations

import types
import warnings
from collections.abc import Iterable

from ...autograd.grad_mode import no_grad
from ...linalg import vector_norm
from ...ops import bound as ops
from ...tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]


def get_total_norm(tensors: Iterable[Tensor] | Tensor, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    """The ``norm_type``-norm of the tensors' norms (as if all were one vector); 0 for none."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"get_total_norm(): expected Tensors, got {type(t).__name__}")
    norm_type = float(norm_type)
    if not tensors:
        return ops.zeros(())
    first = tensors[0].device
    with no_grad():
        norms = [vector_norm(t, norm_type) for t in tensors]
        total = vector_norm(ops.stack([n.to(first) for n in norms]), norm_type)
    if error_if_nonfinite and bool(ops.logical_or(total.isnan(), total.isinf())):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it "
                           "cannot be clipped. To disable this error and scale the gradients by the non-finite norm "
                           "anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters: Iterable[Tensor] | Tensor, max_norm: float, total_norm: Tensor,
                          foreach: bool | None = None) -> None:
    """Scale the gradients in place by ``min(max_norm / (total_norm + 1e-6), 1)`` (no host synchronization)."""
    if not isinstance(total_norm, Tensor):
        raise TypeError(f"clip_grads_with_norm_(): total_norm must be a Tensor (get_total_norm's result), got "
                        f"{type(total_norm).__name__}")
    parameters = [parameters] if isinstance(parameters, Tensor) else parameters
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return
    with no_grad():
        coef = ops.clamp(float(max_norm) / (total_norm + 1e-6), max=1.0)
        by_device: dict = {}
        for g in grads:
            c = by_device.get(g.device)
            if c is None:
                c = by_device[g.device] = coef.to(g.device)
            g.mul_(c)


def clip_grad_norm_(parameters: Iterable[Tensor] | Tensor, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Scale the gradients in place so that their joint ``norm_type``-norm is at most ``max_norm``; returns that
    norm (before clipping) as a 0-dim tensor."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=2)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    """Deprecated name of :func:`clip_grad_norm_` (torch's warning)."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: Iterable[Tensor] | Tensor, clip_value: float, foreach: bool | None = None) -> None:
    """Clamp every gradient element to ``[-clip_value, clip_value]`` in place."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    clip_value = float(clip_value)
    with no_grad():
        for p in parameters:
            if p.grad is not None:
                p.grad.clamp_(-clip_value, clip_value)
