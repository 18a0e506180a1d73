"""Adagrad with lr decay: for-loop, foreach and fused (CPU), as torch.optim.Adagrad."""

from __future__ import annotations

from .. import dtypes as dt
from ..factories import full_like, tensor, zeros
from ..ops import bound as ops
from . import _foreach as fe
from .optimizer import (
    Optimizer,
    check_fused,
    check_hyperparameters,
    default_to_fused_or_foreach,
    group_by_device_and_dtype,
    host_step_flags,
    no_grad,
)

__all__ = ["Adagrad", "adagrad"]


class Adagrad(Optimizer):
    """torch.optim.Adagrad: for-loop, foreach and (CPU params only, as torch) fused (``differentiable`` is taken at
    its default and refused when set).

    As torch, the state (``step`` and the ``sum`` accumulator, filled with ``initial_accumulator_value``)
    is created in the constructor for every param, not at the first step; a fused group's ``step`` is a float32
    tensor on the param's device.
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        check_hyperparameters(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                              initial_accumulator_value=initial_accumulator_value, eps=eps)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize)
        defaults.update(host_step_flags("Adagrad", differentiable=differentiable), fused=fused)
        super().__init__(params, defaults)
        if fused:
            check_fused([p for g in self.param_groups for p in g["params"]], foreach, differentiable,
                        devices=("cpu",))  # torch's fused Adagrad kernel is the CPU's only
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = (zeros((), dtype=dt.float32, device=p.device) if group["fused"]
                                 else tensor(0.0, dtype=fe.scalar_dtype()))
                state["sum"] = full_like(p, initial_accumulator_value)

    def step(self, closure=None):
        """One Adagrad step over every param with a ``.grad``."""
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                params, grads, (sums, steps,) = self._gather(
                    group, ("sum", "step"))
                adagrad(params, grads, sums, steps, foreach=group["foreach"], fused=group["fused"],
                        grad_scale=getattr(self, "grad_scale", None), found_inf=getattr(self, "found_inf", None),
                        lr=group["lr"], weight_decay=group["weight_decay"], lr_decay=group["lr_decay"],
                        eps=group["eps"], maximize=group["maximize"])
        return loss


def adagrad(params, grads, state_sums, state_steps, foreach=None, fused=None, grad_scale=None, found_inf=None, *,
            lr, weight_decay, lr_decay, eps, maximize) -> None:
    """Functional Adagrad (``torch.optim.adagrad.adagrad``)."""
    kw = dict(lr=lr, weight_decay=weight_decay, lr_decay=lr_decay, eps=eps, maximize=maximize)
    if fused:
        _fused_adagrad(params, grads, state_sums, state_steps, grad_scale=grad_scale, found_inf=found_inf, **kw)
        return
    if grad_scale is not None or found_inf is not None:
        raise RuntimeError("grad_scale and found_inf are only supported by the fused implementation")
    if foreach is None:
        _, foreach = default_to_fused_or_foreach(params)
    fn = _multi_tensor_adagrad if foreach else _single_tensor_adagrad
    fn(params, grads, state_sums, state_steps, **kw)


def _fused_adagrad(params, grads, state_sums, state_steps, *, grad_scale, found_inf, lr, weight_decay, lr_decay,
                   eps, maximize) -> None:
    """torch's ``_fused_adagrad``: the steps bumped, one ``_fused_adagrad_`` per (device, dtype) group, a step that
    ``found_inf`` skipped taken back."""
    if not params:
        return
    if any(p.dtype.is_complex for p in params):
        raise RuntimeError("`fused` does not support sparse grad or complex param")
    for (device, _), ((p, g, sums, steps), _) in group_by_device_and_dtype(
            [params, grads, state_sums, state_steps]).items():
        dev_scale = None if grad_scale is None else grad_scale.to(device=device)
        dev_inf = None if found_inf is None else found_inf.to(device=device)
        ops._foreach_add_.Scalar(steps, 1)
        ops._fused_adagrad_.default(p, g, sums, steps, lr=lr, lr_decay=lr_decay, weight_decay=weight_decay, eps=eps,
                                    maximize=maximize, grad_scale=dev_scale, found_inf=dev_inf)
        if dev_inf is not None:
            ops._foreach_sub_.List(steps, [dev_inf] * len(steps))


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
