"""RAdam (rectified Adam, optional decoupled weight decay): for-loop and foreach, as torch.optim.RAdam."""

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

__all__ = ["RAdam", "radam"]


def _fresh_state(state, p, group) -> None:
    """The state of a param's first step, as torch's."""
    state["step"] = tensor(0.0, dtype=fe.scalar_dtype())
    state["exp_avg"] = zeros_like(p)
    state["exp_avg_sq"] = zeros_like(p)


class RAdam(Optimizer):
    """torch.optim.RAdam (``capturable`` and ``differentiable``: defaults only, Note [Capturable steps])."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        check_hyperparameters(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        decoupled_weight_decay=decoupled_weight_decay)
        defaults.update(host_step_flags("RAdam", capturable=capturable, differentiable=differentiable))
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One RAdam step over every param with a ``.grad``."""
        self._cuda_graph_capture_health_check()
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                params, grads, (exp_avgs, exp_avg_sqs, steps,) = self._gather(
                    group, ("exp_avg", "exp_avg_sq", "step"), _fresh_state)
                beta1, beta2 = group["betas"]
                radam(params, grads, exp_avgs, exp_avg_sqs, steps,
                      decoupled_weight_decay=group["decoupled_weight_decay"], foreach=group["foreach"],
                      maximize=group["maximize"], beta1=beta1, beta2=beta2, lr=group["lr"],
                      weight_decay=group["weight_decay"], eps=group["eps"])
        return loss


def radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, decoupled_weight_decay=False, foreach=None,
          maximize=False, *, beta1, beta2, lr, weight_decay, eps) -> None:
    """Functional RAdam (``torch.optim.radam.radam``)."""
    if foreach is None:
        _, foreach = default_to_fused_or_foreach(params)
    fn = _multi_tensor_radam if foreach else _single_tensor_radam
    fn(params, grads, exp_avgs, exp_avg_sqs, state_steps, beta1=beta1, beta2=beta2, lr=lr, weight_decay=weight_decay,
       eps=eps, decoupled_weight_decay=decoupled_weight_decay, maximize=maximize)


def _rect(rho_t, rho_inf):
    """The variance rectification term (defined for rho_t > 4; used when rho_t > 5)."""
    return ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5


def _single_tensor_radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, *, beta1, beta2, lr, weight_decay, eps,
                         decoupled_weight_decay, maximize) -> None:
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_avg_sq = exp_avgs[i], exp_avg_sqs[i]
        (step,) = fe.bump_steps([state_steps[i]])
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        bias_corrected_exp_avg = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * beta2 ** step / bias_correction2
        if rho_t > 5.0:
            update = bias_corrected_exp_avg * lr
            adaptive_lr = bias_correction2 ** 0.5 / exp_avg_sq.sqrt().add_(eps)
            param.add_(update * adaptive_lr * _rect(rho_t, rho_inf), alpha=-1.0)
        else:
            param.add_(bias_corrected_exp_avg * lr, alpha=-1.0)


def _multi_tensor_radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, *, beta1, beta2, lr, weight_decay, eps,
                        decoupled_weight_decay, maximize) -> None:
    if not params:
        return
    lists = [params, grads, exp_avgs, exp_avg_sqs, state_steps]
    for (p, g, m, v, steps), _ in group_by_device_and_dtype(lists).values():
        values = fe.bump_steps(steps)
        if maximize:
            g = ops._foreach_neg.default(g)
        rho_inf = 2 / (1 - beta2) - 1
        rho_ts = [rho_inf - 2 * s * beta2 ** s / (1 - beta2 ** s) for s in values]
        if weight_decay != 0:
            if decoupled_weight_decay:
                ops._foreach_mul_.Scalar(p, 1 - lr * weight_decay)
            elif maximize:
                ops._foreach_add_.List(g, p, alpha=weight_decay)
            else:
                g = ops._foreach_add.List(g, p, alpha=weight_decay)
        ops._foreach_lerp_.Scalar(m, g, 1 - beta1)
        ops._foreach_mul_.Scalar(v, beta2)
        ops._foreach_addcmul_.Scalar(v, g, g, 1 - beta2)
        del g
        rect = [_rect(r, rho_inf) if r > 5 else 0 for r in rho_ts]
        unrectified = [0 if r > 0 else 1.0 for r in rect]
        bias_correction1 = [1 - beta1 ** s for s in values]
        unrect_step_size = [lr * u / bc * -1 for u, bc in zip(unrectified, bias_correction1)]
        bias_correction2 = [(1 - beta2 ** s) ** 0.5 * (lr * r / bc) * -1
                            for s, r, bc in zip(values, rect, bias_correction1)]
        buffer = ops._foreach_sqrt.default(v)
        ops._foreach_add_.Scalar(buffer, eps)
        ops._foreach_div_.ScalarList(buffer, bias_correction2)
        fe.reciprocal_(buffer)
        fe.add_scalar_list_(buffer, unrect_step_size)
        ops._foreach_addcmul_.Scalar(p, m, buffer, 1)
