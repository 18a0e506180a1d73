"""``strided.backends.cuda.matmul``: the cuBLAS(Lt) precision flags (``torch.backends.cuda.matmul``).

    strided.backends.cuda.matmul.allow_tf32 = True          # fp32 GEMMs on TF32 tensor cores
    strided.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    strided.set_float32_matmul_precision("high")            # the same switch as allow_tf32

``backends/cuda/blas.py`` reads these attributes on every GEMM; importing this module imports
nothing from CUDA or nvmath.

Note [Float32 matmul precision]
As in torch (before its per-backend precision API): ``"highest"`` means allow_tf32 is False;
``"high"`` and ``"medium"`` set allow_tf32 True (cuBLASLt has no bf16x3 fp32 mode that torch
would use for "medium", so "medium" computes like "high").  Setting ``allow_tf32`` writes the
precision back: True gives ``"high"``, False ``"highest"``.  An unknown precision warns and
changes nothing, as torch 2.13 does.

Note [Full float32 scopes]
A factorization's GEMMs (the blocked triangular solves and Cholesky) must not drop to TF32 because the user
allowed it for their matmuls: their accuracy must not depend on that switch, as cuSOLVER's does not. They run
inside ``full_float32_matmuls()``, a per-thread scope that blas.py reads next to the precision flag. It used
to set the process-wide flag for the duration, so a matmul on another thread ran in full float32 too, and a
flag set on another thread meanwhile was lost at the scope's exit. The scope is one case of
``float32_matmuls(allow_tf32)``: inside it this thread's float32 GEMMs use TF32 exactly when ``allow_tf32``
says, whatever the precision flag says. Convolutions run in ``float32_matmuls(cudnn.allow_tf32)``
(Note [Convolution precision]).

Note [Reduced precision reduction]
``allow_fp16_reduced_precision_reduction`` / ``allow_bf16_…`` (default True, as torch): when
False, split-K GEMMs must reduce their partial sums in the compute type (fp32), never in the
output type; blas.py masks cuBLASLt's reduction schemes to ``NONE | COMPUTE_TYPE``.
"""

from __future__ import annotations

import sys
import threading
import types
import warnings
from contextlib import contextmanager

__all__ = ["set_float32_matmul_precision", "get_float32_matmul_precision"]  # + the three flags (properties)

_PRECISIONS = ("highest", "high", "medium")
_state = {"precision": "highest", "fp16_reduction": True, "bf16_reduction": True}


class _Float32Scope(threading.local):
    tf32 = None  # None: the precision flag decides; True / False: this thread's scope (Note [Full float32 scopes])


float32_scope = _Float32Scope()


@contextmanager
def float32_matmuls(allow_tf32: bool):
    """float32 GEMMs of this thread use TF32 inside the block exactly when ``allow_tf32`` is true, whatever the
    precision flag says (the innermost scope wins)."""
    saved = float32_scope.tf32
    float32_scope.tf32 = bool(allow_tf32)
    try:
        yield
    finally:
        float32_scope.tf32 = saved


def full_float32_matmuls():
    """float32 GEMMs of this thread run without TF32 inside the block, whatever the precision flag says."""
    return float32_matmuls(False)


def set_float32_matmul_precision(precision: str) -> None:
    """``"highest"`` (full fp32, the default), ``"high"`` or ``"medium"`` (TF32 tensor cores)."""
    if precision not in _PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "set_float32_matmul_precision call has no effect.", UserWarning, stacklevel=2)
        return
    _state["precision"] = precision


def get_float32_matmul_precision() -> str:
    """The current float32 matmul precision: ``"highest"``, ``"high"`` or ``"medium"``."""
    return _state["precision"]


def _bool(name: str, value) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return value


class _MatmulFlags(types.ModuleType):
    """The module's class: properties for the flags, unknown attributes rejected (as torch)."""

    @property
    def allow_tf32(self) -> bool:
        return _state["precision"] != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value) -> None:
        _state["precision"] = "high" if _bool("allow_tf32", value) else "highest"

    @property
    def allow_fp16_reduced_precision_reduction(self) -> bool:
        return _state["fp16_reduction"]

    @allow_fp16_reduced_precision_reduction.setter
    def allow_fp16_reduced_precision_reduction(self, value) -> None:
        _state["fp16_reduction"] = _bool("allow_fp16_reduced_precision_reduction", value)

    @property
    def allow_bf16_reduced_precision_reduction(self) -> bool:
        return _state["bf16_reduction"]

    @allow_bf16_reduced_precision_reduction.setter
    def allow_bf16_reduced_precision_reduction(self, value) -> None:
        _state["bf16_reduction"] = _bool("allow_bf16_reduced_precision_reduction", value)

    def __getattr__(self, name):
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name, value) -> None:
        if name.startswith("__") or name in type(self).__dict__ or name in self.__dict__:
            super().__setattr__(name, value)
            return
        raise AttributeError(f"Unknown attribute {name}")


sys.modules[__name__].__class__ = _MatmulFlags
