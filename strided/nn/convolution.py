"""Convolution of ``strided.nn.functional``: conv1d and conv2d, through the ``convolution`` op (one autograd node,
``ConvolutionBackward0``: Note [Convolution backward]), whose 1-d and 2-d kernel is here, and the window helpers
the pooling modules share (``pooling.py`` reduces the same window view).

Note [Convolution as a GEMM]
A 2-d convolution reads, for every output position, a (C/groups, KH, KW) window of the padded
input. ``as_strided`` names all windows at once as a (N, C, KH, KW, OH, OW) view of the contiguous
padded input (strides: dilation times the input's, stride times the input's), one ``reshape``
copies them into (N, groups, C/groups*KH*KW, OH*OW) columns (im2col), and one broadcast ``matmul``
with the (groups, C_out/groups, C/groups*KH*KW) weight gives every output channel. The columns are the
``im2col`` op (``F.unfold``: on CUDA one kernel reading the unpadded input, elsewhere the window view); the
gradient (``functions_conv.py``) makes them again for the weight's gradient and spreads the input's back with
``col2im`` (``F.fold``: on CUDA one kernel that gathers, per input element, the columns that hold it). A 1x1
kernel of stride 1 needs no copy: the input is its own columns. The op takes symmetric padding; ``padding="same"``
with an even kernel pads the odd row / column first, as torch. Pooling (``pooling.py``) takes the same window
view and reduces its (KH, KW) dims: a maximum over an input padded with -inf (Note [The element a max pool
chooses]) or ``sum`` over a zero-padded input divided by the window's count. 1-d forms are the 2-d ones over a
height of one. The columns cost memory for the length of one convolution, at most a budget's worth at a time (Note
[Convolution batch chunks]; torch's cuDNN needs none); the backward keeps only the input and the weight between
the passes, as torch's.
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..backends.meta.pointwise import scalar_type_name
from ..backends.meta.pooling import pooled_size as _out_size
from ..memory_formats import channels_last
from ..ops import bound as ops
from ..tensor import Tensor
from .channels_last import channels_last_format, keeps_channels_last

__all__ = ["conv1d", "conv2d"]


def _pair(v, name: str, op: str) -> tuple[int, int]:
    if _is_int(v):
        return v, v
    none_ok = name == "output_size"  # adaptive pooling's None keeps that input size
    if not isinstance(v, (list, tuple)) or not all(_is_int(e) or (none_ok and e is None) for e in v):
        raise TypeError(f"{op}(): argument '{name}' must be int or tuple of ints, not {v!r}")
    if len(v) == 1:
        return v[0], v[0]
    if len(v) != 2:
        raise RuntimeError(f"{op}: expected {name} to be a single integer value or a list of 2 values")
    return v[0], v[1]


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _check_tensors(op: str, **args) -> None:
    for name, value in args.items():
        if value is not None and not isinstance(value, Tensor):
            raise TypeError(f"{op}(): argument '{name}' must be Tensor, not {type(value).__name__}")


def autocast_operands(*tensors):
    """Under autocast, the float32 / half operands of a convolution in the autocast dtype (convolutions are on
    torch's lower-precision lists, as the GEMMs they lower to are); float64 and None pass through."""
    from ..amp.autocast_mode import get_autocast_dtype, is_autocast_enabled
    from ..amp.cast_cache import cached_cast

    dev = tensors[0].device.type
    if dev not in ("cpu", "cuda") or not is_autocast_enabled(dev):
        return tensors
    d = get_autocast_dtype(dev)  # the weight's cast comes from the region's cache (Note [Autocast cast cache])
    return tuple(t if t is None or not t.dtype.is_floating_point or t.dtype in (_dt.float64, d) else cached_cast(t, d)
                 for t in tensors)


def check_conv_dtypes(input: Tensor, weight: Tensor, bias: Tensor | None) -> None:
    """torch's dtype checks of a convolution: the bias's type first, then the weight's (their GEMM would
    otherwise promote a float input and a double weight or bias to double without a word)."""
    from ..backends.meta.pointwise import _C_TYPE_NAMES

    if bias is not None and bias.dtype is not input.dtype:
        raise RuntimeError(f"Input type ({_C_TYPE_NAMES.get(input.dtype, input.dtype.name)}) and bias type "
                           f"({_C_TYPE_NAMES.get(bias.dtype, bias.dtype.name)}) should be the same")
    if weight.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(input.dtype)} but found "
                           f"{scalar_type_name(weight.dtype)}")


def _padded(x: Tensor, ph: tuple[int, int], pw: tuple[int, int], value: float) -> Tensor:
    """``x`` (N, C, H, W) with ``ph`` rows above/below and ``pw`` columns left/right of ``value``,
    as a fresh contiguous tensor (the window view needs a storage of exactly its own)."""
    n, c, h, w = x.shape
    if not (ph[0] or ph[1] or pw[0] or pw[1]):
        return ops.clone(x, memory_format="contiguous_format") if not _own_storage(x) else x
    out = ops.full((n, c, h + ph[0] + ph[1], w + pw[0] + pw[1]), value, dtype=x.dtype, device=x.device)
    ops.narrow(ops.narrow(out, 2, ph[0], h), 3, pw[0], w).copy_(x)
    return out


def _own_storage(x: Tensor) -> bool:
    return x.is_contiguous() and x._offset == 0 and x._storage.nbytes() == x.numel() * x.dtype.itemsize


def _windows(x: Tensor, k: tuple[int, int], s: tuple[int, int], d: tuple[int, int], oh: int, ow: int) -> Tensor:
    """The (N, C, KH, KW, OH, OW) window view of contiguous ``x`` (Note [Convolution as a GEMM])."""
    sn, sc, sh, sw = x.stride()
    n, c = x.shape[0], x.shape[1]
    return ops.as_strided(x, (n, c, k[0], k[1], oh, ow), (sn, sc, sh * d[0], sw * d[1], sh * s[0], sw * s[1]), 0)


@keeps_channels_last(weight=True, rank=4)
def conv2d(
    input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1, groups: int = 1
) -> Tensor:
    """2-d convolution of (N, C_in, H, W) or (C_in, H, W) ``input`` with (C_out, C_in/groups, KH, KW)
    ``weight``; ``padding`` may also be "valid" or "same" (Note [Convolution as a GEMM]). The ``convolution``
    op computes it (its gradient recomputes the columns: Note [Convolution backward])."""
    from .convolution_forms import conv_forward

    return conv_forward("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def check_conv2d(x: Tensor, weight: Tensor, s: tuple, p: tuple, d: tuple, groups: int) -> tuple[int, int]:
    """torch's checks of a 2-d convolution of batched ``x`` (symmetric padding ``p``); its output size."""
    n, c, h, w = x.shape
    oc, cg, kh, kw = weight.shape
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if c != cg * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
            f"{list(x.shape)} to have {cg * groups} channels, but got {c} channels instead"
        )
    if oc % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
            f"but got weight of size {list(weight.shape)} instead"
        )
    if min(s) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(d) <= 0:
        raise RuntimeError("dilation should be greater than zero")
    if min(p) < 0:
        raise RuntimeError("negative padding is not supported")
    if kh <= 0 or kw <= 0:
        raise RuntimeError(f"conv2d: weight {list(weight.shape)} has a kernel dimension of size 0")
    oh = _out_size(h, kh, s[0], 2 * p[0], d[0])
    ow = _out_size(w, kw, s[1], 2 * p[1], d[1])
    if oh <= 0 or ow <= 0:
        raise RuntimeError(
            f"Calculated padded input size per channel: ({h + 2 * p[0]} x {w + 2 * p[1]}). "
            f"Kernel size: ({d[0] * (kh - 1) + 1} x {d[1] * (kw - 1) + 1}). Kernel size can't be "
            "greater than actual input size"
        )
    return oh, ow


def conv2d_gemm(x: Tensor, weight: Tensor, bias: Tensor | None, s: tuple, p: tuple, d: tuple, groups: int) -> Tensor:
    """The (N, C_out, OH, OW) convolution of a batched ``x`` with symmetric padding ``p``, as columns times the
    weight (Note [Convolution as a GEMM]): the forward kernel of the ``convolution`` op (checked arguments)."""
    n, c, h, w = x.shape
    oc, cg, kh, kw = weight.shape
    oh, ow = check_conv2d(x, weight, s, p, d, groups)
    ph, pw = (p[0], p[0]), (p[1], p[1])
    channels_last_output = channels_last_format(x, weight) == "channels_last"
    if groups == 1 and channels_last_output:
        # Note [Channels-last outputs]: columns as (N*OH*OW, C*KH*KW) rows, so the product is NHWC
        windows = _windows(_padded(x, ph, pw, 0.0), (kh, kw), s, d, oh, ow)
        cols = ops.reshape(ops.permute(windows, (0, 4, 5, 1, 2, 3)), (n * oh * ow, c * kh * kw))
        out = ops.mm(cols, ops.t(ops.reshape(weight, (oc, cg * kh * kw))))  # (N*OH*OW, OC)
        out = ops.permute(ops.reshape(out, (n, oh, ow, oc)), (0, 3, 1, 2))
    else:
        cols = ops.reshape(_columns(x, (kh, kw), s, d, ph, pw, oh, ow), (n, groups, cg * kh * kw, oh * ow))
        out = ops.matmul(ops.reshape(weight, (groups, oc // groups, cg * kh * kw)), cols)  # (N, groups, OC/g, L)
        out = ops.reshape(out, (n, oc, oh, ow))
        if channels_last_output:
            out = ops.contiguous(out, memory_format=channels_last)
    if bias is not None:
        out = ops.add(out, ops.reshape(bias, (1, oc, 1, 1)))
    return out


def _columns(x: Tensor, k: tuple, s: tuple, d: tuple, ph: tuple, pw: tuple, oh: int, ow: int) -> Tensor:
    """The (N, C * KH * KW, OH * OW) columns of (N, C, H, W) ``x`` (Note [Convolution as a GEMM]): the input itself
    for a 1x1 kernel of stride 1, the ``im2col`` op (one kernel on CUDA; its gradient is ``col2im``) for symmetric
    padding, else the window view of the padded input copied."""
    n, c = x.shape[0], x.shape[1]
    if k == (1, 1) and s == (1, 1) and ph == pw == (0, 0):
        return ops.reshape(x, (n, c, oh * ow))
    if ph[0] == ph[1] and pw[0] == pw[1] and (x.dtype.is_floating_point or x.dtype.is_complex):
        return ops.im2col(x, k, d, (ph[0], pw[0]), s)
    return ops.reshape(_windows(_padded(x, ph, pw, 0.0), k, s, d, oh, ow), (n, c * k[0] * k[1], oh * ow))


def conv1d(
    input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1, groups: int = 1
) -> Tensor:
    """1-d convolution of (N, C_in, L) or (C_in, L) ``input`` with (C_out, C_in/groups, K) ``weight``."""
    from .convolution_forms import conv_forward

    return conv_forward("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def _first(v) -> int:
    return v if isinstance(v, int) else tuple(v)[0]


def _one(v):
    """A 1-d size as the 2-d (1, size) (None stays None: pooling's default stride)."""
    return v if v is None else (1, _first(v))
