"""RMSprop (plain, centered, with momentum): for-loop and foreach, as torch.optim.RMSprop."""

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

__all__ = ["RMSprop", "rmsprop"]


class RMSprop(Optimizer):
    """torch.optim.RMSprop (``capturable`` and ``differentiable``: defaults only, Note [Capturable steps])."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False):
        # Note [Keyword-only flags]: torch's 8th positional argument is ``capturable``, which strided does not
        # take here, so the flags after ``centered`` are keyword-only rather than silently shifted.
        check_hyperparameters(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize)
        defaults.update(host_step_flags("RMSprop", capturable=capturable, differentiable=differentiable))
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One RMSprop step over every param with a ``.grad``."""
        self._cuda_graph_capture_health_check()
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                keys = ("square_avg", "step") + (("momentum_buffer",) if group["momentum"] > 0 else ()) + (
                    ("grad_avg",) if group["centered"] else ())
                params, grads, lists = self._gather(group, keys, _fresh_state)
                state = dict(zip(keys, lists))
                rmsprop(params, grads, state["square_avg"], state.get("grad_avg", []),
                        state.get("momentum_buffer", []), state["step"], foreach=group["foreach"],
                        maximize=group["maximize"], lr=group["lr"], alpha=group["alpha"], eps=group["eps"],
                        weight_decay=group["weight_decay"], momentum=group["momentum"], centered=group["centered"])
        return loss


def _fresh_state(state, p, group) -> None:
    state["step"] = zeros((), dtype=fe.scalar_dtype())
    state["square_avg"] = zeros_like(p)
    if group["momentum"] > 0:
        state["momentum_buffer"] = zeros_like(p)
    if group["centered"]:
        state["grad_avg"] = zeros_like(p)


def rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps, foreach=None, maximize=False,
            *, lr, alpha, eps, weight_decay, momentum, centered) -> None:
    """Functional RMSprop (``torch.optim.rmsprop.rmsprop``)."""
    if foreach is None:
        _, foreach = default_to_fused_or_foreach(params)
    fn = _multi_tensor_rmsprop if foreach else _single_tensor_rmsprop
    fn(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps, lr=lr, alpha=alpha, eps=eps,
       weight_decay=weight_decay, momentum=momentum, centered=centered, maximize=maximize)


def _single_tensor_rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps, *, lr, alpha,
                           eps, weight_decay, momentum, centered, maximize) -> None:
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        square_avg = square_avgs[i]
        add_to_steps([state_steps[i]], 1.0)
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        if centered:
            grad_avg = grad_avgs[i]
            grad_avg.lerp_(grad, 1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg.add_(eps)
        if momentum > 0:
            buf = momentum_buffer_list[i]
            buf.mul_(momentum).addcdiv_(grad, avg)
            param.add_(buf, alpha=-lr)
        else:
            param.addcdiv_(grad, avg, value=-lr)


def _multi_tensor_rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps, *, lr, alpha,
                          eps, weight_decay, momentum, centered, maximize) -> None:
    if not params:
        return
    lists = [params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps]
    for (p, g, sq, gavg, bufs, steps), _ in group_by_device_and_dtype(lists).values():
        if maximize:
            g = ops._foreach_neg.default(g)
        add_to_steps(steps, 1.0)
        if weight_decay != 0:
            if maximize:
                ops._foreach_add_.List(g, p, alpha=weight_decay)
            else:
                g = ops._foreach_add.List(g, p, alpha=weight_decay)
        ops._foreach_mul_.Scalar(sq, alpha)
        ops._foreach_addcmul_.Scalar(sq, g, g, 1 - alpha)
        if centered:
            ops._foreach_lerp_.Scalar(gavg, g, 1 - alpha)
            avg = fe.addcmul(sq, gavg, gavg, -1)
            fe.sqrt_(avg)
        else:
            avg = ops._foreach_sqrt.default(sq)
        ops._foreach_add_.Scalar(avg, eps)
        if momentum > 0:
            ops._foreach_mul_.Scalar(bufs, momentum)
            fe.addcdiv_(bufs, g, avg)
            ops._foreach_add_.List(p, bufs, alpha=-lr)
        else:
            fe.addcdiv_(p, g, avg, -lr)
