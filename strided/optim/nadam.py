"""NAdam (Adam with Nesterov momentum, optional decoupled weight decay): for-loop and foreach, as torch."""

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

__all__ = ["NAdam", "nadam"]


# Note [NAdam's mu_product]
# torch keeps the running product of the momentum coefficients as a 0-dim tensor of the scalar dtype
# (float32 unless float64 is the default) and multiplies it in place, so the product is rounded to
# float32 every step; the step sizes then read it back as a Python float. strided keeps the same
# tensor and does the same in-place multiply, so the step sizes agree with torch's to the last bit.


def _fresh_state(state, p, group) -> None:
    """The state of a param's first step, as torch's."""
    state["step"] = tensor(0.0, dtype=fe.scalar_dtype())
    state["mu_product"] = tensor(1.0, dtype=fe.scalar_dtype())
    state["exp_avg"] = zeros_like(p)
    state["exp_avg_sq"] = zeros_like(p)


class NAdam(Optimizer):
    """torch.optim.NAdam (``capturable`` and ``differentiable``: defaults only, Note [Capturable steps])."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        check_hyperparameters(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay, momentum_decay=momentum_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach)
        defaults.update(host_step_flags("NAdam", capturable=capturable, differentiable=differentiable))
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One NAdam step over every param with a ``.grad``."""
        self._cuda_graph_capture_health_check()
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                params, grads, (exp_avgs, exp_avg_sqs, mu_products, steps,) = self._gather(
                    group, ("exp_avg", "exp_avg_sq", "mu_product", "step"), _fresh_state)
                beta1, beta2 = group["betas"]
                nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, steps, foreach=group["foreach"],
                      maximize=group["maximize"], beta1=beta1, beta2=beta2, lr=group["lr"],
                      weight_decay=group["weight_decay"], momentum_decay=group["momentum_decay"], eps=group["eps"],
                      decoupled_weight_decay=group["decoupled_weight_decay"])
        return loss


def nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, decoupled_weight_decay=False,
          foreach=None, maximize=False, *, beta1, beta2, lr, weight_decay, momentum_decay, eps) -> None:
    """Functional NAdam (``torch.optim.nadam.nadam``)."""
    if foreach is None:
        _, foreach = default_to_fused_or_foreach(params)
    fn = _multi_tensor_nadam if foreach else _single_tensor_nadam
    fn(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, beta1=beta1, beta2=beta2, lr=lr,
       weight_decay=weight_decay, momentum_decay=momentum_decay, eps=eps,
       decoupled_weight_decay=decoupled_weight_decay, maximize=maximize)


def _mu(beta1, momentum_decay, step):
    return beta1 * (1.0 - 0.5 * 0.96 ** (step * momentum_decay))


def _single_tensor_nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, *, beta1, beta2, lr,
                         weight_decay, momentum_decay, eps, decoupled_weight_decay, maximize) -> None:
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_avg_sq, mu_product = exp_avgs[i], exp_avg_sqs[i], mu_products[i]
        (step,) = fe.bump_steps([state_steps[i]])
        bias_correction2 = 1 - beta2 ** step
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        mu = _mu(beta1, momentum_decay, step)
        mu_next = _mu(beta1, momentum_decay, step + 1)
        mu_product.mul_(mu)  # Note [NAdam's mu_product]
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = exp_avg_sq.div(bias_correction2).sqrt()
        product = float(mu_product.item())
        mu_product_next = product * mu_next
        denom.add_(eps)
        param.addcdiv_(grad, denom, value=-lr * (1.0 - mu) / (1.0 - product))
        param.addcdiv_(exp_avg, denom, value=-lr * mu_next / (1.0 - mu_product_next))


def _multi_tensor_nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, *, beta1, beta2, lr,
                        weight_decay, momentum_decay, eps, decoupled_weight_decay, maximize) -> None:
    if not params:
        return
    lists = [params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps]
    for (p, g, m, v, mu_prods, steps), _ in group_by_device_and_dtype(lists).values():
        if maximize:
            g = ops._foreach_neg.default(g)
        values = fe.bump_steps(steps)
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
        exp_avg_sq_sqrt = ops._foreach_sqrt.default(v)
        bias_correction_sqrt = [(1 - beta2 ** s) ** 0.5 for s in values]
        mus = [_mu(beta1, momentum_decay, s) for s in values]
        mu_nexts = [_mu(beta1, momentum_decay, s + 1) for s in values]
        fe.mul_scalar_list_(mu_prods, mus)  # Note [NAdam's mu_product]
        ops._foreach_div_.ScalarList(exp_avg_sq_sqrt, bias_correction_sqrt)
        ops._foreach_add_.Scalar(exp_avg_sq_sqrt, eps)
        products = [float(mp.item()) for mp in mu_prods]
        step_size_grads = [lr * (1.0 - mu) / (1.0 - mp) * -1 for mp, mu in zip(products, mus)]
        step_size_expavg = [lr * mn / (1.0 - mp * mn) * -1 for mp, mn in zip(products, mu_nexts)]
        ops._foreach_addcdiv_.ScalarList(p, g, exp_avg_sq_sqrt, step_size_grads)
        ops._foreach_addcdiv_.ScalarList(p, m, exp_avg_sq_sqrt, step_size_expavg)
