"""Adagrad with lr decay: for-loop and foreach, as torch.optim.Adagrad."""

from __future__ import annotations

from ..factories import full_like, tensor
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

__all__ = ["Adagrad", "adagrad"]


class Adagrad(Optimizer):
    """torch.optim.Adagrad (``fused`` and ``differentiable`` are taken at their defaults and refused when set:
    strided has no ``_fused_adagrad_`` kernel).

    As torch, the state (``step`` and the ``sum`` accumulator, filled with ``initial_accumulator_value``)
    is created in the constructor for every param, not at the first step.
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        check_hyperparameters(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                              initial_accumulator_value=initial_accumulator_value, eps=eps)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize)
        defaults.update(host_step_flags("Adagrad", differentiable=differentiable, fused=fused))
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = tensor(0.0, dtype=fe.scalar_dtype())
                state["sum"] = full_like(p, initial_accumulator_value)

    def step(self, closure=None):
        """One Adagrad step over every param with a ``.grad``."""
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                params, grads, (sums, steps,) = self._gather(
                    group, ("sum", "step"))
                adagrad(params, grads, sums, steps, foreach=group["foreach"], lr=group["lr"],
                        weight_decay=group["weight_decay"], lr_decay=group["lr_decay"], eps=group["eps"],
                        maximize=group["maximize"])
        return loss


def adagrad(params, grads, state_sums, state_steps, foreach=None, *, lr, weight_decay, lr_decay, eps,
            maximize) -> None:
    """Functional Adagrad (``torch.optim.adagrad.adagrad``)."""
    if foreach is None:
        _, foreach = default_to_fused_or_foreach(params)
    fn = _multi_tensor_adagrad if foreach else _single_tensor_adagrad
    fn(params, grads, state_sums, state_steps, lr=lr, weight_decay=weight_decay, lr_decay=lr_decay, eps=eps,
       maximize=maximize)


def _single_tensor_adagrad(params, grads, state_sums, state_steps, *, lr, weight_decay, lr_decay, eps,
                           maximize) -> None:
    for param, grad, state_sum, step_t in zip(params, grads, state_sums, state_steps):
        (step,) = fe.bump_steps([step_t])
        grad = grad if not maximize else -grad
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        clr = lr / (1 + (step - 1) * lr_decay)
        state_sum.addcmul_(grad, grad, value=1)
        std = state_sum.sqrt().add_(eps)
        param.addcdiv_(grad, std, value=-clr)


def _multi_tensor_adagrad(params, grads, state_sums, state_steps, *, lr, weight_decay, lr_decay, eps,
                          maximize) -> None:
    if not params:
        return
    for (p, g, sums, steps), _ in group_by_device_and_dtype([params, grads, state_sums, state_steps]).values():
        if maximize:
            g = ops._foreach_neg.default(g)
        values = fe.bump_steps(steps)
        if weight_decay != 0:
            if maximize:
                ops._foreach_add_.List(g, p, alpha=weight_decay)
            else:
                g = ops._foreach_add.List(g, p, alpha=weight_decay)
        minus_clr = [-lr / (1 + (s - 1) * lr_decay) for s in values]
        ops._foreach_addcmul_.Scalar(sums, g, g, 1)
        std = ops._foreach_sqrt.default(sums)
        ops._foreach_add_.Scalar(std, eps)
        if weight_decay != 0 or maximize:
            fe.mul_scalar_list_(g, minus_clr)
            numerator = g
        else:
            numerator = fe.mul_scalar_list(g, minus_clr)
        fe.addcdiv_(p, numerator, std)
