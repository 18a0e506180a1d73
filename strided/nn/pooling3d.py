"""``max_pool3d`` and ``avg_pool3d`` of ``strided.nn.functional``: max_pool2d / avg_pool2d (pooling.py) with
a depth dim -- the windows of the padded input as one ``as_strided`` view, reduced by ``amax`` or ``sum``."""

from __future__ import annotations

import math

from .. import dtypes as _dt
from ..backends.meta.pool_checks import int_arguments, output_size, pool3d_shape_check, sizes
from ..ops import bound as ops
from ..tensor import Tensor
from .channels_last import keeps_channels_last
from .convolution import _check_tensors
from .convolution3d import _padded
from .pooling import _lowest, _mean, check_avg_pool_dtype, check_max_pool_dtype, needs_grad, window_counts, window_max

__all__ = ["max_pool3d", "avg_pool3d"]


def _setup(input: Tensor, kernel_size, stride, padding, dilation, op: str):
    """torch's argument checks of a 3-d pool (Note [Pool argument checks]) up to the output size; returns the batched
    input, whether it was, (k, s, p, d) and the output's (T, H, W)."""
    _check_tensors(op, input=input)
    int_arguments(op, kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation)
    either = "either " if op == "max_pool3d" else ""
    k = sizes(kernel_size, 3, f"{op}: kernel_size must {either}be a single int, or a tuple of three ints")
    s = sizes([] if stride is None else stride, 3, f"{op}: stride must {either}be omitted, a single int, or a tuple "
              "of three ints", omit_ok=True) or k
    p = sizes(padding, 3, f"{op}: padding must {either}be a single int, or a tuple of three ints")
    d = sizes(dilation, 3, f"{op}: dilation must be either a single int, or a tuple of three ints")
    if input.dim() not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    return input, k, s, p, d


def _geometry(input, k, s, p, d, ceil_mode, fn: str, check_input_size: bool = False):
    """The output size per dim (torch's ``pooling_output_shape``, then ``pool3d_shape_check`` naming ``fn``);
    returns the batched input, whether it was, the spatial sizes, the output sizes and each dim's padding
    (front, back: the back grows to hold the ceil-mode overhang)."""
    spatial = input.shape[-3:]
    outs = [output_size(size, kk, pp, ss, dd, ceil_mode) for size, kk, pp, ss, dd in zip(spatial, k, p, s, d)]
    pool3d_shape_check(input, k, s, p, d, outs, fn, check_input_size)
    batched = input.dim() == 5
    x = input if batched else ops.unsqueeze(input, 0)
    extra = [max(0, (o - 1) * ss + dd * (kk - 1) + 1 - (size + 2 * pp))
             for o, ss, dd, kk, size, pp in zip(outs, s, d, k, spatial, p)]
    return x, batched, spatial, outs, [(pp, pp + e) for pp, e in zip(p, extra)]


def _windows(xp: Tensor, k, s, d, outs) -> Tensor:
    """(N, C, OD, OH, OW, KD, KH, KW) window view of contiguous ``xp``."""
    sn, sc, *sp = xp.stride()
    return ops.as_strided(xp, (*xp.shape[:2], *outs, *k),
                          (sn, sc, *(a * b for a, b in zip(sp, s)), *(a * b for a, b in zip(sp, d))), 0)


@keeps_channels_last(rank=5)
def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """Window maxima (NaN propagates); with ``return_indices`` also each maximum's flat index in its
    (D, H, W) input volume."""
    input, k, s, p, d = _setup(input, kernel_size, stride, padding, dilation, "max_pool3d")
    kernel = f"max_pool3d_with_indices_out_{'cuda' if input.device.type == 'cuda' else 'cpu'}_template()"
    x, batched, (depth, h, w), outs, pads = _geometry(input, k, s, p, d, ceil_mode, kernel)
    check_max_pool_dtype(input, "max_pool3d", "max_pool3d_with_indices_out_frame")
    low = -math.inf if x.dtype.is_floating_point else _lowest(x.dtype)
    xp = _padded(x, pads, low)
    n, c = x.shape[:2]
    flat = ops.reshape(_windows(xp, k, s, d, outs), (n, c, *outs, k[0] * k[1] * k[2]))
    out, a = window_max(flat, return_indices or needs_grad(input))  # Note [The element a max pool chooses]
    if not batched:
        out = ops.squeeze(out, [0])
    if not return_indices:
        return out
    dev = x.device
    starts = [ops.add(ops.mul(ops.arange(0, o, device=dev), ss), -pp) for o, ss, pp in zip(outs, s, p)]
    zz = ops.add(ops.reshape(starts[0], (outs[0], 1, 1)), ops.mul(ops.floor_divide(a, k[1] * k[2]), d[0]))
    yy = ops.add(ops.reshape(starts[1], (outs[1], 1)), ops.mul(ops.remainder(ops.floor_divide(a, k[2]), k[1]), d[1]))
    xx = ops.add(starts[2], ops.mul(ops.remainder(a, k[2]), d[2]))
    idx = ops.add(ops.mul(ops.add(ops.mul(zz, h), yy), w), xx)
    return out, (idx if batched else ops.squeeze(idx, [0]))


def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """Window means over a zero-padded input, with torch's divisor rules (avg_pool2d's, per dim)."""
    input, k, s, p, _ = _setup(input, kernel_size, stride, padding, 1, "avg_pool3d")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    x, batched, spatial, outs, pads = _geometry(input, k, s, p, (1, 1, 1), ceil_mode, "avg_pool3d()", True)
    check_avg_pool_dtype(input, "avg_pool3d_out_frame", "avg_pool3d_out_cuda", cpu_half=False)
    total = ops.sum(_windows(_padded(x, pads), k, s, (1, 1, 1), outs), [-3, -2, -1])
    if divisor_override is not None:
        out = _mean(total, divisor_override)
    else:
        out = _mean(total, _divisors(spatial, k, s, p, outs, count_include_pad, x))
    return out if batched else ops.squeeze(out, [0])


def _divisors(spatial, k, s, p, outs, count_include_pad, x) -> Tensor:
    """Per output position, the count torch divides by: the product of each dim's window count."""
    from ..factories import tensor

    dtype = x.dtype if x.dtype.is_floating_point or x.dtype is _dt.int64 else _dt.float32
    cd, ch, cw = (tensor(window_counts(*args, count_include_pad), dtype=dtype, device=x.device)
                  for args in zip(spatial, k, s, p, outs))
    return ops.mul(ops.mul(ops.reshape(cd, (-1, 1, 1)), ops.reshape(ch, (-1, 1))), cw)


from ..amp.composed_functions import CPU_FP32 as _CPU_FP32  # noqa: E402
from ..amp.composed_functions import wrap_policies as _wrap_policies  # noqa: E402

# torch's native kernels, on its CPU float32 autocast list (Note [Autocast around composed functions])
_wrap_policies(globals(), {name: _CPU_FP32 for name in ("max_pool3d", "avg_pool3d")})
