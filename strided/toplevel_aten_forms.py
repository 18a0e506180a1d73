"""torch's top-level ATen forms of nn operations whose arguments or results ``nn.functional`` spells otherwise:
``conv_tbc`` (a 1-d convolution over (time, batch, channel) inputs, fairseq's layout), ``grid_sampler`` /
``grid_sampler_2d`` / ``grid_sampler_3d`` (``F.grid_sample`` with integer-coded modes), ``native_layer_norm``
(with the mean and reciprocal standard deviation), ``native_dropout`` (with the mask), ``native_channel_shuffle``,
``affine_grid_generator`` and ``embedding_renorm_`` (F.embedding's ``max_norm`` step). Each maps onto
``strided.nn.functional`` after torch's checks, in its words (Note [Top-level re-exports] in toplevel_functions.py).
"""

from __future__ import annotations

from .dispatch.argument_checks import check_args as _args
from .tensor import Tensor

__all__ = ["conv_tbc", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d", "native_layer_norm", "native_dropout",
           "native_channel_shuffle", "affine_grid_generator", "embedding_renorm_"]

_INTERPOLATION = ("bilinear", "nearest", "bicubic")
_PADDING = ("zeros", "border", "reflection")


def _F():
    from .nn import functional

    return functional


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:  # noqa: A002
    """``input`` (time, batch, in) convolved along time with ``weight`` (kernel, in, out), plus ``bias`` (out,),
    ``pad`` zeros at each end of time (a negative pad crops, as torch's kernel does): (time', batch, out)."""
    _args("conv_tbc", ("input", 1, input, "Tensor"), ("weight", 2, weight, "Tensor"), ("bias", 3, bias, "Tensor"),
          ("pad", 4, pad, "int"))
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
    if length == 0:  # torch's output is empty (conv1d would refuse a kernel longer than the padded input)
        from .factories import empty

        return empty(0, batch, weight.shape[2], dtype=input.dtype, device=input.device)
    if pad < 0:  # torch's kernel reads time steps [-pad, time + pad)
        input, pad = input[-pad:time + pad], 0
    out = _F().conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)  # (batch, out, time')
    return out.permute(2, 0, 1).contiguous()  # torch's (time, batch, channels) layout


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
    _args("grid_sampler", ("input", 1, input, "Tensor"), ("grid", 2, grid, "Tensor"),
          ("interpolation_mode", 3, interpolation_mode, "int"), ("padding_mode", 4, padding_mode, "int"))
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


def native_layer_norm(input: Tensor, normalized_shape, weight: Tensor | None, bias: Tensor | None,  # noqa: A002
                      eps: float):
    """``(layer_norm(input), mean, rstd)``: the statistics over the normalized dims, kept as size-1 dims, in the
    input's dtype (computed in float32 for half types, and kept in float32 on CUDA, as torch's kernels), without
    gradients (torch's are not differentiable)."""
    from . import dtypes, no_grad, var_mean

    _args("native_layer_norm", ("input", 1, input, "Tensor"), ("weight", 3, weight, "Tensor?"),
          ("bias", 4, bias, "Tensor?"))
    out = _F().layer_norm(input, normalized_shape, weight, bias, eps)
    dims = list(range(input.dim() - len(normalized_shape), input.dim()))
    with no_grad():
        x = input.float() if input.dtype in (dtypes.float16, dtypes.bfloat16) else input
        var, mean = var_mean(x, dims, correction=0, keepdim=True)
        rstd = (var + eps).rsqrt()
    if input.device.type == "cuda":
        return out, mean, rstd
    return out, mean.to(input.dtype), rstd.to(input.dtype)


def native_dropout(input: Tensor, p: float, train: bool | None):  # noqa: A002
    """``(output, mask)``: training (``train`` True or None) zeroes each element with probability ``p`` and scales
    the rest by 1 / (1 - p) -- torch's draws, the same as F.dropout's -- and returns the kept elements' boolean
    mask; otherwise a copy of ``input`` and an all-True mask."""
    from . import bool as bool_
    from . import empty_like, ones_like

    _args("native_dropout", ("input", 1, input, "Tensor"))
    if train is None or train:
        keep = 1.0 - p
        mask = empty_like(input).bernoulli_(keep)
        output = input.mul(mask).mul_(0.0 if keep == 0 else 1.0 / keep)
        return output, mask.to(bool_)
    return input.clone(), ones_like(input, dtype=bool_)


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:  # noqa: A002
    """``F.channel_shuffle`` (torch's native kernel's name)."""
    _args("native_channel_shuffle", ("input", 1, input, "Tensor"), ("groups", 2, groups, "int"))
    return _F().channel_shuffle(input, groups)


def affine_grid_generator(theta: Tensor, size, align_corners: bool) -> Tensor:
    """``F.affine_grid`` in torch's ATen form: ``align_corners`` required, ``size`` 4-d or 5-d."""
    _args("affine_grid_generator", ("theta", 1, theta, "Tensor"), ("size", 2, size, "int[]"),
          ("align_corners", 3, align_corners, "bool"))
    if len(size) not in (4, 5):
        raise RuntimeError("AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.")
    return _F().affine_grid(theta, list(size), align_corners)


def embedding_renorm_(input: Tensor, indices: Tensor, max_norm: float, norm_type: float) -> Tensor:  # noqa: A002
    """Rescale in place each row of ``input`` named in ``indices`` whose ``norm_type``-norm exceeds ``max_norm`` to
    that norm (F.embedding's ``max_norm`` step, torch's ``embedding_renorm_``); returns ``input``."""
    from . import dtypes, tensor
    from .autograd.grad_mode import is_grad_enabled
    from .autograd.inplace import check_inplace
    from .backends.meta.indexing import type_string
    from .nn.functional import _embedding_renorm_

    _args("embedding_renorm_", ("input", 1, input, "Tensor"), ("indices", 2, indices, "Tensor"),
          ("max_norm", 3, max_norm, "float"), ("norm_type", 4, norm_type, "float"))
    where = " (while checking arguments for embedding_renorm_)"
    if input.dim() != 2:
        raise RuntimeError(f"Expected 2-dimensional tensor, but got {input.dim()}-dimensional tensor for argument #1 "
                           f"'self'{where}")
    if indices.dtype not in (dtypes.int64, dtypes.int32):
        raise RuntimeError(f"Expected tensor for argument #2 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {type_string(indices)} instead{where}")
    if is_grad_enabled():
        check_inplace(input)
    rows = input.shape[0]
    picked = sorted(set(indices.detach().cpu().reshape(-1).tolist()))  # torch walks them sorted, selecting each row
    bad = [i for i in picked if not -rows <= i < rows]
    if bad:
        raise IndexError(f"select(): index {bad[0]} out of range for tensor of size {list(input.shape)} at dimension 0")
    wrapped = tensor(sorted({i % rows for i in picked}), dtype=dtypes.int64, device=input.device)
    _embedding_renorm_(input, wrapped, max_norm, norm_type)
    return input
