"""The foreach implementations: torch's ``_multi_tensor_adam`` and ``_multi_tensor_sgd``.

Every update is a ``_foreach_*`` op over one (device, dtype) group, so a backend with multi-tensor
kernels runs a handful of launches per group instead of one per tensor and op.
"""

from __future__ import annotations

from ..ops import bound as ops
from .optimizer import add_to_steps, group_by_device_and_dtype, step_value

__all__ = ["multi_tensor_adam", "multi_tensor_sgd"]


def multi_tensor_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, amsgrad,
                      beta1, beta2, lr, weight_decay, eps, maximize, decoupled) -> None:
    if not params:
        return
    lists = [params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs if amsgrad else [], state_steps]
    for (p, g, m, v, vmax, steps), _ in group_by_device_and_dtype(lists).values():
        if maximize:
            g = ops._foreach_neg.default(g)
        values = add_to_steps(steps, 1.0)
        if weight_decay != 0:
            if decoupled:
                ops._foreach_mul_.Scalar(p, 1 - lr * weight_decay)
            elif maximize:
                ops._foreach_add_.List(g, p, alpha=weight_decay)
            else:
                g = ops._foreach_add.List(g, p, alpha=weight_decay)
        ops._foreach_lerp_.Scalar(m, g, 1 - beta1)
        ops._foreach_mul_.Scalar(v, beta2)
        ops._foreach_addcmul_.Scalar(v, g, g, 1 - beta2)
        del g
        if values is None:  # steps on the device (torch's capturable layout)
            values = [step_value(s) for s in steps]
        step_size = [-(lr / (1 - beta1 ** s)) for s in values]
        bc2_sqrt = [(1 - beta2 ** s) ** 0.5 for s in values]
        if amsgrad:
            ops._foreach_maximum_.List(vmax, v)
            denom = ops._foreach_sqrt.default(vmax)
        else:
            denom = ops._foreach_sqrt.default(v)
        ops._foreach_div_.ScalarList(denom, bc2_sqrt)
        ops._foreach_add_.Scalar(denom, eps)
        ops._foreach_addcdiv_.ScalarList(p, m, denom, step_size)


def multi_tensor_sgd(params, grads, momentum_buffer_list, *, weight_decay, momentum, lr, dampening, nesterov,
                     maximize) -> None:
    if not params:
        return
    grouped = group_by_device_and_dtype([params, grads, momentum_buffer_list])
    for (p, g, bufs), indices in grouped.values():
        if maximize:
            g = ops._foreach_neg.default(g)
        if weight_decay != 0:
            if maximize:
                ops._foreach_add_.List(g, p, alpha=weight_decay)
            else:
                g = ops._foreach_add.List(g, p, alpha=weight_decay)
        if momentum != 0:
            if all(b is not None for b in bufs):
                ops._foreach_mul_.Scalar(bufs, momentum)
                ops._foreach_add_.List(bufs, g, alpha=1 - dampening)
            else:
                for j, i in enumerate(indices):
                    if bufs[j] is None:
                        bufs[j] = momentum_buffer_list[i] = g[j].clone().detach()
                    else:
                        bufs[j].mul_(momentum).add_(g[j], alpha=1 - dampening)
            if nesterov:
                ops._foreach_add_.List(g, bufs, alpha=momentum)
            else:
                g = bufs
        ops._foreach_add_.List(p, g, alpha=-lr)
