"""``conv3d`` of ``strided.nn.functional``: conv2d's window view and GEMM (Note [Convolution as a GEMM] in
convolution.py) with a depth dim -- an (N, C, KD, KH, KW, OD, OH, OW) ``as_strided`` view of the padded
input, reshaped to columns and multiplied by the (groups, C_out / groups, C_in / groups * KD * KH * KW)
weight. As conv2d, it is the ``convolution`` op (one autograd node, ``ConvolutionBackward0``, that keeps the
input and the weight, not the columns: Note [Convolution backward]); ``conv3d_gemm`` is the op's kernel."""

from __future__ import annotations

from ..ops import bound as ops
from ..tensor import Tensor
from .channels_last import keeps_channels_last
from .convolution import _out_size, _own_storage

__all__ = ["conv3d"]


def _padded(x: Tensor, pads, value: float = 0.0) -> Tensor:
    """``x`` (N, C, D, H, W) padded with ``value`` into a fresh contiguous tensor (the window view needs a
    storage of exactly its own)."""
    if not any(a or b for a, b in pads):
        return x if _own_storage(x) else ops.clone(x, memory_format="contiguous_format")
    n, c, *spatial = x.shape
    out = ops.full((n, c, *(size + a + b for size, (a, b) in zip(spatial, pads))), value, dtype=x.dtype,
                   device=x.device)
    view = out
    for dim, (size, (a, _)) in enumerate(zip(spatial, pads), start=2):
        view = ops.narrow(view, dim, a, size)
    view.copy_(x)
    return out


@keeps_channels_last(weight=True, rank=5)
def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """3-d convolution of (N, C_in, D, H, W) or (C_in, D, H, W) ``input`` with (C_out, C_in/groups, KD, KH, KW)
    ``weight``; ``padding`` may also be "valid" or "same"."""
    from .convolution_forms import conv_forward

    return conv_forward("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def check_conv3d(x: Tensor, weight: Tensor, s: tuple, p: tuple, d: tuple, groups: int) -> list[int]:
    """torch's checks of a batched 3-d convolution's arguments (symmetric padding ``p``); its output sizes."""
    c = x.shape[1]
    oc, cg, *kernel = weight.shape
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if c != cg * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
                           f"{list(x.shape)} to have {cg * groups} channels, but got {c} channels instead")
    if oc % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                           f"but got weight of size {list(weight.shape)} instead")
    if min(s) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(d) <= 0:
        raise RuntimeError("dilation should be greater than zero")
    if min(p) < 0:
        raise RuntimeError("negative padding is not supported")
    if min(kernel) <= 0:
        raise RuntimeError(f"conv3d: weight {list(weight.shape)} has a kernel dimension of size 0")
    spatial = x.shape[2:]
    outs = [_out_size(size, k, st, 2 * pp, dd) for size, k, st, pp, dd in zip(spatial, kernel, s, p, d)]
    if min(outs) <= 0:
        padded = " x ".join(str(size + 2 * pp) for size, pp in zip(spatial, p))
        span = " x ".join(str(dd * (k - 1) + 1) for k, dd in zip(kernel, d))
        raise RuntimeError(f"Calculated padded input size per channel: ({padded}). Kernel size: ({span}). Kernel "
                           "size can't be greater than actual input size")
    return outs


def columns3d(x: Tensor, kernel, s, d, p, outs) -> Tensor:
    """The (N, C * KD * KH * KW, OD * OH * OW) columns of (N, C, D, H, W) ``x`` with symmetric padding ``p``: the
    window view of the padded input copied (a view for a 1x1x1 kernel of stride 1 on a contiguous input)."""
    n, c = x.shape[0], x.shape[1]
    xp = _padded(x, [(v, v) for v in p])
    sn, sc, sd, sh, sw = xp.stride()
    windows = ops.as_strided(xp, (n, c, *kernel, *outs), (sn, sc, sd * d[0], sh * d[1], sw * d[2], sd * s[0],
                                                          sh * s[1], sw * s[2]), 0)
    return ops.reshape(windows, (n, c * kernel[0] * kernel[1] * kernel[2], outs[0] * outs[1] * outs[2]))


def conv3d_gemm(x: Tensor, weight: Tensor, bias: Tensor | None, s: tuple, p: tuple, d: tuple, groups: int) -> Tensor:
    """The (N, C_out, OD, OH, OW) convolution of a batched ``x`` with symmetric padding ``p``: the 3-d kernel of the
    ``convolution`` op, its arguments checked here."""
    outs = check_conv3d(x, weight, s, p, d, groups)
    n = x.shape[0]
    oc, cg, *kernel = weight.shape
    k = cg * kernel[0] * kernel[1] * kernel[2]
    cols = ops.reshape(columns3d(x, kernel, s, d, p, outs), (n, groups, k, outs[0] * outs[1] * outs[2]))
    out = ops.matmul(ops.reshape(weight, (groups, oc // groups, k)), cols)  # (N, groups, OC/g, L)
    out = ops.reshape(out, (n, oc, *outs))
    if bias is not None:
        out = ops.add(out, ops.reshape(bias, (1, oc, 1, 1, 1)))
    return out
