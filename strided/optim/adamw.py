"""AdamW: Adam with decoupled weight decay (torch.optim.AdamW)."""

from __future__ import annotations

from .adam import Adam, adam

__all__ = ["AdamW", "adamw"]


class AdamW(Adam):
    """torch.optim.AdamW (``weight_decay`` defaults to 1e-2 and is decoupled)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)


def adamw(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, **kwargs) -> None:
    """Functional AdamW (``torch.optim.adamw.adamw``)."""
    adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, decoupled=True, **kwargs)
