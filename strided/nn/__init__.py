"""``strided.nn``: modules, parameters, initializers, losses and state-dict files (torch.nn)."""

from __future__ import annotations

from . import functional, init, utils
from .module import Module
from .modules import (
    GELU,
    CausalSelfAttention,
    CrossEntropyLoss,
    Dropout,
    Embedding,
    Identity,
    LayerNorm,
    Linear,
    ModuleDict,
    ModuleList,
    MSELoss,
    ReLU,
    Sequential,
    SiLU,
    Softmax,
    Tanh,
)
from .parameter import Parameter
from .serialization import load, save

__all__ = [
    "Module", "Parameter", "functional", "init", "utils", "save", "load", "GELU", "CausalSelfAttention", "Dropout",
    "Embedding", "Identity", "LayerNorm", "Linear", "ModuleDict", "ModuleList", "ReLU", "Sequential", "SiLU",
    "Softmax", "Tanh", "CrossEntropyLoss", "MSELoss",
]
