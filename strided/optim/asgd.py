"""ASGD (averaged SGD): for-loop and foreach, as torch.optim.ASGD."""

from __future__ import annotations

import numpy as np

from ..factories import ones, tensor, zeros, zeros_like
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

__all__ = ["ASGD", "asgd"]


# Note [ASGD's eta]
# torch's state holds ``eta`` (the decayed lr) and ``mu`` (the averaging weight) as 0-dim tensors of the
# scalar dtype on the param's device. The for-loop computes the next eta in Python floats and rounds it
# into the tensor; the foreach path computes it as tensor arithmetic on the float32 step:
# ``lr / (1 + lambd * lr * step) ** alpha`` with the power evaluated in double and rounded, and the
# division done as torch's ``__rtruediv__`` does it (``reciprocal() * lr``). strided reproduces both
# with NumPy scalars, so each path matches its torch counterpart bit for bit; the one exception is
# ``alpha=0.5``, where torch's pow takes its float32 sqrt kernel, which can differ from a correctly
# rounded sqrt by one ulp (a relative 6e-8 in eta).


def _fresh_state(state, p, group) -> None:
    """The state of a param's first step, as torch's."""
    state["step"] = zeros((), dtype=fe.scalar_dtype(), device=p.device)
    state["eta"] = tensor(group["lr"], dtype=fe.scalar_dtype(), device=p.device)
    state["mu"] = ones((), dtype=fe.scalar_dtype(), device=p.device)
    state["ax"] = zeros_like(p)


class ASGD(Optimizer):
    """torch.optim.ASGD (``capturable`` and ``differentiable``: defaults only, Note [Capturable steps])."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, *, differentiable=False, capturable=False):
        check_hyperparameters(lr=lr, weight_decay=weight_decay)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize)
        defaults.update(host_step_flags("ASGD", capturable=capturable, differentiable=differentiable))
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One ASGD step over every param with a ``.grad``."""
        self._cuda_graph_capture_health_check()
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                params, grads, (mus, axs, etas, steps,) = self._gather(
                    group, ("mu", "ax", "eta", "step"), _fresh_state)
                asgd(params, grads, axs, mus, etas, steps, foreach=group["foreach"], maximize=group["maximize"],
                     lambd=group["lambd"], lr=group["lr"], t0=group["t0"], alpha=group["alpha"],
                     weight_decay=group["weight_decay"])
        return loss


def asgd(params, grads, axs, mus, etas, state_steps, foreach=None, maximize=False, *, lambd, lr, t0, alpha,
         weight_decay) -> None:
    """Functional ASGD (``torch.optim.asgd.asgd``)."""
    if foreach is None:
        _, foreach = default_to_fused_or_foreach(params)
    fn = _multi_tensor_asgd if foreach else _single_tensor_asgd
    fn(params, grads, axs, mus, etas, state_steps, lambd=lambd, lr=lr, t0=t0, alpha=alpha, weight_decay=weight_decay,
       maximize=maximize)


def _single_tensor_asgd(params, grads, axs, mus, etas, state_steps, *, lambd, lr, t0, alpha, weight_decay,
                        maximize) -> None:
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        mu, ax, eta = mus[i], axs[i], etas[i]
        (step,) = fe.bump_steps([state_steps[i]])
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        eta_value = float(eta.item())
        param.mul_(1 - lambd * eta_value)
        param.add_(grad, alpha=-eta_value)
        if mu.item() != 1:
            ax.add_(param.sub(ax).mul_(mu))
        else:
            ax.copy_(param)
        eta.fill_(lr / (1 + lambd * lr * step) ** alpha)  # Note [ASGD's eta]
        mu.fill_(1 / max(1, step - t0))


def _tensor_eta(lr, lambd, alpha, step, dtype):
    """``lr / (1 + lambd * lr * step) ** alpha`` with ``step`` a 0-dim tensor of ``dtype`` (Note [ASGD's eta])."""
    npdt = dtype.numpy_dtype
    base = np.asarray(1, npdt) + np.asarray(lambd * lr, npdt) * np.asarray(step, npdt)
    power = np.asarray(np.float64(base) ** alpha, npdt)
    return float((np.asarray(1, npdt) / power) * np.asarray(lr, npdt))


def _multi_tensor_asgd(params, grads, axs, mus, etas, state_steps, *, lambd, lr, t0, alpha, weight_decay,
                       maximize) -> None:
    if not params:
        return
    lists = [params, grads, axs, mus, etas, state_steps]
    for (p, g, ax, mu, eta, steps), _ in group_by_device_and_dtype(lists).values():
        if maximize:
            g = ops._foreach_neg.default(g)
        values = fe.bump_steps(steps)
        if weight_decay != 0:
            if maximize:
                ops._foreach_add_.List(g, p, alpha=weight_decay)
                intermediate = g
            else:
                intermediate = ops._foreach_add.List(g, p, alpha=weight_decay)
            ops._foreach_add_.List(intermediate, p, alpha=lambd)
        else:
            intermediate = ops._foreach_add.List(g, p, alpha=lambd)
        fe.addcmul_list_(p, intermediate, eta, -1)
        del intermediate
        intermediate = fe.sub_list(p, ax)
        fe.addcmul_list_(ax, intermediate, mu)
        del intermediate
        for e, m, s, st in zip(eta, mu, values, steps):
            e.fill_(_tensor_eta(lr, lambd, alpha, s, st.dtype))
            m.fill_(1 / max(1, s - t0))
