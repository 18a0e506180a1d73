"""strided.optim: SGD, Adam, AdamW (for-loop, foreach and fused), RMSprop, Adagrad, Adamax, NAdam, RAdam,
Adadelta, ASGD, Rprop, Adafactor (for-loop and foreach), LBFGS, Muon, LR schedulers and ``swa_utils`` (weight
averaging: SWA and EMA), as torch.optim."""

from __future__ import annotations

from . import lr_scheduler, swa_utils
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "NAdam", "RAdam", "Adadelta",
           "ASGD", "Rprop", "Adafactor", "LBFGS", "Muon", "lr_scheduler", "swa_utils"]
