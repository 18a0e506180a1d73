"""``strided.nn``: modules, parameters, initializers, losses and state-dict files (torch.nn)."""

from __future__ import annotations

from . import attention, functional, init, parallel, utils
from .module import Module
from .modules import *  # noqa: F403 - the layers, listed in modules.__all__
from .modules import __all__ as _layers
from .parallel import DataParallel
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter
from .serialization import load, save

__all__ = ["Module", "Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "attention", "functional",
           "init", "parallel", "utils", "save", "load", "DataParallel", *_layers]
