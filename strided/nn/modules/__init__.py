"""The layers of ``strided.nn``."""

from __future__ import annotations

from .activation import (
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softmin,
    Softplus,
    Softsign,
    Tanh,
    Tanhshrink,
    Threshold,
)
from .attention import CausalSelfAttention
from .batchnorm import BatchNorm1d, BatchNorm2d
from .container import ModuleDict, ModuleList, Sequential
from .conv import Conv1d, Conv2d
from .distance import CosineSimilarity, PairwiseDistance
from .dropout import Dropout
from .flatten import Flatten, Unflatten
from .linear import Identity, Linear
from .loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MarginRankingLoss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from .normalization import GroupNorm, LayerNorm, RMSNorm
from .parameter_containers import ParameterDict, ParameterList
from .pooling import AdaptiveAvgPool1d, AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d
from .sparse import Embedding

__all__ = [
    # activations
    "GELU",
    "ReLU",
    "SiLU",
    "Softmax",
    "Tanh",
    "Sigmoid",
    "Softplus",
    "LeakyReLU",
    "ELU",
    "SELU",
    "CELU",
    "LogSigmoid",
    "Hardtanh",
    "ReLU6",
    "Hardsigmoid",
    "Hardswish",
    "Mish",
    "Softsign",
    "Tanhshrink",
    "GLU",
    "Softmin",
    "LogSoftmax",
    "Threshold",
    # containers
    "ModuleDict",
    "ModuleList",
    "Sequential",
    "ParameterList",
    "ParameterDict",
    # layers
    "CausalSelfAttention",
    "Dropout",
    "Identity",
    "Linear",
    "LayerNorm",
    "RMSNorm",
    "GroupNorm",
    "Embedding",
    "Flatten",
    "Unflatten",
    "CosineSimilarity",
    "PairwiseDistance",
    "Conv1d",
    "Conv2d",
    "MaxPool1d",
    "MaxPool2d",
    "AvgPool1d",
    "AvgPool2d",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "BatchNorm1d",
    "BatchNorm2d",
    # losses
    "CrossEntropyLoss",
    "MSELoss",
    "NLLLoss",
    "BCELoss",
    "BCEWithLogitsLoss",
    "L1Loss",
    "SmoothL1Loss",
    "HuberLoss",
    "KLDivLoss",
    "MarginRankingLoss",
]
