"""Loss reductions (torch.nn._reduction): reduction names, the legacy ``size_average``/``reduce`` flags,
and applying a reduction to an elementwise loss."""

from __future__ import annotations

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


def legacy_get_string(size_average, reduce, reduction: str, stacklevel: int = 3) -> str:
    """torch's ``_Reduction.legacy_get_string``: the deprecated size_average/reduce flags, when given,
    override ``reduction`` (with torch's deprecation warning)."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = ("mean" if size_average else "sum") if reduce else "none"
    warnings.warn(
        f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.", stacklevel=stacklevel
    )
    return ret


def apply_reduction(loss: Tensor, code: int) -> Tensor:
    """torch's ``apply_loss_reduction``: the loss itself, its mean or its sum."""
    if code == 1:
        return loss.mean()
    return loss.sum() if code == 2 else loss
