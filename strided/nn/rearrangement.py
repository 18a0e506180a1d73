"""``pixel_shuffle``, ``pixel_unshuffle`` and ``unfold`` of ``strided.nn.functional``: rearrangements of
channels and spatial positions, composed of views (reshape, permute, the convolution's ``as_strided``
window view) and one copy."""

from __future__ import annotations

from ..ops import bound as ops
from ..tensor import Tensor
from .channels_last import keeps_channels_last
from .convolution import _check_tensors, _is_int

__all__ = ["pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle", "unfold"]


def _check_factor(op: str, input: Tensor, factor, word: str) -> int:
    _check_tensors(op, input=input)
    if input.dim() < 3:
        raise RuntimeError(f"{op} expects input to have at least 3 dimensions, but got input with {input.dim()} "
                           "dimension(s)")
    if not isinstance(factor, int) or isinstance(factor, bool) or factor <= 0:
        raise RuntimeError(f"{op} expects a positive {word}, but got {factor}")
    return factor


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r): each group of r^2 channels becomes an r x r block."""
    r = _check_factor("pixel_shuffle", input, upscale_factor, "upscale_factor")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    n = len(lead)
    x = ops.reshape(input, (*lead, c // (r * r), r, r, h, w))
    x = ops.permute(x, (*range(n), n, n + 3, n + 1, n + 4, n + 2))  # (*, C, H, r, W, r)
    return ops.reshape(ops.contiguous(x), (*lead, c // (r * r), h * r, w * r))


@keeps_channels_last(rank=4)
def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H * r, W * r) -> (*, C * r^2, H, W): the inverse of :func:`pixel_shuffle`."""
    r = _check_factor("pixel_unshuffle", input, downscale_factor, "downscale_factor")
    *lead, c, h, w = input.shape
    if h % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)={h}"
                           f" is not divisible by {r}")
    if w % r:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)={w} "
                           f"is not divisible by {r}")
    n = len(lead)
    x = ops.reshape(input, (*lead, c, h // r, r, w // r, r))
    x = ops.permute(x, (*range(n), n, n + 2, n + 4, n + 1, n + 3))  # (*, C, r, r, H, W)
    return ops.reshape(ops.contiguous(x), (*lead, c * r * r, h // r, w // r))


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """(N, C, *) with its C channels seen as (groups, C / groups) and transposed: channel g * (C / groups) + i
    moves to i * groups + g (ShuffleNet's shuffle)."""
    _check_tensors("channel_shuffle", input=input)
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes {list(input.shape)}")
    if not isinstance(groups, int) or isinstance(groups, bool) or groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    n, c, *rest = input.shape
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    x = ops.transpose(ops.reshape(input, (n, groups, c // groups, *rest)), 1, 2)
    return ops.reshape(ops.contiguous(x), (n, c, *rest))


native_channel_shuffle = channel_shuffle


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sliding blocks of (N, C, H, W) (or (C, H, W)) as columns: (N, C * KH * KW, L), the convolution's
    im2col (Note [Convolution as a GEMM])."""
    _check_tensors("unfold", input=input)
    # as torch's F.unfold: an int is both sizes, a sequence goes to im2col as it is (which wants two)
    return ops.im2col(input, *((v, v) if _is_int(v) else v for v in (kernel_size, dilation, padding, stride)))
