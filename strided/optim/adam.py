"""Adam (and the functional ``adam`` shared with AdamW): for-loop, foreach and fused, as torch."""

from __future__ import annotations

from .. import dtypes as dt
from ..factories import tensor, zeros, zeros_like
from ..ops import bound as ops
from ..tensor import Tensor
from ._multi_tensor import multi_tensor_adam
from .optimizer import (
    Optimizer,
    add_to_steps,
    check_fused,
    default_to_fused_or_foreach,
    group_by_device_and_dtype,
    no_grad,
    step_value,
)

__all__ = ["Adam", "adam"]


def _scalar_dtype():
    return dt.float64 if dt.get_default_dtype() is dt.float64 else dt.float32


class Adam(Optimizer):
    """torch.optim.Adam; ``decoupled_weight_decay=True`` is AdamW."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        if isinstance(lr, Tensor):
            if foreach and not capturable:
                raise ValueError("lr as a Tensor is not supported for capturable=False and foreach=True")
            if lr.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if isinstance(betas[0], Tensor) != isinstance(betas[1], Tensor):
            raise ValueError("betas must be either both floats or both Tensors")
        for i, beta in enumerate(betas):
            if isinstance(beta, Tensor):
                if foreach and not capturable:
                    raise ValueError(f"betas[{i}] as a Tensor is not supported for capturable=False and foreach=True")
                if beta.numel() != 1:
                    raise ValueError(f"Tensor betas[{i}] must be 1-element")
        if capturable and not fused:
            raise ValueError("strided.optim: capturable=True is supported with fused=True (Note [Capturable "
                             "steps]); the for-loop and foreach steps compute bias corrections on the host")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)
        if fused:
            check_fused([p for g in self.param_groups for p in g["params"]], foreach, differentiable)

    def _init_group(self, group, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps):
        fused = group["fused"]
        amsgrad = group["amsgrad"]
        states = self.state
        for p in group["params"]:  # once per param per step: lookups hoisted out of the loop
            g = p.grad
            if g is None:
                continue
            params.append(p)
            grads.append(g)
            state = states[p]
            if not state:
                state["step"] = (zeros((), dtype=dt.float32, device=p.device) if fused
                                 else tensor(0.0, dtype=_scalar_dtype()))
                state["exp_avg"] = zeros_like(p)
                state["exp_avg_sq"] = zeros_like(p)
                if amsgrad:
                    state["max_exp_avg_sq"] = zeros_like(p)
            exp_avgs.append(state["exp_avg"])
            exp_avg_sqs.append(state["exp_avg_sq"])
            if amsgrad:
                max_exp_avg_sqs.append(state["max_exp_avg_sq"])
            state_steps.append(state["step"])

    def step(self, closure=None):
        """One Adam step over every param with a ``.grad``."""
        self._cuda_graph_capture_health_check()
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                params, grads, exp_avgs, exp_avg_sqs, max_sqs, steps = [], [], [], [], [], []
                self._init_group(group, params, grads, exp_avgs, exp_avg_sqs, max_sqs, steps)
                beta1, beta2 = group["betas"]
                adam(params, grads, exp_avgs, exp_avg_sqs, max_sqs, steps, foreach=group["foreach"],
                     fused=group["fused"], grad_scale=getattr(self, "grad_scale", None),
                     found_inf=getattr(self, "found_inf", None), amsgrad=group["amsgrad"], beta1=beta1,
                     beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"], eps=group["eps"],
                     maximize=group["maximize"], decoupled=group["decoupled_weight_decay"])
        return loss


def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, foreach=None, fused=None,
         grad_scale=None, found_inf=None, amsgrad, beta1, beta2, lr, weight_decay, eps, maximize,
         decoupled=False) -> None:
    """Functional Adam/AdamW (``torch.optim.adam.adam``): picks the implementation and runs it."""
    if fused is None and foreach is None:
        _, foreach = default_to_fused_or_foreach(params)
    if fused is None:
        fused = False
    if foreach is None:
        foreach = False
    kw = dict(amsgrad=amsgrad, beta1=beta1, beta2=beta2, lr=lr, weight_decay=weight_decay, eps=eps,
              maximize=maximize, decoupled=decoupled)
    if fused:
        _fused_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, grad_scale=grad_scale,
                    found_inf=found_inf, **kw)
        return
    if grad_scale is not None or found_inf is not None:
        raise RuntimeError("grad_scale and found_inf are only supported by the fused implementation")
    if foreach:
        multi_tensor_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, **kw)
    else:
        _single_tensor_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, **kw)


def _single_tensor_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, amsgrad,
                        beta1, beta2, lr, weight_decay, eps, maximize, decoupled) -> None:
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_avg_sq, step_t = exp_avgs[i], exp_avg_sqs[i], state_steps[i]
        bumped = add_to_steps([step_t], 1.0)  # the new value, read in the same pass (CPU steps)
        if weight_decay != 0:
            if decoupled:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        step = bumped[0] if bumped is not None else step_value(step_t)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = bias_correction2 ** 0.5
        if amsgrad:
            max_exp_avg_sqs[i].copy_(ops.maximum(max_exp_avg_sqs[i], exp_avg_sq))
            denom = (max_exp_avg_sqs[i].sqrt() / bias_correction2_sqrt).add_(eps)
        else:
            denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
        param.addcdiv_(exp_avg, denom, value=-step_size)


def _fused_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, grad_scale, found_inf,
                amsgrad, beta1, beta2, lr, weight_decay, eps, maximize, decoupled) -> None:
    if not params:
        return
    fn = ops._fused_adamw_.default if decoupled else ops._fused_adam_.default
    lists = [params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs if amsgrad else [], state_steps]
    scales: dict = {}
    infs: dict = {}
    for (device, _), ((p, g, m, v, vmax, steps), _) in group_by_device_and_dtype(lists).items():
        dev_scale = dev_inf = None
        if grad_scale is not None:
            dev_scale = scales.setdefault(device, grad_scale.to(device=device, non_blocking=True))
        if found_inf is not None:
            dev_inf = infs.setdefault(device, found_inf.to(device=device, non_blocking=True))
        add_to_steps(steps, 1.0)
        fn(p, g, m, v, vmax if amsgrad else [], steps, lr=lr, beta1=beta1, beta2=beta2,
           weight_decay=weight_decay, eps=eps, amsgrad=amsgrad, maximize=maximize, grad_scale=dev_scale,
           found_inf=dev_inf)
        if dev_inf is not None:
            ops._foreach_sub_.List(steps, [dev_inf] * len(steps))
