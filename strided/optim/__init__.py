"""strided.optim: SGD, Adam, AdamW (for-loop, foreach and fused) and LR schedulers, as torch.optim."""

from __future__ import annotations

from . import lr_scheduler
from .adam import Adam
from .adamw import AdamW
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "lr_scheduler"]
