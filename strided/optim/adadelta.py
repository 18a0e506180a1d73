"""Adadelta: for-loop and foreach, as torch.optim.Adadelta."""

from __future__ import annotations

from ..factories import zeros, zeros_like
from ..ops import bound as ops
from . import _foreach as fe
from .optimizer import (
    Optimizer,
    add_to_steps,
    check_hyperparameters,
    default_to_fused_or_foreach,
    group_by_device_and_dtype,
    host_step_flags,
    no_grad,
)

__all__ = ["Adadelta", "adadelta"]


def _fresh_state(state, p, group) -> None:
    """The state of a param's first step, as torch's."""
    state["step"] = zeros((), dtype=fe.scalar_dtype())
    state["square_avg"] = zeros_like(p)
    state["acc_delta"] = zeros_like(p)


class Adadelta(Optimizer):
    """torch.optim.Adadelta (``capturable`` and ``differentiable``: defaults only, Note [Capturable steps])."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, maximize=False,
                 capturable=False, differentiable=False):
        check_hyperparameters(lr=lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_hyperparameters(eps=eps, weight_decay=weight_decay)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach)
        defaults.update(host_step_flags("Adadelta", capturable=capturable, differentiable=differentiable))
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One Adadelta step over every param with a ``.grad``."""
        self._cuda_graph_capture_health_check()
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                params, grads, (square_avgs, acc_deltas, steps,) = self._gather(
                    group, ("square_avg", "acc_delta", "step"), _fresh_state)
                adadelta(params, grads, square_avgs, acc_deltas, steps, foreach=group["foreach"],
                         maximize=group["maximize"], lr=group["lr"], rho=group["rho"], eps=group["eps"],
                         weight_decay=group["weight_decay"])
        return loss


def adadelta(params, grads, square_avgs, acc_deltas, state_steps, foreach=None, maximize=False, *, lr, rho, eps,
             weight_decay) -> None:
    """Functional Adadelta (``torch.optim.adadelta.adadelta``)."""
    if foreach is None:
        _, foreach = default_to_fused_or_foreach(params)
    fn = _multi_tensor_adadelta if foreach else _single_tensor_adadelta
    fn(params, grads, square_avgs, acc_deltas, state_steps, lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
       maximize=maximize)


def _single_tensor_adadelta(params, grads, square_avgs, acc_deltas, state_steps, *, lr, rho, eps, weight_decay,
                            maximize) -> None:
    for param, grad, square_avg, acc_delta, step in zip(params, grads, square_avgs, acc_deltas, state_steps):
        add_to_steps([step], 1.0)
        grad = grad if not maximize else -grad
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_()
        delta.div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        param.add_(delta, alpha=-lr)


def _multi_tensor_adadelta(params, grads, square_avgs, acc_deltas, state_steps, *, lr, rho, eps, weight_decay,
                           maximize) -> None:
    if not params:
        return
    lists = [params, grads, square_avgs, acc_deltas, state_steps]
    for (p, g, sq, acc, steps), _ in group_by_device_and_dtype(lists).values():
        add_to_steps(steps, 1.0)
        if maximize:
            g = ops._foreach_neg.default(g)
        if weight_decay != 0:
            if maximize:
                ops._foreach_add_.List(g, p, alpha=weight_decay)
            else:
                g = ops._foreach_add.List(g, p, alpha=weight_decay)
        ops._foreach_mul_.Scalar(sq, rho)
        ops._foreach_addcmul_.Scalar(sq, g, g, 1 - rho)
        std = ops._foreach_add.Scalar(sq, eps)
        fe.sqrt_(std)
        deltas = ops._foreach_add.Scalar(acc, eps)
        fe.sqrt_(deltas)
        fe.div_list_(deltas, std)
        fe.mul_list_(deltas, g)
        ops._foreach_mul_.Scalar(acc, rho)
        ops._foreach_addcmul_.Scalar(acc, deltas, deltas, 1 - rho)
        ops._foreach_add_.List(p, deltas, alpha=-lr)
