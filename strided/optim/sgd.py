"""SGD with momentum, dampening, Nesterov and weight decay: for-loop, foreach and fused, as torch."""

from __future__ import annotations

from ..factories import empty_like
from ..ops import bound as ops
from ..tensor import Tensor
from ._multi_tensor import multi_tensor_sgd
from .optimizer import (
    _REQUIRED,
    Optimizer,
    check_fused,
    default_to_fused_or_foreach,
    group_by_device_and_dtype,
    no_grad,
)

__all__ = ["SGD", "sgd"]


class SGD(Optimizer):
    """torch.optim.SGD."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr is not _REQUIRED and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach, differentiable=differentiable,
                        fused=fused)
        super().__init__(params, defaults)
        if fused:
            check_fused([p for g in self.param_groups for p in g["params"]], foreach, differentiable)

    def step(self, closure=None):
        """One SGD step over every param with a ``.grad``."""
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                params, grads, bufs = [], [], []
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    params.append(p)
                    grads.append(p.grad)
                    bufs.append(self.state[p].get("momentum_buffer") if group["momentum"] != 0 else None)
                sgd(params, grads, bufs, weight_decay=group["weight_decay"], momentum=group["momentum"],
                    lr=group["lr"], dampening=group["dampening"], nesterov=group["nesterov"],
                    maximize=group["maximize"], foreach=group["foreach"], fused=group["fused"],
                    grad_scale=getattr(self, "grad_scale", None), found_inf=getattr(self, "found_inf", None))
                if group["momentum"] != 0:
                    for p, buf in zip(params, bufs):
                        self.state[p]["momentum_buffer"] = buf
        return loss


def sgd(params, grads, momentum_buffer_list, *, foreach=None, fused=None, grad_scale=None, found_inf=None,
        weight_decay, momentum, lr, dampening, nesterov, maximize) -> None:
    """Functional SGD (``torch.optim.sgd.sgd``); fills ``momentum_buffer_list`` in place."""
    if foreach is None and fused is None:
        _, foreach = default_to_fused_or_foreach(params)
    kw = dict(weight_decay=weight_decay, momentum=momentum, lr=lr, dampening=dampening, nesterov=nesterov,
              maximize=maximize)
    if fused:
        _fused_sgd(params, grads, momentum_buffer_list, grad_scale=grad_scale, found_inf=found_inf, **kw)
        return
    if grad_scale is not None or found_inf is not None:
        raise RuntimeError("grad_scale and found_inf are only supported by the fused implementation")
    if foreach:
        multi_tensor_sgd(params, grads, momentum_buffer_list, **kw)
    else:
        _single_tensor_sgd(params, grads, momentum_buffer_list, **kw)


def _single_tensor_sgd(params, grads, momentum_buffer_list, *, weight_decay, momentum, lr, dampening, nesterov,
                       maximize) -> None:
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        if momentum != 0:
            buf = momentum_buffer_list[i]
            if buf is None:
                buf = momentum_buffer_list[i] = grad.clone().detach()
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            grad = grad.add(buf, alpha=momentum) if nesterov else buf
        param.add_(grad, alpha=-lr)


def _fused_sgd(params, grads, momentum_buffer_list, *, grad_scale, found_inf, weight_decay, momentum, lr,
               dampening, nesterov, maximize) -> None:
    if not params:
        return
    no_buffer = momentum == 0
    is_first_step = not no_buffer and all(b is None for b in momentum_buffer_list)
    if is_first_step:
        for i, g in enumerate(grads):
            momentum_buffer_list[i] = empty_like(g)
    lists = [params, grads, [] if no_buffer else momentum_buffer_list]
    scales: dict = {}
    infs: dict = {}
    for (device, _), ((p, g, bufs), _) in group_by_device_and_dtype(lists).items():
        dev_scale = dev_inf = None
        if grad_scale is not None:
            dev_scale = scales.setdefault(device, grad_scale.to(device=device, non_blocking=True))
        if found_inf is not None:
            dev_inf = infs.setdefault(device, found_inf.to(device=device, non_blocking=True))
        ops._fused_sgd_.default(p, g, [] if no_buffer else bufs, weight_decay=weight_decay, momentum=momentum,
                                lr=lr, dampening=dampening, nesterov=nesterov, maximize=maximize,
                                is_first_step=is_first_step, grad_scale=dev_scale, found_inf=dev_inf)
