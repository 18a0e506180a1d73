"""``strided.nn``: modules, parameters, initializers, losses and state-dict files (torch.nn)."""

from __future__ import annotations

from . import attention, functional, init, utils
from .module import Module
from .modules import *  # noqa: F403 - the layers, listed in modules.__all__
from .modules import __all__ as _layers
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter
from .serialization import load, save

__all__ = ["Module", "Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "attention", "functional",
           "init", "utils", "save", "load", *_layers]
