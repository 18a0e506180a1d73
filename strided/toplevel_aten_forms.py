"""torch's top-level ATen forms of two nn operations whose arguments ``nn.functional`` spells otherwise:
``conv_tbc`` (a 1-d convolution over (time, batch, channel) inputs, fairseq's layout) and ``grid_sampler`` /
``grid_sampler_2d`` / ``grid_sampler_3d`` (``F.grid_sample`` with integer-coded modes). Each maps onto
``strided.nn.functional`` after torch's checks, in its words (Note [Top-level re-exports] in toplevel_functions.py).
"""

from __future__ import annotations

from .tensor import Tensor

__all__ = ["conv_tbc", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d"]

_INTERPOLATION = ("bilinear", "nearest", "bicubic")
_PADDING = ("zeros", "border", "reflection")


def _F():
    from .nn import functional

    return functional


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:  # noqa: A002
    """``input`` (time, batch, in) convolved along time with ``weight`` (kernel, in, out), plus ``bias`` (out,),
    ``pad`` zeros at each end of time (a negative pad crops, as torch's kernel does): (time', batch, out)."""
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    if weight.dtype is not input.dtype:  # torch's kernel is a GEMM per kernel tap: its words
        from .backends.meta.pointwise import scalar_type_name

        raise RuntimeError(f"self and mat2 must have the same dtype, but got {scalar_type_name(input.dtype)} and "
                           f"{scalar_type_name(weight.dtype)}")
    time, batch = input.shape[0], input.shape[1]
    length = time + 2 * pad - weight.shape[0] + 1
    if length < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {length}: [{length}, {batch}, "
                           f"{weight.shape[2]}]")
    if pad < 0:  # torch's kernel reads time steps [-pad, time + pad)
        input, pad = input[-pad:time + pad], 0
    out = _F().conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)  # (batch, out, time')
    return out.permute(2, 0, 1)


def _mode(values: tuple, code, what: str) -> str:
    if not isinstance(code, int) or isinstance(code, bool) or not 0 <= code < len(values):
        choices = ", ".join(f"{i} ({v})" for i, v in enumerate(values))
        raise RuntimeError(f"grid_sampler(): expected {what} to be one of {choices}, but got {code!r}")
    return values[code]


def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,  # noqa: A002
                 align_corners: bool) -> Tensor:
    """``F.grid_sample(input, grid, mode, padding_mode, align_corners)`` with torch's integer codes: mode 0
    bilinear, 1 nearest, 2 bicubic; padding 0 zeros, 1 border, 2 reflection (torch reads an unknown code as
    garbage; here it is refused)."""
    mode = _mode(_INTERPOLATION, interpolation_mode, "interpolation_mode")
    padding = _mode(_PADDING, padding_mode, "padding_mode")
    return _F().grid_sample(input, grid, mode, padding, align_corners)


def _grid_sampler_nd(k: int, input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                     align_corners: bool) -> Tensor:
    if input.dim() != k + 2 or grid.dim() != k + 2:
        raise RuntimeError(f"grid_sampler(): expected {k + 2}D input and grid with same number of dimensions, but got "
                           f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_2d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,  # noqa: A002
                    align_corners: bool) -> Tensor:
    """:func:`grid_sampler` of a 4-D input and grid."""
    return _grid_sampler_nd(2, input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,  # noqa: A002
                    align_corners: bool) -> Tensor:
    """:func:`grid_sampler` of a 5-D input and grid."""
    return _grid_sampler_nd(3, input, grid, interpolation_mode, padding_mode, align_corners)
