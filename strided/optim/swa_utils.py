"""Weight averaging as torch.optim.swa_utils: ``AveragedModel`` (stochastic weight averaging, or an exponential
moving average with ``multi_avg_fn=get_ema_multi_avg_fn(decay)``), ``SWALR`` and ``update_bn``.

The averages are computed as torch's, branch for branch: with no averaging function given, CUDA params are
averaged with one ``_foreach_lerp_`` per (device, dtype) group and others one param at a time, so the
results agree with torch's bit for bit on the same device.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from copy import deepcopy

from .. import dtypes
from ..autograd.grad_mode import no_grad
from ..nn.module import Module
from ..ops import bound as ops
from .lr_scheduler import LRScheduler
from .optimizer import group_by_device_and_dtype

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn",
           "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable:
    """``fn(ema_params, params, n)``: ``ema = decay * ema + (1 - decay) * param`` over lists of params."""
    _check_decay(decay)

    def ema_update(ema_params, params, _):
        with no_grad():
            if ema_params[0].is_floating_point() or ema_params[0].is_complex():
                ops._foreach_lerp_(list(ema_params), list(params), 1 - decay)
            else:
                for e, p in zip(ema_params, params):
                    e.copy_(e * decay + p * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable:
    """``fn(averaged_params, params, n)``: the running mean over lists of params, ``n`` averaged so far."""

    def swa_update(averaged, params, num_averaged):
        with no_grad():
            n = int(num_averaged)
            if averaged[0].is_floating_point() or averaged[0].is_complex():
                ops._foreach_lerp_(list(averaged), list(params), 1 / (n + 1))
            else:
                diffs = [p - a for p, a in zip(params, averaged)]
                for a, d in zip(averaged, diffs):
                    a.add_(d, alpha=1.0 / (n + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable:
    """``fn(ema_param, param, n)`` returning ``decay * ema_param + (1 - decay) * param``."""
    _check_decay(decay)

    def ema_update(ema_param, current_param, num_averaged):
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable:
    """``fn(averaged, param, n)`` returning the running mean after one more param."""

    def swa_update(averaged_param, current_param, num_averaged):
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and buffers, with ``use_buffers``) are the average of the model's
    over the calls of :meth:`update_parameters`: the running mean by default, or what ``avg_fn(avg, param, n)``
    returns / ``multi_avg_fn(avgs, params, n)`` does in place."""

    def __init__(self, model: Module, device=None, avg_fn: Callable | None = None,
                 multi_avg_fn: Callable | None = None, use_buffers: bool = False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", ops.zeros((), dtype=dtypes.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Average ``model``'s current parameters into this copy (the first call copies them)."""
        if not isinstance(model, Module):
            raise TypeError(f"AveragedModel.update_parameters(): model must be a Module, got {type(model).__name__}")
        if self.use_buffers:
            mine = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs = itertools.chain(model.parameters(), model.buffers())
        else:
            mine, theirs = self.parameters(), model.parameters()
        averaged, current = [], []
        n = int(self.n_averaged)
        with no_grad():
            for p_avg, p_model in zip(mine, theirs):
                p_model = p_model.detach().to(p_avg.device)
                averaged.append(p_avg.detach())
                current.append(p_model)
                if n == 0:
                    p_avg.detach().copy_(p_model)
            if n > 0:
                self._average(averaged, current)
            if not self.use_buffers:
                for b_avg, b_model in zip(self.module.buffers(), model.buffers()):
                    b_avg.detach().copy_(b_model.detach().to(b_avg.device))
            self.n_averaged += 1

    def _average(self, averaged: list, current: list) -> None:
        if self.multi_avg_fn is not None or self.avg_fn is None:
            for (device, _), ((avgs, params), _) in group_by_device_and_dtype([averaged, current]).items():
                n = self.n_averaged.to(device)
                if self.multi_avg_fn is not None:
                    self.multi_avg_fn(avgs, params, n)
                elif device.type == "cuda":
                    get_swa_multi_avg_fn()(avgs, params, n)
                else:
                    fn = get_swa_avg_fn()
                    for a, p in zip(avgs, params):
                        a.copy_(fn(a, p, n))
        else:
            for a, p in zip(averaged, current):
                a.detach().copy_(self.avg_fn(a.detach(), p, self.n_averaged.to(a.device)))


def update_bn(loader: Iterable, model: Module, device=None) -> None:
    """Recompute the running statistics of ``model``'s BatchNorm layers with one pass over ``loader`` (batches
    are tensors, or lists / tuples whose first entry is the input)."""
    from ..nn.modules.batchnorm import _BatchNorm

    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's lr to ``swa_lr`` over ``anneal_epochs`` epochs ("cos" or "linear"), then hold it."""

    def __init__(self, optimizer, swa_lr, anneal_epochs: int = 10, anneal_strategy: str = "cos",
                 last_epoch: int = -1):
        if isinstance(swa_lr, (list, tuple)):
            if len(swa_lr) != len(optimizer.param_groups):
                raise ValueError(f"swa_lr must have the same length as optimizer.param_groups. swa_lr has "
                                 f"{len(swa_lr)} values, param_groups has {len(optimizer.param_groups)}.")
            swa_lrs = list(swa_lr)
        else:
            swa_lrs = [swa_lr] * len(optimizer.param_groups)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._anneal_strategy = anneal_strategy
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def anneal_func(self, t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2 if self._anneal_strategy == "cos" else t

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        return swa_lr if alpha == 1 else (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list:
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(self.optimizer.param_groups, prev_lrs)]
