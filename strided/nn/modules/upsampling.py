"""``Upsample``, ``UpsamplingNearest2d``, ``UpsamplingBilinear2d``: ``F.interpolate`` as modules (torch.nn)."""

from __future__ import annotations

from ...tensor import Tensor
from .. import functional as F
from ..module import Module

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]


class Upsample(Module):
    """Resample the spatial dims to ``size`` or by ``scale_factor`` with ``mode`` (``F.interpolate``)."""

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest", align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor is not None else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        info = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return f"{info}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """``Upsample`` with ``mode='nearest'`` for 4-D inputs."""

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """``Upsample`` with ``mode='bilinear'`` and ``align_corners=True`` for 4-D inputs."""

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
