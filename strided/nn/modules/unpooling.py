"""Unpooling layers: ``MaxUnpool1d/2d/3d``, the partial inverses of max pooling (torch's reprs)."""

from __future__ import annotations

from ...tensor import Tensor
from .. import unpooling as U
from ..module import Module

__all__ = ["MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"]


def _ntuple(v, k: int) -> tuple:
    """torch's _single / _pair / _triple: a sequence as a tuple, anything else repeated k times."""
    return tuple(v) if isinstance(v, (list, tuple)) else (v,) * k


class _MaxUnpoolNd(Module):
    _dims = 0

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        k = self._dims
        self.kernel_size = _ntuple(kernel_size, k)
        self.stride = _ntuple(stride if stride is not None else kernel_size, k)
        self.padding = _ntuple(padding, k)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """``input`` at ``indices`` (from ``MaxPool1d``) of a zero (N, C, L_out) or (C, L_out)."""

    _dims = 1

    def forward(self, input: Tensor, indices: Tensor, output_size=None) -> Tensor:
        return U.max_unpool1d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool2d(_MaxUnpoolNd):
    """``input`` at ``indices`` (from ``MaxPool2d``) of a zero (N, C, H_out, W_out) or (C, H_out, W_out)."""

    _dims = 2

    def forward(self, input: Tensor, indices: Tensor, output_size=None) -> Tensor:
        return U.max_unpool2d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool3d(_MaxUnpoolNd):
    """``input`` at ``indices`` (from ``MaxPool3d``) of a zero (N, C, D_out, H_out, W_out) or (C, D_out, H_out,
    W_out)."""

    _dims = 3

    def forward(self, input: Tensor, indices: Tensor, output_size=None) -> Tensor:
        return U.max_unpool3d(input, indices, self.kernel_size, self.stride, self.padding, output_size)
