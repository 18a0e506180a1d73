"""Rprop (resilient backpropagation): for-loop and foreach, as torch.optim.Rprop."""

from __future__ import annotations

from ..factories import full_like, zeros, zeros_like
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

__all__ = ["Rprop", "rprop"]


def _fresh_state(state, p, group) -> None:
    """The state of a param's first step, as torch's."""
    state["step"] = zeros((), dtype=fe.scalar_dtype())
    state["prev"] = zeros_like(p)
    state["step_size"] = full_like(p.grad, group["lr"])


class Rprop(Optimizer):
    """torch.optim.Rprop (``capturable`` and ``differentiable``: defaults only, Note [Capturable steps])."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        check_hyperparameters(lr=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize)
        defaults.update(host_step_flags("Rprop", capturable=capturable, differentiable=differentiable))
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One Rprop step over every param with a ``.grad``."""
        self._cuda_graph_capture_health_check()
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                params, grads, (prevs, step_sizes, steps,) = self._gather(
                    group, ("prev", "step_size", "step"), _fresh_state)
                etaminus, etaplus = group["etas"]
                step_size_min, step_size_max = group["step_sizes"]
                rprop(params, grads, prevs, step_sizes, steps, foreach=group["foreach"], maximize=group["maximize"],
                      step_size_min=step_size_min, step_size_max=step_size_max, etaminus=etaminus, etaplus=etaplus)
        return loss


def rprop(params, grads, prevs, step_sizes, state_steps, foreach=None, maximize=False, *, step_size_min,
          step_size_max, etaminus, etaplus) -> None:
    """Functional Rprop (``torch.optim.rprop.rprop``)."""
    if foreach is None:
        _, foreach = default_to_fused_or_foreach(params)
    fn = _multi_tensor_rprop if foreach else _single_tensor_rprop
    fn(params, grads, prevs, step_sizes, state_steps, step_size_min=step_size_min, step_size_max=step_size_max,
       etaminus=etaminus, etaplus=etaplus, maximize=maximize)


# Note [Rprop's sign factors]
# torch turns sign(grad * prev) into per-element factors with three masked assignments (>0 -> etaplus,
# <0 -> etaminus, ==0 -> 1), then zeroes the grad where the factor equals etaminus. Because
# 0 < etaminus < 1 < etaplus, the assignments never overlap, so one nested ``where`` gives the same
# factors (NaN stays NaN), and "factor == etaminus" is exactly "sign < 0", tested before the rewrite
# so that an etaminus not representable in the param dtype cannot miss.


def _factors(sign, etaminus, etaplus):
    negative = sign < 0
    factors = ops.where(sign > 0, etaplus, ops.where(negative, etaminus, ops.where(sign == 0, 1.0, sign)))
    return factors, negative


def _single_tensor_rprop(params, grads, prevs, step_sizes, state_steps, *, step_size_min, step_size_max, etaminus,
                         etaplus, maximize) -> None:
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        prev, step_size = prevs[i], step_sizes[i]
        add_to_steps([state_steps[i]], 1.0)
        factors, negative = _factors(grad.mul(prev).sign(), etaminus, etaplus)  # Note [Rprop's sign factors]
        step_size.mul_(factors).clamp_(step_size_min, step_size_max)
        grad = grad.clone().masked_fill_(negative, 0)
        param.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)


def _multi_tensor_rprop(params, grads, prevs, step_sizes, state_steps, *, step_size_min, step_size_max, etaminus,
                        etaplus, maximize) -> None:
    if not params:
        return
    lists = [params, grads, prevs, step_sizes, state_steps]
    for (p, g, prev, sizes, steps), _ in group_by_device_and_dtype(lists).values():
        add_to_steps(steps, 1.0)
        signs = fe.mul_list(g, prev)
        if maximize:
            fe.neg_(signs)
        fe.copy_(prev, g)
        if maximize:
            fe.neg_(prev)
        g = prev
        fe.sign_(signs)
        factors = [_factors(s, etaminus, etaplus) for s in signs]  # Note [Rprop's sign factors]
        fe.mul_list_(sizes, [f for f, _ in factors])
        for size in sizes:
            size.clamp_(step_size_min, step_size_max)
        for grad, (_, negative) in zip(g, factors):
            grad.masked_fill_(negative, 0)
        grad_signs = [grad.sign() for grad in g]
        ops._foreach_addcmul_.Scalar(p, grad_signs, sizes, -1)
