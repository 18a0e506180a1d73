"""``fold`` of ``strided.nn.functional`` (torch's col2im): the inverse arrangement of ``unfold``, columns of
sliding blocks summed back into an image.

Note [Fold as col2im]
``fold`` is the col2im half of a transposed convolution (Note [Transposed convolution as col2im]) with no
GEMM before it: the (N, C * KH * KW, L) input is reshaped to (N, C, KH, KW, LH, LW) windows, where
(LH, LW) is the block grid that ``output_size`` gives, and ``_col2im`` adds each of its KH * KW planes
into a strided view of the zero, padded (N, C, H + 2 * PH, W + 2 * PW) output; the padded border is cut
off last. Overlapping windows sum, so ``fold(unfold(x))`` is ``x`` times the number of blocks that cover
each position. Every step is an existing differentiable op, so the gradient is unfold of the upstream
gradient without a formula of its own.
"""

from __future__ import annotations

from ..backends.meta.pointwise import not_implemented
from ..ops import bound as ops
from ..tensor import Tensor
from .convolution import _check_tensors, _is_int
from .convolution_transpose import _col2im

__all__ = ["fold"]


def _pair(v, name: str) -> tuple[int, int]:
    """An int or a sequence of two ints, as torch's ``fold`` (which passes a 1-sequence through unexpanded)."""
    if _is_int(v):
        return v, v
    if not isinstance(v, (list, tuple)):
        raise TypeError(f"fold(): argument '{name}' must be tuple of ints, not {type(v).__name__}")
    for i, e in enumerate(v):
        if not _is_int(e):
            raise TypeError(f"fold(): argument '{name}' must be tuple of ints, but found element of type "
                            f"{type(e).__name__} at pos {i}")
    if len(v) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(v)}")
    return v[0], v[1]


def _blocks(size: int, k: int, d: int, p: int, s: int) -> int:
    return (size + 2 * p - d * (k - 1) - 1) // s + 1  # floor division, as torch's div_rtn


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sum the columns of sliding blocks of (N, C * KH * KW, L) (or (C * KH * KW, L)) ``input`` into an
    (N, C, H, W) (or (C, H, W)) image of ``output_size`` (H, W) (Note [Fold as col2im])."""
    _check_tensors("fold", input=input)
    o, k = _pair(output_size, "output_size"), _pair(kernel_size, "kernel_size")
    d, p, s = _pair(dilation, "dilation"), _pair(padding, "padding"), _pair(stride, "stride")
    if min(k) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: {k[0]} kernel_width: "
                           f"{k[1]}")
    if min(s) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {s[0]} stride_width: {s[1]}")
    if min(d) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: {d[0]} dilation_width: "
                           f"{d[1]}")
    if min(p) < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {p[0]} pad_width: {p[1]}")
    shape = tuple(input.shape)
    if not (len(shape) == 2 and min(shape) > 0 or len(shape) == 3 and min(shape[1:]) > 0):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {list(shape)}")
    planes, length = shape[-2:]
    if planes % (k[0] * k[1]):
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={planes} and kernel_size=({k[0]}, {k[1]}).")
    lh, lw = _blocks(o[0], k[0], d[0], p[0], s[0]), _blocks(o[1], k[1], d[1], p[1], s[1])
    given = (f"Given output_size=({o[0]}, {o[1]}), kernel_size=({k[0]}, {k[1]}), dilation=({d[0]}, {d[1]}), "
             f"padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), ")
    if length != lh * lw:
        raise RuntimeError(f"{given}expected size of input's dimension 2 to match the calculated number of sliding "
                           f"blocks {lh} * {lw} = {lh * lw}, but got input.size(2)={length}.")
    if lh < 1 or lw < 1:
        raise RuntimeError(f"{given}calculated shape of the array of sliding blocks as ({lh}, {lw}), which is too "
                           "small (non-positive)")
    if min(o) < 1:
        raise RuntimeError(f"Expected output spatial size to be positive, but got: output_size=({o[0]}, {o[1]}).")
    if not (input.dtype.is_floating_point or input.dtype.name == "bool" or input.dtype.is_complex):
        raise not_implemented(f"col2im_out_{input.device.type}", input.dtype)
    batched = len(shape) == 3
    x = input if batched else ops.unsqueeze(input, 0)
    n, c = x.shape[0], planes // (k[0] * k[1])
    cols = ops.reshape(x, (n, c, k[0], k[1], lh, lw))
    out = ops.zeros((n, c, o[0] + 2 * p[0], o[1] + 2 * p[1]), dtype=x.dtype, device=x.device)
    _col2im(out, cols, (lh, lw), s, d)
    if p[0] or p[1]:  # cut the padded border off into a contiguous tensor, as torch's output
        out = ops.contiguous(ops.slice(ops.slice(out, 2, p[0], p[0] + o[0]), 3, p[1], p[1] + o[1]))
    return out if batched else ops.squeeze(out, [0])
