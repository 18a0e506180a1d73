"""Loss reductions (torch.nn._reduction): reduction names, the legacy ``size_average``/``reduce`` flags,
and applying a reduction to an elementwise loss."""

from __future__ import annotations

import os
import sys
import warnings

from ..tensor import Tensor

__all__ = ["get_enum", "legacy_get_string", "apply_reduction"]

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def get_enum(reduction: str) -> int:
    """0, 1, 2 for "none", "mean", "sum" (torch's ``_Reduction.get_enum``)."""
    try:
        return _REDUCTIONS[reduction]
    except (KeyError, TypeError):
        raise ValueError(f"{reduction} is not a valid value for reduction") from None


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _caller_stacklevel() -> int:
    """The ``warnings.warn`` stacklevel, from ``legacy_get_string``, of the first frame outside strided: the
    user's call, however many strided frames (a loss, its autocast wrapper) sit between."""
    frame, level = sys._getframe(2), 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


def legacy_get_string(size_average, reduce, reduction: str) -> str:
    """torch's ``_Reduction.legacy_get_string``: the deprecated size_average/reduce flags, when given,
    override ``reduction`` (with torch's deprecation warning, attributed to the caller's line)."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = ("mean" if size_average else "sum") if reduce else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                  stacklevel=_caller_stacklevel())
    return ret


def apply_reduction(loss: Tensor, code: int) -> Tensor:
    """torch's ``apply_loss_reduction``: the loss itself, its mean or its sum."""
    if code == 1:
        return loss.mean()
    return loss.sum() if code == 2 else loss
