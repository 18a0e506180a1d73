"""The layers of ``strided.nn``: each module's ``__all__``, gathered."""

from __future__ import annotations

from . import (
    activation,
    adaptive,
    attention,
    batchnorm,
    container,
    conv,
    distance,
    dropout,
    flatten,
    instancenorm,
    lazy,
    linear,
    loss,
    margin_loss,
    normalization,
    padding,
    parameter_containers,
    pooling,
    rearrangement,
    rnn,
    sparse,
    transformer,
    unpooling,
    upsampling,
)
from .activation import *  # noqa: F403
from .adaptive import *  # noqa: F403
from .attention import *  # noqa: F403
from .batchnorm import *  # noqa: F403
from .container import *  # noqa: F403
from .conv import *  # noqa: F403
from .distance import *  # noqa: F403
from .dropout import *  # noqa: F403
from .flatten import *  # noqa: F403
from .instancenorm import *  # noqa: F403
from .lazy import *  # noqa: F403
from .linear import *  # noqa: F403
from .loss import *  # noqa: F403
from .margin_loss import *  # noqa: F403
from .normalization import *  # noqa: F403
from .padding import *  # noqa: F403
from .parameter_containers import *  # noqa: F403
from .pooling import *  # noqa: F403
from .rearrangement import *  # noqa: F403
from .rnn import *  # noqa: F403
from .sparse import *  # noqa: F403
from .transformer import *  # noqa: F403
from .unpooling import *  # noqa: F403
from .upsampling import *  # noqa: F403

_MODULES = (activation, adaptive, attention, batchnorm, container, conv, distance, dropout, flatten, instancenorm, lazy,
            linear, loss, margin_loss, normalization, padding, parameter_containers, pooling, rearrangement, rnn,
            sparse, transformer, unpooling, upsampling)
__all__ = [name for module in _MODULES for name in module.__all__]
