"""``conv_transpose3d`` of ``strided.nn.functional``: conv_transpose2d (Note [Transposed convolution as col2im]
in convolution_transpose.py) with a depth dim -- one broadcast ``matmul`` of the transposed
(groups, C_out / groups * KD * KH * KW, C_in / groups) weight with the (N, groups, C_in / groups, D * H * W)
input gives every window's contribution, ``_col2im`` adds its KD * KH * KW planes into strided views of the
uncut output, and the padded border is cut off last. It is the ``convolution`` op (one autograd node,
``ConvolutionBackward0``: Note [Convolution backward]); ``conv_transpose3d_gemm`` is the op's kernel."""

from __future__ import annotations

from ..ops import bound as ops
from ..tensor import Tensor
from .channels_last import keeps_channels_last
from .convolution import _check_tensors, _is_int, autocast_operands, check_conv_dtypes
from .convolution_transpose import _col2im, refuse_integer_input

__all__ = ["conv_transpose3d"]

_OP = "conv_transpose3d"
_DIMS = ("depth", "height", "width")


def _triple(v, name: str) -> tuple[int, int, int]:
    """An int or a sequence of one or three ints, as torch's ``conv_transpose3d`` takes them."""
    if _is_int(v):
        return v, v, v
    if not isinstance(v, (list, tuple)):
        raise TypeError(f"{_OP}(): argument '{name}' must be tuple of ints, not {type(v).__name__}")
    for i, e in enumerate(v):
        if not _is_int(e):
            raise TypeError(f"{_OP}(): argument '{name}' failed to unpack the object at pos {i} with error \"type must "
                            f"be tuple of ints,but got {type(e).__name__}\"")
    if len(v) == 1:
        return v[0], v[0], v[0]
    if len(v) != 3:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of 3 values to match the "
                           f"convolution dimensions, but got {name}={list(v)}")
    return v[0], v[1], v[2]


def _check_args(weight: Tensor, x: Tensor, bias: Tensor | None, groups) -> None:
    """torch's checks of the weight, groups, input channels and bias of a transposed convolution."""
    if not _is_int(groups):
        raise TypeError(f"{_OP}(): argument 'groups' must be int, not {type(groups).__name__}")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    ic, ocg, *kernel = weight.shape
    if ic < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got "
                           f"weight of size {list(weight.shape)} instead")
    if ic % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                           f"but got weight of size [{list(weight.shape)}] instead")
    if x.shape[1] != ic:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected input{list(x.shape)} "
                           f"to have {ic} channels, but got {x.shape[1]} channels instead")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != ocg * groups):
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected bias to be "
                           f"1-dimensional with {ocg * groups} elements, but got bias of size {list(bias.shape)} "
                           "instead")
    if min(kernel) <= 0:
        raise RuntimeError("non-empty 5D (n_output_plane x n_input_plane x kernel_depth x kernel_height x "
                           f"kernel_width) tensor expected for weight, but got: {list(weight.shape)}")
    if min(x.shape[2:]) == 0:
        raise RuntimeError(f"Only zero batch or zero channel inputs are supported, but got input shape: "
                           f"{list(x.shape)}")


def _check_geometry(s, p, q, d) -> None:
    """torch's checks of stride, padding, output_padding and dilation."""
    if min(s) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(p) < 0:
        raise RuntimeError("negative padding is not supported")
    if min(q) < 0:
        raise RuntimeError("negative output_padding is not supported")
    if min(d) <= 0:
        raise RuntimeError("dilation should be greater than zero, but got "
                           + ", ".join(f"dilation_{n}: {v}" for n, v in zip(_DIMS, d)))
    if any(qq >= ss and qq >= dd for qq, ss, dd in zip(q, s, d)):
        raise RuntimeError("output padding must be smaller than either stride or dilation, but got "
                           + " ".join(f"{word}_{n}: {v}" for word, vals in (("output_padding", q), ("stride", s),
                                                                           ("dilation", d))
                                      for n, v in zip(_DIMS, vals)))


@keeps_channels_last(weight=True, rank=5)
def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """3-d transposed convolution of (N, C_in, D, H, W) or (C_in, D, H, W) ``input`` with
    (C_in, C_out/groups, KD, KH, KW) ``weight`` (Note [Transposed convolution as col2im])."""
    _check_tensors(_OP, input=input, weight=weight, bias=bias)
    if input.dim() not in (4, 5):
        raise RuntimeError(f"Expected 4D (unbatched) or 5D (batched) input to {_OP}, but got input of size: "
                           f"{list(input.shape)}")
    if weight.dim() != 5:
        raise RuntimeError(f"{_OP}: expected a 5-D weight (in_channels, out_channels/groups, kD, kH, kW), got weight "
                           f"of size {list(weight.shape)}")
    input, weight, bias = autocast_operands(input, weight, bias)
    check_conv_dtypes(input, weight, bias)
    s, p = _triple(stride, "stride"), _triple(padding, "padding")
    q, d = _triple(output_padding, "output_padding"), _triple(dilation, "dilation")
    batched = input.dim() == 5
    x = input if batched else ops.unsqueeze(input, 0)
    _check_args(weight, x, bias, groups)  # before the op: its argument 'groups' must be an int
    out = ops.convolution(x, weight, bias, list(s), list(p), list(d), True, list(q), groups)
    return out if batched else ops.squeeze(out, [0])


def conv_transpose3d_gemm(x: Tensor, weight: Tensor, bias: Tensor | None, s: tuple, p: tuple, d: tuple, q: tuple,
                          groups: int) -> Tensor:
    """The (N, C_out, OD, OH, OW) transposed convolution of a batched ``x``: the 3-d transposed kernel of the
    ``convolution`` op, its arguments checked here."""
    _check_args(weight, x, bias, groups)
    _check_geometry(s, p, q, d)
    n, _, *spatial = x.shape
    ic, ocg, *kernel = weight.shape
    oc = ocg * groups
    full = [(size - 1) * ss + dd * (k - 1) + 1 for size, ss, dd, k in zip(spatial, s, d, kernel)]
    outs = [f - 2 * pp + qq for f, pp, qq in zip(full, p, q)]
    if min(outs) <= 0:
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, spatial))}). Calculated output size "
                           f"per channel: ({' x '.join(map(str, outs))}). Output size is too small")
    refuse_integer_input(x, 3)
    # every window's contribution: (N, groups, C_out/groups * KD * KH * KW, D * H * W)
    wt = ops.transpose(ops.reshape(weight, (groups, ic // groups, ocg * kernel[0] * kernel[1] * kernel[2])), 1, 2)
    cols = ops.matmul(wt, ops.reshape(x, (n, groups, ic // groups, spatial[0] * spatial[1] * spatial[2])))
    cols = ops.reshape(cols, (n, oc, *kernel, *spatial))
    # col2im into the uncut output, deep enough for the cut window [p, p + out) of each dim
    out = ops.zeros((n, oc, *(max(f, pp + o) for f, pp, o in zip(full, p, outs))), dtype=cols.dtype,
                    device=cols.device)
    _col2im(out, cols, spatial, s, d)
    for dim, (pp, o) in enumerate(zip(p, outs), start=2):
        out = ops.slice(out, dim, pp, pp + o)
    if bias is not None:
        out = ops.add(out, ops.reshape(bias, (1, oc, 1, 1, 1)))
    elif any(p):
        out = ops.contiguous(out)  # a cut view of a larger buffer; torch's output is contiguous
    return out
