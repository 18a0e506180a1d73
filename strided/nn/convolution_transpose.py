"""Transposed convolution of ``strided.nn.functional``: conv_transpose1d and conv_transpose2d, composed
of existing operators.

Note [Transposed convolution as col2im]
A transposed convolution is the adjoint of a convolution: where ``conv2d`` gathers each output from
a window of the input (im2col, Note [Convolution as a GEMM]), ``conv_transpose2d`` spreads each
input position over a window of the output. One broadcast ``matmul`` of the transposed weight
(groups, C_out/groups * KH * KW, C_in/groups) with the input's (N, groups, C_in/groups, H * W)
gives every window's contribution; col2im then adds the KH * KW planes of them into the output,
plane (a, b) at rows ``a * dilation + i * stride``: KH * KW in-place adds into strided views, none
of which overlaps itself, so each add is an ordinary elementwise op and autograd differentiates
it. The padded border is cut off last; ``output_padding`` extends the bottom and right edges.
``_col2im`` does those adds for any number of spatial dims; ``fold`` and ``conv_transpose3d`` share it.

conv_transpose1d / 2d hand the windows to the ``col2im`` op instead (one CUDA kernel each way, im2col its
gradient) whenever ``output_padding`` is below the stride: then the op's sliding blocks over the (cut) output,
``(oh + 2 * padding - dilation * (K - 1) - 1) // stride + 1``, are exactly the input's H x W positions, and
its padding argument is the cut. An output padding at or above the stride (allowed below the dilation) would
add blocks the input lacks, so those calls keep the strided adds.
"""

from __future__ import annotations

from .. import dtypes as dt
from ..dispatch.argument_checks import check_args
from ..ops import bound as ops
from ..tensor import Tensor
from .channels_last import keeps_channels_last
from .convolution import _check_tensors, _first, _one, _pair, autocast_operands, check_conv_dtypes

__all__ = ["conv_transpose1d", "conv_transpose2d"]


def _col2im(out: Tensor, cols: Tensor, blocks, stride, dilation) -> None:
    """Add the (N, C, *kernel, *blocks) window values ``cols`` into the uncut (N, C, *spatial) ``out`` in place
    (Note [Transposed convolution as col2im]): kernel offset (a, b, ...) lands on the positions
    ``a * dilation + i * stride``, one strided add per offset, any number of spatial dims (fold, 1-3d)."""
    _spread(out, cols, 0, blocks, stride, dilation)


def _spread(view: Tensor, plane: Tensor, dim: int, blocks, stride, dilation) -> None:
    """``_col2im`` from spatial dim ``dim`` on (a module-level recursion: a recursive closure is a reference cycle
    left to the garbage collector on every call)."""
    for a in range(plane.shape[2]):
        start = a * dilation[dim]
        part = ops.slice(view, 2 + dim, start, start + (blocks[dim] - 1) * stride[dim] + 1, stride[dim])
        if dim == len(blocks) - 1:
            part.add_(ops.select(plane, 2, a))
        else:
            _spread(part, ops.select(plane, 2, a), dim + 1, blocks, stride, dilation)


@keeps_channels_last(weight=True, rank=4)
def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """2-d transposed convolution of (N, C_in, H, W) or (C_in, H, W) ``input`` with
    (C_in, C_out/groups, KH, KW) ``weight`` (Note [Transposed convolution as col2im]): the ``convolution`` op
    (one autograd node, ``ConvolutionBackward0``, as torch's)."""
    _check_tensors("conv_transpose2d", input=input, weight=weight, bias=bias)
    if input.dim() not in (3, 4):
        raise RuntimeError("Expected 3D (unbatched) or 4D (batched) input to conv_transpose2d, but got input of "
                           f"size: {list(input.shape)}")
    if weight.dim() != 4:
        raise RuntimeError("conv_transpose2d: expected a 4-D weight (in_channels, out_channels/groups, kH, kW), "
                           f"got weight of size {list(weight.shape)}")
    input, weight, bias = autocast_operands(input, weight, bias)
    check_conv_dtypes(input, weight, bias)
    batched = input.dim() == 4
    x = input if batched else ops.unsqueeze(input, 0)
    op = "conv_transpose2d"
    s, p = _pair(stride, "stride", op), _pair(padding, "padding", op)
    d, q = _pair(dilation, "dilation", op), _pair(output_padding, "output_padding", op)
    out = ops.convolution(x, weight, bias, list(s), list(p), list(d), True, list(q), groups)
    return out if batched else ops.squeeze(out, [0])


def check_conv_transpose2d(x: Tensor, weight: Tensor, bias: Tensor | None, s: tuple, p: tuple, d: tuple, q: tuple,
                           groups, shown: tuple | None = None) -> tuple[int, int]:
    """torch's checks of a batched 2-d transposed convolution's arguments; its (OH, OW). ``shown``: the (input,
    weight) shapes its messages name, a 1-d convolution's own rather than the height-one 2-d ones."""
    n, c, h, w = x.shape
    ic, ocg, kh, kw = weight.shape
    x_shape, w_shape = shown or (list(x.shape), list(weight.shape))
    if not isinstance(groups, int) or isinstance(groups, bool) or groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if ic % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                           f"but got weight of size [{list(weight.shape)}] instead")
    if c != ic:
        raise RuntimeError(f"Given transposed=1, weight of size {w_shape}, expected input{x_shape} "
                           f"to have {ic} channels, but got {c} channels instead")
    oc = ocg * groups
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != oc):
        raise RuntimeError(f"Given transposed=1, weight of size {w_shape}, expected bias to be "
                           f"1-dimensional with {oc} elements, but got bias of size {list(bias.shape)} instead")
    if min(s) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(p) < 0:
        raise RuntimeError("negative padding is not supported")
    if min(d) <= 0:
        raise RuntimeError("dilation should be greater than zero")
    if min(q) < 0:
        raise RuntimeError("negative output_padding is not supported")
    if kh <= 0 or kw <= 0:
        raise RuntimeError(f"conv_transpose2d: weight {list(weight.shape)} has a kernel dimension of size 0")
    if (q[0] >= s[0] and q[0] >= d[0]) or (q[1] >= s[1] and q[1] >= d[1]):
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got "
                           f"output_padding_height: {q[0]} output_padding_width: {q[1]} stride_height: {s[0]} "
                           f"stride_width: {s[1]} dilation_height: {d[0]} dilation_width: {d[1]}")
    full_h, full_w = (h - 1) * s[0] + d[0] * (kh - 1) + 1, (w - 1) * s[1] + d[1] * (kw - 1) + 1
    oh, ow = full_h - 2 * p[0] + q[0], full_w - 2 * p[1] + q[1]
    if oh <= 0 or ow <= 0:
        raise RuntimeError(f"Given input size per channel: ({h} x {w}). Calculated output size per channel: "
                           f"({oh} x {ow}). Output size is too small")
    return oh, ow


def refuse_integer_input(x: Tensor, k: int) -> None:
    """torch's CPU transposed-convolution kernels take the floating types and int64 (a 1-d one is a 2-d one there):
    another dtype is refused in their words, after the geometry checks. (A CUDA integer one stops at its GEMM, which
    has no integer kernels: ``"addmm_cuda" not implemented``.)"""
    if x.device.type == "cpu" and x.dtype.category < dt.FLOATING and x.dtype is not dt.int64:
        from ..backends.meta.pointwise import scalar_type_name

        raise NotImplementedError(f"\"slow_conv_transpose{k}d_out_cpu\" not implemented for "
                                  f"'{scalar_type_name(x.dtype)}'")


def conv_transpose2d_gemm(x: Tensor, weight: Tensor, bias: Tensor | None, s: tuple, p: tuple, d: tuple, q: tuple,
                          groups: int, shown: tuple | None = None) -> Tensor:
    """The (N, C_out, OH, OW) transposed convolution of a batched ``x`` (Note [Transposed convolution as col2im]):
    the transposed kernel of the ``convolution`` op, its arguments checked here."""
    oh, ow = check_conv_transpose2d(x, weight, bias, s, p, d, q, groups, shown)
    refuse_integer_input(x, 2)
    n, _, h, w = x.shape
    ic, ocg, kh, kw = weight.shape
    oc = ocg * groups
    # every window's contribution: (N, groups, C_out/groups * KH * KW, H * W)
    wt = ops.transpose(ops.reshape(weight, (groups, ic // groups, ocg * kh * kw)), 1, 2)
    cols = ops.matmul(wt, ops.reshape(x, (n, groups, ic // groups, h * w)))
    if q[0] < s[0] and q[1] < s[1] and cols.dtype is not dt.int64:  # the col2im op's blocks are the input's
        # positions (Note [Transposed convolution as col2im]); torch's col2im op takes no integers, its CPU
        # transposed convolution int64: that one keeps the strided adds
        out = ops.col2im(ops.reshape(cols, (n, oc * kh * kw, h * w)), (oh, ow), (kh, kw), d, p, s)
    else:
        # col2im into the uncut output, tall enough for the cut window [p, p + oh)
        full_h, full_w = (h - 1) * s[0] + d[0] * (kh - 1) + 1, (w - 1) * s[1] + d[1] * (kw - 1) + 1
        cols = ops.reshape(cols, (n, oc, kh, kw, h, w))
        out = ops.zeros((n, oc, max(full_h, p[0] + oh), max(full_w, p[1] + ow)), dtype=cols.dtype,
                        device=cols.device)
        _col2im(out, cols, (h, w), s, d)
        out = ops.slice(ops.slice(out, 2, p[0], p[0] + oh), 3, p[1], p[1] + ow)
    if bias is not None:
        out = ops.add(out, ops.reshape(bias, (1, oc, 1, 1)))
    return out


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """1-d transposed convolution of (N, C_in, L) or (C_in, L) ``input`` with (C_in, C_out/groups, K)
    ``weight``: the ``convolution`` op, checked as the 2-d one over a height of one."""
    check_args("conv_transpose1d", ("input", 1, input, "Tensor"),
               ("weight", 2, weight, "Tensor"),
               ("bias", 3, bias, "Tensor?"))
    _check_tensors("conv_transpose1d", input=input, weight=weight, bias=bias)
    if input.dim() not in (2, 3):
        raise RuntimeError("Expected 2D (unbatched) or 3D (batched) input to conv_transpose1d, but got input of "
                           f"size: {list(input.shape)}")
    if weight.dim() != 3:
        raise RuntimeError("conv_transpose1d: expected a 3-D weight (in_channels, out_channels/groups, kW), "
                           f"got weight of size {list(weight.shape)}")
    input, weight, bias = autocast_operands(input, weight, bias)
    check_conv_dtypes(input, weight, bias)
    batched = input.dim() == 3
    x = input if batched else ops.unsqueeze(input, 0)
    op = "conv_transpose2d"
    s, p = _pair(_one(stride), "stride", op), _pair((0, _first(padding)), "padding", op)
    d, q = _pair(_one(dilation), "dilation", op), _pair((0, _first(output_padding)), "output_padding", op)
    out = ops.convolution(x, weight, bias, [s[1]], [p[1]], [d[1]], True, [q[1]], groups)
    return out if batched else ops.squeeze(out, [0])
