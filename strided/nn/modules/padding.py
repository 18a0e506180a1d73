"""Padding layers: ``ConstantPad``, ``ZeroPad``, ``ReflectionPad``, ``ReplicationPad`` and ``CircularPad`` in 1, 2
and 3 dims, each a fixed ``F.pad`` (strided/nn/padding.py) with torch's constructors and reprs.

An int padding is repeated for both sides of every padded dim; a sequence is used as given, (left, right,
top, bottom, front, back), as in torch.
"""

from __future__ import annotations

from collections.abc import Iterable

from ...tensor import Tensor
from ..module import Module
from ..padding import pad

__all__ = [
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
]


def _amounts(padding, n: int) -> tuple:
    """torch's ``_ntuple(n)``: a sequence passes through, anything else is repeated ``n`` times."""
    if isinstance(padding, Iterable) and not isinstance(padding, str):
        return tuple(padding)
    return (padding,) * n


class _PadNd(Module):
    """``F.pad(input, self.padding, mode)`` with the padding amounts fixed at construction."""

    mode = "constant"
    spatial_dims = 1

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _amounts(padding, 2 * self.spatial_dims)

    def forward(self, input: Tensor) -> Tensor:
        return pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with ``value``: (C, W) or (N, C, W)."""


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two dims with ``value``: (C, H, W) or (N, C, H, W)."""

    spatial_dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last three dims with ``value``: (C, D, H, W) or (N, C, D, H, W)."""

    spatial_dims = 3


class ZeroPad1d(ConstantPad1d):
    """Pad the last dim with zeros."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pad the last two dims with zeros."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    """Pad the last three dims with zeros."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    """Pad the last dim with its reflection about the edge (the edge itself not repeated)."""

    mode = "reflect"


class ReflectionPad2d(ReflectionPad1d):
    """Reflection padding of the last two dims."""

    spatial_dims = 2


class ReflectionPad3d(ReflectionPad1d):
    """Reflection padding of the last three dims."""

    spatial_dims = 3


class ReplicationPad1d(_PadNd):
    """Pad the last dim by repeating its edge values."""

    mode = "replicate"


class ReplicationPad2d(ReplicationPad1d):
    """Replication padding of the last two dims."""

    spatial_dims = 2


class ReplicationPad3d(ReplicationPad1d):
    """Replication padding of the last three dims."""

    spatial_dims = 3


class CircularPad1d(_PadNd):
    """Pad the last dim with values wrapped around from its other end; input (C, W) or (N, C, W)."""

    mode = "circular"

    def forward(self, input: Tensor) -> Tensor:
        lo = self.spatial_dims + 1
        if input.dim() not in (lo, lo + 1):  # torch's modules check this before F.pad does
            raise ValueError(f"expected {lo}D or {lo + 1}D input (got {input.dim()}D input)")
        return pad(input, self.padding, "circular")


class CircularPad2d(CircularPad1d):
    """Circular padding of the last two dims; input (C, H, W) or (N, C, H, W)."""

    spatial_dims = 2


class CircularPad3d(CircularPad1d):
    """Circular padding of the last three dims; input (C, D, H, W) or (N, C, D, H, W)."""

    spatial_dims = 3
