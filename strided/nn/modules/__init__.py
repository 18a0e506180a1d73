"""The layers of ``strided.nn``."""

from __future__ import annotations

from .activation import GELU, ReLU, SiLU, Softmax, Tanh
from .attention import CausalSelfAttention
from .container import ModuleDict, ModuleList, Sequential
from .dropout import Dropout
from .linear import Identity, Linear
from .loss import CrossEntropyLoss, MSELoss
from .normalization import LayerNorm
from .sparse import Embedding

__all__ = [
    "GELU", "ReLU", "SiLU", "Softmax", "Tanh", "CausalSelfAttention", "ModuleDict", "ModuleList", "Sequential",
    "Dropout", "Identity", "Linear", "LayerNorm", "Embedding", "CrossEntropyLoss", "MSELoss",
]
