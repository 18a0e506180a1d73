"""Convolution and pooling of ``strided.nn.functional``, composed of existing operators: conv1d,
conv2d, max_pool1d / max_pool2d, avg_pool1d / avg_pool2d (adaptive pooling, re-exported here, is in
``adaptive_pooling``).

Note [Convolution as a GEMM]
A 2-d convolution reads, for every output position, a (C/groups, KH, KW) window of the padded
input. ``as_strided`` names all windows at once as a (N, C, KH, KW, OH, OW) view of the contiguous
padded input (strides: dilation times the input's, stride times the input's), one ``reshape``
copies them into (N, groups, C/groups*KH*KW, OH*OW) columns (im2col), and one broadcast ``matmul``
with the (groups, C_out/groups, C/groups*KH*KW) weight gives every output channel. Autograd
differentiates ``as_strided`` by scatter-adding into the input (overlapping windows add up), so
gradients need no new formula. Pooling takes the same window view and reduces its (KH, KW) dims:
``amax`` (padding with -inf) or ``sum`` over a zero-padded input divided by the window's count.
1-d forms are the 2-d ones over a height of one. This trades memory (the column copy) for
simplicity; torch calls cuDNN / its own kernels.
"""

from __future__ import annotations

import math

from .. import dtypes as _dt
from ..backends.meta.pointwise import not_implemented, scalar_type_name
from ..ops import bound as ops
from ..tensor import Tensor
from .channels_last import channels_last_format, keeps_channels_last

__all__ = [
    "conv1d",
    "conv2d",
    "max_pool1d",
    "max_pool2d",
    "avg_pool1d",
    "avg_pool2d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
]


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

    dev = tensors[0].device.type
    if dev not in ("cpu", "cuda") or not is_autocast_enabled(dev):
        return tensors
    d = get_autocast_dtype(dev)
    return tuple(t if t is None or not t.dtype.is_floating_point or t.dtype in (_dt.float64, d) else t.to(d)
                 for t in tensors)


def check_conv_dtypes(input: Tensor, weight: Tensor, bias: Tensor | None) -> None:
    """torch's dtype checks of a convolution: the bias's type first, then the weight's (their GEMM would
    otherwise promote a float input and a double weight or bias to double without a word)."""
    from ..backends.meta.pointwise import _C_TYPE_NAMES, scalar_type_name

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


def _out_size(size: int, k: int, s: int, p_total: int, d: int, ceil_mode: bool = False, p_front: int = 0) -> int:
    span = size + p_total - d * (k - 1) - 1
    if ceil_mode:
        out = -(-span // s) + 1
        if (out - 1) * s >= size + p_front:  # the last window must start inside the input or its left padding
            out -= 1
        return out
    return span // s + 1


@keeps_channels_last(weight=True, rank=4)
def conv2d(
    input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1, groups: int = 1
) -> Tensor:
    """2-d convolution of (N, C_in, H, W) or (C_in, H, W) ``input`` with (C_out, C_in/groups, KH, KW)
    ``weight``; ``padding`` may also be "valid" or "same" (Note [Convolution as a GEMM])."""
    _check_tensors("conv2d", input=input, weight=weight, bias=bias)
    batched = input.dim() == 4
    if input.dim() not in (3, 4):
        raise RuntimeError(
            f"Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: {list(input.shape)}"
        )
    if weight.dim() != 4:
        raise RuntimeError(f"weight should have at least three dimensions, got {weight.dim()}")
    input, weight, bias = autocast_operands(input, weight, bias)
    check_conv_dtypes(input, weight, bias)
    x = input if batched else ops.unsqueeze(input, 0)
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
    s, d = _pair(stride, "stride", "conv2d"), _pair(dilation, "dilation", "conv2d")
    if min(s) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(d) <= 0:
        raise RuntimeError("dilation should be greater than zero")
    if kh <= 0 or kw <= 0:
        raise RuntimeError(f"conv2d: weight {list(weight.shape)} has a kernel dimension of size 0")
    if isinstance(padding, str):
        if padding not in ("valid", "same"):
            raise ValueError(f"Invalid padding string '{padding}', should be one of ('valid', 'same')")
        if padding == "same" and max(s) != 1:  # RuntimeError here; nn.Conv2d's constructor raises ValueError
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        pads = [(0, 0), (0, 0)]
        if padding == "same":  # torch pads the extra element of an even total on the right / bottom
            for i, (kk, dd) in enumerate(((kh, d[0]), (kw, d[1]))):
                total = dd * (kk - 1)
                pads[i] = (total // 2, total - total // 2)
        ph, pw = pads
    else:
        p = _pair(padding, "padding", "conv2d")
        if min(p) < 0:
            raise RuntimeError("negative padding is not supported")
        ph, pw = (p[0], p[0]), (p[1], p[1])
    oh = _out_size(h, kh, s[0], ph[0] + ph[1], d[0])
    ow = _out_size(w, kw, s[1], pw[0] + pw[1], d[1])
    if oh <= 0 or ow <= 0:
        raise RuntimeError(
            f"Calculated padded input size per channel: ({h + ph[0] + ph[1]} x {w + pw[0] + pw[1]}). "
            f"Kernel size: ({d[0] * (kh - 1) + 1} x {d[1] * (kw - 1) + 1}). Kernel size can't be "
            "greater than actual input size"
        )
    xp = _padded(x, ph, pw, 0.0)
    windows = _windows(xp, (kh, kw), s, d, oh, ow)
    if groups == 1 and batched and channels_last_format(x, weight) == "channels_last":
        # Note [Channels-last outputs]: columns as (N*OH*OW, C*KH*KW) rows, so the product is NHWC
        cols = ops.reshape(ops.permute(windows, (0, 4, 5, 1, 2, 3)), (n * oh * ow, c * kh * kw))
        out = ops.mm(cols, ops.t(ops.reshape(weight, (oc, cg * kh * kw))))  # (N*OH*OW, OC)
        out = ops.permute(ops.reshape(out, (n, oh, ow, oc)), (0, 3, 1, 2))
    else:
        cols = ops.reshape(windows, (n, groups, cg * kh * kw, oh * ow))
        out = ops.matmul(ops.reshape(weight, (groups, oc // groups, cg * kh * kw)), cols)  # (N, groups, OC/g, L)
        out = ops.reshape(out, (n, oc, oh, ow))
    if bias is not None:
        out = ops.add(out, ops.reshape(bias, (1, oc, 1, 1)))
    return out if batched else ops.squeeze(out, [0])


def conv1d(
    input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1, groups: int = 1
) -> Tensor:
    """1-d convolution of (N, C_in, L) or (C_in, L) ``input`` with (C_out, C_in/groups, K) ``weight``."""
    _check_tensors("conv1d", input=input, weight=weight, bias=bias)
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of size: {list(input.shape)}"
        )
    if weight.dim() != 3:
        raise RuntimeError(f"weight should have at least three dimensions, got {weight.dim()}")
    pad = padding if isinstance(padding, str) else (0, _first(padding))
    out = conv2d(ops.unsqueeze(input, -2), ops.unsqueeze(weight, -2), bias, _one(stride), pad, _one(dilation), groups)
    return ops.squeeze(out, [-2])


def _pool_setup(input: Tensor, kernel_size, stride, padding, dilation, op: str):
    _check_tensors(op, input=input)
    if input.dim() not in (3, 4):
        raise RuntimeError(f"{op}: Expected 3D or 4D (batch mode) tensor for input, but got: {list(input.shape)}")
    k = _pair(kernel_size, "kernel_size", op)
    no_stride = stride is None or (not isinstance(stride, int) and len(tuple(stride)) == 0)
    s = k if no_stride else _pair(stride, "stride", op)
    p, d = _pair(padding, "padding", op), _pair(dilation, "dilation", op)
    if min(s) == 0:
        raise RuntimeError("stride should not be zero")
    if min(k) <= 0 or min(s) < 0:
        raise RuntimeError(
            f"{op}: kernel_size and stride must be greater than zero, but got kernel_size={k}, stride={s}"
        )
    if min(d) <= 0:
        raise RuntimeError(f"{op}: dilation must be greater than zero, but got dilation={d}")
    if min(p) < 0:
        raise RuntimeError(f"{op}: pad must be non-negative, but got pad={p}")
    for i in (0, 1):
        if p[i] > k[i] // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={p[i]}, "
                f"kernel_size={k[i]} and dilation={d[i]}"
            )
    return k, s, p, d


@keeps_channels_last(rank=4)
def max_pool2d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    """Window maxima (NaN propagates); with ``return_indices`` also each maximum's flat index in its
    (H, W) input plane."""
    k, s, p, d = _pool_setup(input, kernel_size, stride, padding, dilation, "max_pool2d")
    cl = input.dim() == 4 and not input.is_contiguous() and input.is_contiguous("channels_last")
    check_max_pool_dtype(input, "max_pool2d_channels_last" if cl else "max_pool2d",
                         "max_pool2d_with_indices_out_cuda_frame")
    batched = input.dim() == 4
    x = input if batched else ops.unsqueeze(input, 0)
    n, c, h, w = x.shape
    oh = _out_size(h, k[0], s[0], 2 * p[0], d[0], ceil_mode, p[0])
    ow = _out_size(w, k[1], s[1], 2 * p[1], d[1], ceil_mode, p[1])
    if oh <= 0 or ow <= 0:
        raise RuntimeError(
            f"Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{oh}x{ow}). Output size is too small"
        )
    extra_h = max(0, (oh - 1) * s[0] + d[0] * (k[0] - 1) + 1 - (h + 2 * p[0]))
    extra_w = max(0, (ow - 1) * s[1] + d[1] * (k[1] - 1) + 1 - (w + 2 * p[1]))
    low = -math.inf if x.dtype.is_floating_point else _lowest(x.dtype)
    xp = _padded(x, (p[0], p[0] + extra_h), (p[1], p[1] + extra_w), low)
    win = ops.permute(_windows(xp, k, s, d, oh, ow), (0, 1, 4, 5, 2, 3))  # (N, C, OH, OW, KH, KW)
    flat = ops.reshape(win, (n, c, oh, ow, k[0] * k[1]))
    out = ops.amax(flat, [-1])
    if not batched:
        out = ops.squeeze(out, [0])
    if not return_indices:
        return out
    a = ops.argmax(flat, -1)  # the first maximum, as torch's kernel
    row = ops.add(ops.mul(ops.arange(0, oh, device=x.device), s[0]), -p[0])
    col = ops.add(ops.mul(ops.arange(0, ow, device=x.device), s[1]), -p[1])
    hh = ops.add(ops.reshape(row, (oh, 1)), ops.mul(ops.floor_divide(a, k[1]), d[0]))
    ww = ops.add(col, ops.mul(ops.remainder(a, k[1]), d[1]))
    idx = ops.add(ops.mul(hh, w), ww)
    return out, (idx if batched else ops.squeeze(idx, [0]))


def check_max_pool_dtype(input: Tensor, cpu: str, cuda: str) -> None:
    """torch's max pools: every real dtype but bool on the CPU, the floating dtypes on CUDA (torch 2.11); any other
    raises its AT_DISPATCH error (``cpu`` / ``cuda``: the kernel names it prints)."""
    d = input.dtype
    if input.device.type == "cuda":
        if not d.is_floating_point:
            raise not_implemented(cuda, d)
    elif d is _dt.bool or d.is_complex:
        raise not_implemented(cpu, d)


def _lowest(d):
    from ..type_info import iinfo

    return iinfo(d).min


def check_avg_pool_dtype(input: Tensor, cpu: str, cuda: str, cpu_half: bool = True) -> None:
    """torch's average pools take the floating dtypes, and int64 on the CPU (the mean truncated toward zero);
    any other dtype raises its AT_DISPATCH error (``cpu`` / ``cuda``: the kernel names it prints). ``cpu_half``:
    whether the CPU kernel takes float16 / bfloat16 (torch's 3-d one does not)."""
    d = input.dtype
    cuda_input = input.device.type == "cuda"
    if not cpu_half and not cuda_input and d in (_dt.float16, _dt.bfloat16):
        raise NotImplementedError(f'"{cpu}" not implemented for \'{scalar_type_name(d)}\'')
    if not (d.is_floating_point or (d is _dt.int64 and not cuda_input)):
        raise NotImplementedError(f'"{cuda if input.device.type == "cuda" else cpu}" not implemented for '
                                  f"'{scalar_type_name(d)}'")


def _mean(total: Tensor, divisor) -> Tensor:
    """The window sums over their counts: true division, or truncating for int64 (torch's CPU kernel)."""
    if total.dtype is _dt.int64:
        return ops.div(total, divisor, rounding_mode="trunc")
    return ops.div(total, divisor)


@keeps_channels_last(rank=4)
def avg_pool2d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """Window means over a zero-padded input; the divisor follows torch's rules for padding and ceil-mode
    overhang (``count_include_pad`` counts padding, never the overhang past it)."""
    k, s, p, _ = _pool_setup(input, kernel_size, stride, padding, 1, "avg_pool2d")
    check_avg_pool_dtype(input, "avg_pool2d", "avg_pool2d_out_cuda_frame")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    batched = input.dim() == 4
    x = input if batched else ops.unsqueeze(input, 0)
    n, c, h, w = x.shape
    oh = _out_size(h, k[0], s[0], 2 * p[0], 1, ceil_mode, p[0])
    ow = _out_size(w, k[1], s[1], 2 * p[1], 1, ceil_mode, p[1])
    extra_h = max(0, (oh - 1) * s[0] + k[0] - (h + 2 * p[0]))
    extra_w = max(0, (ow - 1) * s[1] + k[1] - (w + 2 * p[1]))
    xp = _padded(x, (p[0], p[0] + extra_h), (p[1], p[1] + extra_w), 0.0)
    total = ops.sum(_windows(xp, k, s, (1, 1), oh, ow), [2, 3])  # (N, C, OH, OW)
    if divisor_override is not None:
        out = _mean(total, divisor_override)
    else:
        out = _mean(total, _divisors(h, w, k, s, p, oh, ow, count_include_pad, x))
    return out if batched else ops.squeeze(out, [0])


def window_counts(size: int, k: int, s: int, p: int, out: int, count_include_pad: bool) -> list[int]:
    """Along one dim, the count torch's average pooling divides each window by (ATen's AvgPool: the
    window clipped to the padded input, then to the input itself unless ``count_include_pad``)."""
    counts = []
    for i in range(out):
        start = i * s - p
        end = min(start + k, size + p)
        pool = end - start
        start, end = max(start, 0), min(end, size)
        counts.append(pool if count_include_pad else end - start)
    return counts


def _divisors(h, w, k, s, p, oh, ow, count_include_pad, x) -> Tensor:
    """Per output position, the count torch divides by: the product of the two dims' window counts."""
    from ..factories import tensor

    dtype = x.dtype if x.dtype.is_floating_point or x.dtype is _dt.int64 else _dt.float32
    rows = tensor(window_counts(h, k[0], s[0], p[0], oh, count_include_pad), dtype=dtype, device=x.device)
    cols = tensor(window_counts(w, k[1], s[1], p[1], ow, count_include_pad), dtype=dtype, device=x.device)
    return ops.mul(ops.reshape(rows, (oh, 1)), cols)


def max_pool1d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    """``max_pool2d`` over a height of one."""
    if isinstance(input, Tensor) and not (input.dtype.is_floating_point or return_indices or input.device.type
                                          == "cuda"):  # torch's CPU max_pool1d_impl: floating dtypes only
        raise not_implemented("max_pool1d_impl", input.dtype)
    k, pad = _first(kernel_size), _first(padding)
    if _is_int(k) and _is_int(pad) and k > 0 and pad > k // 2:  # torch's max_pool1d words
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got padding={pad} and "
                           f"kernel_size={k}")
    r = max_pool2d(
        ops.unsqueeze(input, -2),
        _one(kernel_size),
        _one(stride),
        (0, _first(padding)),
        _one(dilation),
        ceil_mode,
        return_indices,
    )
    if return_indices:
        return ops.squeeze(r[0], [-2]), ops.squeeze(r[1], [-2])
    return ops.squeeze(r, [-2])


def avg_pool1d(
    input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True
) -> Tensor:
    """``avg_pool2d`` over a height of one."""
    out = avg_pool2d(
        ops.unsqueeze(input, -2), _one(kernel_size), _one(stride), (0, _first(padding)), ceil_mode, count_include_pad
    )
    return ops.squeeze(out, [-2])


def _first(v) -> int:
    return v if isinstance(v, int) else tuple(v)[0]


def _one(v):
    """A 1-d size as the 2-d (1, size) (None stays None: pooling's default stride)."""
    return v if v is None else (1, _first(v))


from .adaptive_pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d  # noqa: E402
