"""Power-average pooling of ``strided.nn.functional``: lp_pool1d / 2d / 3d, torch's composition.

Note [Lp pooling through average pooling]
torch computes ``(sum over the window of x ** p) ** (1 / p)`` as the average pool of ``x ** p``
times the kernel volume, passed through ``sign(s) * relu(|s|)`` before the root. That factor is
``s`` itself in value; it is there for the gradient: where a window's sum is zero the root's
derivative is infinite, and relu's backward (a mask, not a product) turns it into zero, so such a
window passes no gradient (torch's documented behaviour) rather than NaN. ``p = inf`` is max pooling
of ``|x|`` (``-inf``: minus that of ``-|x|``). With ``ceil_mode`` the average pool divides a window
that overhangs the input by its in-bounds count, so that window's result is not a plain sum: torch's
too, and kept for parity.
"""

from __future__ import annotations

import math

from ..ops import bound as ops
from ..tensor import Tensor

__all__ = ["lp_pool1d", "lp_pool2d", "lp_pool3d"]


def _volume(kernel_size, k: int) -> int:
    if isinstance(kernel_size, int):
        return kernel_size ** k
    return math.prod(kernel_size)


def _lp_pool(input: Tensor, norm_type, kernel_size, stride, ceil_mode: bool, k: int) -> Tensor:
    from .pooling import avg_pool1d, avg_pool2d, max_pool1d, max_pool2d
    from .pooling3d import avg_pool3d, max_pool3d

    op = f"lp_pool{k}d"
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(input).__name__}")
    max_pool = (max_pool1d, max_pool2d, max_pool3d)[k - 1]
    avg_pool = (avg_pool1d, avg_pool2d, avg_pool3d)[k - 1]
    if isinstance(norm_type, (int, float)):
        if norm_type == 0:
            raise ValueError(f"norm_type must be a non-zero value, but got {norm_type}")
        if norm_type == math.inf:
            return max_pool(ops.abs(input), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -math.inf:
            return ops.neg(max_pool(ops.neg(ops.abs(input)), kernel_size, stride, 0, 1, ceil_mode))
    out = avg_pool(ops.pow(input, norm_type), kernel_size, stride, 0, ceil_mode)
    out = ops.mul(ops.mul(ops.sign(out), ops.relu(ops.abs(out))), _volume(kernel_size, k))
    return ops.pow(out, 1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    """``(sum of x ** p over each window) ** (1 / p)`` along the length (Note [Lp pooling through average
    pooling])."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    """``(sum of x ** p over each window) ** (1 / p)`` over the (H, W) plane."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    """``(sum of x ** p over each window) ** (1 / p)`` over the (D, H, W) volume."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3)
