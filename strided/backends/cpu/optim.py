"""Fused optimizer steps on the CPU (NumPy): one pass per tensor, torch's fused formulas.

Note [Fused optimizer math]
The fused kernels compute in the params' opmath type (float32 for half types), unscale the grads
by ``grad_scale`` and write the unscaled grads back (torch does), and skip the whole step when
``found_inf`` is exactly 1 (torch's CPU and CUDA kernels test ``*found_inf == 1``; GradScaler writes 0 or 1).
The ``state_steps`` were already incremented by the caller
(``strided.optim``), as torch's ``_fused_adam`` does with ``_foreach_add_`` before the kernel.
"""

from __future__ import annotations

import math

import numpy as np

from ...dispatch.library import kernel
from ..meta import optim as meta
from .common import compute_dtype, operand, store

__all__ = []


def _skip(found_inf) -> bool:
    return found_inf is not None and float(found_inf.item()) == 1.0


def _grad(g, p_dtype, grad_scale, maximize):
    """The grad in opmath, unscaled (and written back unscaled) and negated for maximize."""
    grad = operand(g, p_dtype).astype(compute_dtype(p_dtype), copy=True)
    if grad_scale is not None:
        grad = grad / np.asarray(grad_scale.item(), dtype=grad.dtype)
        store(g, grad)
    return -grad if maximize else grad


def _param_and_grad(p, g, grad_scale, maximize, weight_decay):
    """(opmath dtype, param, grad) of one tensor of SGD / Adagrad: the grad unscaled, negated for maximize and
    with the coupled weight decay added."""
    d = p.dtype
    cd = compute_dtype(d)
    grad = _grad(g, d, grad_scale, maximize)
    param = operand(p, d).astype(cd, copy=True)
    if weight_decay != 0:
        grad = grad + cd.type(weight_decay) * param
    return cd, param, grad


def _adam(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1, beta2,
          weight_decay, eps, amsgrad, maximize, grad_scale, found_inf, decoupled):
    if _skip(found_inf):
        return
    for i, p in enumerate(self):
        d = p.dtype
        cd = compute_dtype(d)
        grad = _grad(grads[i], d, grad_scale, maximize)
        param = operand(p, d).astype(cd, copy=True)
        if weight_decay != 0:
            if decoupled:
                param = param - cd.type(lr * weight_decay) * param
            else:
                grad = grad + cd.type(weight_decay) * param
        m = operand(exp_avgs[i], d)
        v = operand(exp_avg_sqs[i], d)
        m = cd.type(beta1) * m + cd.type(1 - beta1) * grad
        v = cd.type(beta2) * v + cd.type(1 - beta2) * grad * grad
        step = float(state_steps[i].item())
        bc1 = 1 - beta1 ** step
        bc2_sqrt = math.sqrt(1 - beta2 ** step)
        if amsgrad:
            vmax = np.maximum(operand(max_exp_avg_sqs[i], d), v)
            store(max_exp_avg_sqs[i], vmax)
            denom = np.sqrt(vmax) / cd.type(bc2_sqrt) + cd.type(eps)
        else:
            denom = np.sqrt(v) / cd.type(bc2_sqrt) + cd.type(eps)
        param = param - cd.type(lr / bc1) * m / denom
        store(exp_avgs[i], m)
        store(exp_avg_sqs[i], v)
        store(p, param)


@kernel("CPU")
def _fused_adam_(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, lr, beta1, beta2,
                 weight_decay, eps, amsgrad, maximize, grad_scale=None, found_inf=None):
    meta._fused_adam_(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr=lr, beta1=beta1,
                      beta2=beta2, weight_decay=weight_decay, eps=eps, amsgrad=amsgrad, maximize=maximize,
                      grad_scale=grad_scale, found_inf=found_inf)
    _adam(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1, beta2, weight_decay,
          eps, amsgrad, maximize, grad_scale, found_inf, False)


@kernel("CPU")
def _fused_adamw_(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, lr, beta1, beta2,
                  weight_decay, eps, amsgrad, maximize, grad_scale=None, found_inf=None):
    meta._fused_adamw_(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr=lr, beta1=beta1,
                       beta2=beta2, weight_decay=weight_decay, eps=eps, amsgrad=amsgrad, maximize=maximize,
                       grad_scale=grad_scale, found_inf=found_inf)
    _adam(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1, beta2, weight_decay,
          eps, amsgrad, maximize, grad_scale, found_inf, True)


@kernel("CPU")
def _fused_sgd_(self, grads, momentum_buffer_list, *, weight_decay, momentum, lr, dampening, nesterov,
                maximize, is_first_step, grad_scale=None, found_inf=None):
    meta._fused_sgd_(self, grads, momentum_buffer_list, weight_decay=weight_decay, momentum=momentum, lr=lr,
                     dampening=dampening, nesterov=nesterov, maximize=maximize, is_first_step=is_first_step,
                     grad_scale=grad_scale, found_inf=found_inf)
    if _skip(found_inf):
        return
    for i, p in enumerate(self):
        d = p.dtype
        cd, param, grad = _param_and_grad(p, grads[i], grad_scale, maximize, weight_decay)
        if momentum != 0:
            if is_first_step:
                buf = grad
            else:
                buf = cd.type(momentum) * operand(momentum_buffer_list[i], d) + cd.type(1 - dampening) * grad
            store(momentum_buffer_list[i], buf)
            grad = grad + cd.type(momentum) * buf if nesterov else buf
        store(p, param - cd.type(lr) * grad)


@kernel("CPU")
def _fused_adagrad_(self, grads, state_sums, state_steps, *, lr, lr_decay, weight_decay, eps, maximize,
                    grad_scale=None, found_inf=None):
    """torch's CPU fused Adagrad: ``sum += g * g``, ``p -= clr * g / (sqrt(sum) + eps)`` with
    ``clr = lr / (1 + (step - 1) * lr_decay)``, in opmath (Note [Fused optimizer math])."""
    meta._fused_adagrad_(self, grads, state_sums, state_steps, lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                         eps=eps, maximize=maximize, grad_scale=grad_scale, found_inf=found_inf)
    if _skip(found_inf):
        return
    for i, p in enumerate(self):
        cd, param, grad = _param_and_grad(p, grads[i], grad_scale, maximize, weight_decay)
        clr = lr / (1 + (float(state_steps[i].item()) - 1) * lr_decay)
        total = operand(state_sums[i], p.dtype) + grad * grad
        store(state_sums[i], total)
        store(p, param - cd.type(clr) * grad / (np.sqrt(total) + cd.type(eps)))
