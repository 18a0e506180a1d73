"""Muon (torch.optim.Muon): momentum orthogonalized by a Newton-Schulz iteration, for 2-D parameters.

Each step, per parameter: the momentum buffer moves toward the gradient (``lerp``), the update is the Nesterov
blend (or the buffer), the quintic Newton-Schulz iteration (coefficients a, b, c; ``ns_steps`` rounds, in
bfloat16 as torch's) makes it nearly orthogonal, and the parameter takes decoupled weight decay and the update
scaled by ``adjust_lr_fn`` ("original": sqrt(max(1, A / B)); "match_rms_adamw": 0.2 sqrt(max(A, B));
"spectral_unclamped": sqrt(A / B)). As in torch there is only the for-loop implementation.
"""

from __future__ import annotations

import math

from .. import dtypes
from ..ops import bound as ops
from ..tensor import Tensor
from .optimizer import Optimizer, no_grad

__all__ = ["Muon", "muon"]

EPS = 1e-7
DEFAULT_A, DEFAULT_B, DEFAULT_C = 3.4445, -4.7750, 2.0315
DEFAULT_NS_STEPS = 5
_ADJUSTMENTS = ("original", "match_rms_adamw", "spectral_unclamped")


def _zeropower_via_newtonschulz(grad: Tensor, ns_coefficients, ns_steps: int, eps: float) -> Tensor:
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.dim() != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    tall = grad.shape[0] > grad.shape[1]
    x = grad.to(dtypes.bfloat16)
    if tall:
        x = x.T
    x.div_(x.norm().clamp(min=eps))  # spectral norm at most 1
    for _ in range(ns_steps):
        gram = x @ x.T
        update = ops.addmm(gram, gram, gram, beta=b, alpha=c)
        x = ops.addmm(x, update, x, beta=a)
    return x.T if tall else x


def _adjust_lr(lr: float, adjust_lr_fn: str | None, shape) -> float:
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    elif adjust_lr_fn == "spectral_unclamped":
        ratio = math.sqrt(rows / cols)
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    """torch.optim.Muon: for the 2-D weights of hidden layers (optimize biases and embeddings with AdamW)."""

    def __init__(self, params, lr: float = 1e-3, weight_decay: float = 0.1, momentum: float = 0.95,
                 nesterov: bool = True, ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps: float = EPS,
                 ns_steps: int = DEFAULT_NS_STEPS, adjust_lr_fn: str | None = None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in _ADJUSTMENTS:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.dim() != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}")

    def step(self, closure=None):
        """One Muon step over every param with a ``.grad``."""
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                if any(p.grad is not None and p.is_complex() for p in group["params"]):  # before any state is made
                    raise RuntimeError("Muon does not support complex parameters")
                params, grads, (bufs,) = self._gather(group, ("momentum_buffer",), init=_init_state)
                muon(params, grads, bufs, lr=group["lr"], weight_decay=group["weight_decay"],
                     momentum=group["momentum"], nesterov=group["nesterov"],
                     ns_coefficients=group["ns_coefficients"], eps=group["eps"], ns_steps=group["ns_steps"],
                     adjust_lr_fn=group["adjust_lr_fn"])
        return loss


def _init_state(state, p, group) -> None:
    state["momentum_buffer"] = ops.zeros_like(p.grad)


def muon(params, grads, muon_momentum_bufs, *, foreach=None, lr, weight_decay, momentum, nesterov, ns_coefficients,
         ns_steps, eps, adjust_lr_fn) -> None:
    """Functional Muon (``torch.optim._muon.muon``)."""
    if foreach:
        raise RuntimeError("Foreach is not supported for Muon yet")
    lr = float(lr.item()) if isinstance(lr, Tensor) else lr
    for param, grad, buf in zip(params, grads, muon_momentum_bufs):
        if grad.dim() != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        buf.lerp_(grad, 1 - momentum)
        update = grad.lerp(buf, momentum) if nesterov else buf
        update = _zeropower_via_newtonschulz(update, ns_coefficients, ns_steps, eps)
        param.mul_(1 - lr * weight_decay)
        param.add_(update, alpha=-_adjust_lr(lr, adjust_lr_fn, param.shape))
