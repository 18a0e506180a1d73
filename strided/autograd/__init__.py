"""``strided.autograd``: reverse-mode automatic differentiation (torch.autograd's core).

Importing it registers the Autograd kernel of every overload derivatives.yaml covers
(``strided.autograd.kernels``): the dispatcher routes calls with an input that requires grad there
while grad mode is on (Note [Dispatch order]).
"""

from __future__ import annotations

from . import anomaly_mode, grad_mode
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .backward_api import backward, grad
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    is_multithreading_enabled,
    no_grad,
    set_grad_enabled,
    set_multithreading_enabled,
)
from .gradcheck import gradcheck, gradgradcheck
from .graph import Node
from .registration import register_all as _register_all
from .variable import Variable

__all__ = ["backward", "grad", "Function", "FunctionCtx", "once_differentiable",
           "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "is_inference_mode_enabled", "gradcheck", "gradgradcheck", "Node", "grad_mode",
           "anomaly_mode",
           "detect_anomaly", "set_detect_anomaly", "Variable", "set_multithreading_enabled",
           "is_multithreading_enabled"]

_register_all()


# strided.autograd.functional and .forward_ad, as torch.autograd's
from . import forward_ad, functional  # noqa: E402, F401


def __getattr__(name: str):
    if name == "profiler":  # loaded on first use (it imports strided.profiler)
        import importlib

        return importlib.import_module(f"{__name__}.profiler")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
