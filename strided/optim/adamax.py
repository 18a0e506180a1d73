"""Adamax (Adam with the infinity norm): for-loop and foreach, as torch.optim.Adamax."""

from __future__ import annotations

from ..factories import tensor, zeros_like
from ..ops import bound as ops
from . import _foreach as fe
from .optimizer import (
    Optimizer,
    check_hyperparameters,
    default_to_fused_or_foreach,
    group_by_device_and_dtype,
    host_step_flags,
    no_grad,
)

__all__ = ["Adamax", "adamax"]


def _fresh_state(state, p, group) -> None:
    """The state of a param's first step, as torch's."""
    state["step"] = tensor(0.0, dtype=fe.scalar_dtype())
    state["exp_avg"] = zeros_like(p)
    state["exp_inf"] = zeros_like(p)


class Adamax(Optimizer):
    """torch.optim.Adamax (``capturable`` and ``differentiable``: defaults only, Note [Capturable steps])."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        check_hyperparameters(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize)
        defaults.update(host_step_flags("Adamax", capturable=capturable, differentiable=differentiable))
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One Adamax step over every param with a ``.grad``."""
        self._cuda_graph_capture_health_check()
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                params, grads, (exp_avgs, exp_infs, steps,) = self._gather(
                    group, ("exp_avg", "exp_inf", "step"), _fresh_state)
                beta1, beta2 = group["betas"]
                adamax(params, grads, exp_avgs, exp_infs, steps, foreach=group["foreach"], maximize=group["maximize"],
                       eps=group["eps"], beta1=beta1, beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"])
        return loss


def adamax(params, grads, exp_avgs, exp_infs, state_steps, foreach=None, maximize=False, *, eps, beta1, beta2, lr,
           weight_decay) -> None:
    """Functional Adamax (``torch.optim.adamax.adamax``)."""
    if foreach is None:
        _, foreach = default_to_fused_or_foreach(params)
    fn = _multi_tensor_adamax if foreach else _single_tensor_adamax
    fn(params, grads, exp_avgs, exp_infs, state_steps, eps=eps, beta1=beta1, beta2=beta2, lr=lr,
       weight_decay=weight_decay, maximize=maximize)


def _single_tensor_adamax(params, grads, exp_avgs, exp_infs, state_steps, *, eps, beta1, beta2, lr, weight_decay,
                          maximize) -> None:
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_inf = exp_avgs[i], exp_infs[i]
        (step,) = fe.bump_steps([state_steps[i]])
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        exp_avg.lerp_(grad, 1 - beta1)
        exp_inf.copy_(ops.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps)))
        clr = lr / (1 - beta1 ** step)
        param.addcdiv_(exp_avg, exp_inf, value=-clr)


def _multi_tensor_adamax(params, grads, exp_avgs, exp_infs, state_steps, *, eps, beta1, beta2, lr, weight_decay,
                         maximize) -> None:
    if not params:
        return
    lists = [params, grads, exp_avgs, exp_infs, state_steps]
    for (p, g, m, u, steps), _ in group_by_device_and_dtype(lists).values():
        if maximize:
            g = ops._foreach_neg.default(g)
        values = fe.bump_steps(steps)
        if weight_decay != 0:
            if maximize:
                ops._foreach_add_.List(g, p, alpha=weight_decay)
            else:
                g = ops._foreach_add.List(g, p, alpha=weight_decay)
        ops._foreach_lerp_.Scalar(m, g, 1 - beta1)
        ops._foreach_mul_.Scalar(u, beta2)
        if not maximize and weight_decay == 0:
            g = fe.abs(g)
        else:
            fe.abs_(g)
        ops._foreach_add_.Scalar(g, eps)
        ops._foreach_maximum_.List(u, g)
        step_size = [lr / (1 - beta1 ** s) * -1 for s in values]
        ops._foreach_addcdiv_.ScalarList(p, m, u, step_size)
