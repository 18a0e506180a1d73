"""CompositeExplicitAutograd kernels of 2-d max and average pooling, for every backend without its own (CPU, Meta):
``max_pool2d_with_indices`` over the window view of Note [Convolution as a GEMM], and its backward as one
``scatter_add`` of the gradients to the chosen elements (Note [The element a max pool chooses]); ``avg_pool2d`` as
window sums over torch's divisors, and its backward as one strided add per window offset."""

from __future__ import annotations

import math

from ...backends.meta.pooling import avg_pool2d_geometry, max_pool2d_geometry
from ...dispatch.library import kernel
from ...dtypes import bfloat16, float16, float32, int64
from .. import bound as ops

__all__ = []


@kernel("CompositeExplicitAutograd")
def max_pool2d_with_indices(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """(values, indices) of 2-d max pooling; an index is the flat position in its (H, W) input plane."""
    from ...nn.convolution import _padded, _windows
    from ...nn.pooling import _lowest, first_max_or_last_nan

    g = max_pool2d_geometry(self, kernel_size, stride, padding, dilation, ceil_mode)
    (k, s, p, d), oh, ow = (g.k, g.s, g.p, g.d), g.oh, g.ow
    batched = self.dim() == 4
    x = self if batched else ops.unsqueeze(self, 0)
    n, c, h, w = x._sizes
    extra_h = max(0, (oh - 1) * s[0] + d[0] * (k[0] - 1) + 1 - (h + 2 * p[0]))
    extra_w = max(0, (ow - 1) * s[1] + d[1] * (k[1] - 1) + 1 - (w + 2 * p[1]))
    low = -math.inf if x.dtype.is_floating_point else _lowest(x.dtype)
    xp = _padded(x, (p[0], p[0] + extra_h), (p[1], p[1] + extra_w), low)
    win = ops.permute(_windows(xp, k, s, d, oh, ow), (0, 1, 4, 5, 2, 3))  # (N, C, OH, OW, KH, KW)
    flat = ops.reshape(win, (n, c, oh, ow, k[0] * k[1]))
    a = first_max_or_last_nan(flat, -1)
    out = ops.squeeze(ops.gather(flat, -1, a), [-1])
    a = ops.squeeze(a, [-1])
    row = ops.add(ops.mul(ops.arange(0, oh, device=x.device, dtype=int64), s[0]), -p[0])
    col = ops.add(ops.mul(ops.arange(0, ow, device=x.device, dtype=int64), s[1]), -p[1])
    hh = ops.add(ops.reshape(row, (oh, 1)), ops.mul(ops.floor_divide(a, k[1]), d[0]))
    ww = ops.add(col, ops.mul(ops.remainder(a, k[1]), d[1]))
    idx = ops.add(ops.mul(hh, w), ww)
    return (out, idx) if batched else (ops.squeeze(out, [0]), ops.squeeze(idx, [0]))


@kernel("CompositeExplicitAutograd")
def max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
    """The gradient of ``self``: each output's gradient added to the element its index names."""
    max_pool2d_geometry(self, kernel_size, stride, padding, dilation, ceil_mode, grad_output, indices)
    lead = self._sizes[:-2]
    plane = self._sizes[-2] * self._sizes[-1]
    flat_idx = ops.reshape(indices, (*lead, -1))
    flat_grad = ops.reshape(grad_output, (*lead, -1))
    zeros = ops.zeros((*lead, plane), dtype=self.dtype, device=self.device)
    return ops.reshape(ops.scatter_add(zeros, -1, flat_idx, flat_grad), self._sizes)


# Note [Window sums by offsets]
# A window sum reduces two strided axes of the window view, which NumPy does slowly (5.5 ms of an avg_pool2d(2)
# of (16, 64, 32, 32)); adding the KH * KW strided views that hold each window's element at one offset -- in the
# window's row-major order, as torch's loop adds them, half types in float32 and rounded once after the division --
# costs about one pass over the input.
# Windows of more than _MAX_OFFSETS elements keep the reduction (one op instead of that many).
_MAX_OFFSETS = 64


@kernel("CompositeExplicitAutograd")
def avg_pool2d(self, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Window means over a zero-padded input; the divisor follows torch's rules for padding and ceil-mode overhang
    (``count_include_pad`` counts padding, never the overhang past it)."""
    from ...nn.convolution import _padded, _windows

    g = avg_pool2d_geometry(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    batched = self.dim() == 4
    x = self if batched else ops.unsqueeze(self, 0)
    xp = _padded(x, *_pads(x, g), 0.0)
    (kh, kw), (sh, sw) = g.k, g.s
    if kh * kw <= _MAX_OFFSETS:  # Note [Window sums by offsets]
        wide = float32 if x.dtype in (float16, bfloat16) else None
        total = None
        for a in range(kh):
            for b in range(kw):
                v = ops.slice(ops.slice(xp, 2, a, a + sh * (g.oh - 1) + 1, sh), 3, b, b + sw * (g.ow - 1) + 1, sw)
                v = v if wide is None else v.to(wide)
                total = v if total is None else ops.add(total, v)
    else:
        wide = None
        total = ops.sum(_windows(xp, g.k, g.s, (1, 1), g.oh, g.ow), [2, 3])  # (N, C, OH, OW)
    out = _divided(total, _divisor(x, g, count_include_pad, divisor_override))
    out = out if wide is None else out.to(x.dtype)  # half types: rounded once, after the division (as torch)
    return out if batched else ops.squeeze(out, [0])


@kernel("CompositeExplicitAutograd")
def avg_pool2d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override):
    """The gradient of ``self``: each window's gradient over its divisor, added to every element of the window (one
    strided add per position in the window, into a zero-padded gradient that is then cropped)."""
    g = avg_pool2d_geometry(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
                            grad_output)
    batched = self.dim() == 4
    x = self if batched else ops.unsqueeze(self, 0)
    go = grad_output if batched else ops.unsqueeze(grad_output, 0)
    share = _divided(go, _divisor(x, g, count_include_pad, divisor_override))
    if g.s == g.k and not any(g.p) and g.oh * g.k[0] <= x._sizes[2] and g.ow * g.k[1] <= x._sizes[3]:
        out = _tiled(share, x, g.k)  # Note [Disjoint windows]
        return out if batched else ops.squeeze(out, [0])
    (top, bottom), (left, right) = _pads(x, g)
    n, c, h, w = x._sizes
    padded = ops.zeros((n, c, h + top + bottom, w + left + right), dtype=self.dtype, device=self.device)
    (kh, kw), (sh, sw) = g.k, g.s
    for a in range(kh):
        for b in range(kw):
            ops.add_(ops.slice(ops.slice(padded, 2, a, a + sh * (g.oh - 1) + 1, sh), 3, b, b + sw * (g.ow - 1) + 1, sw),
                     share)
    out = ops.narrow(ops.narrow(padded, 2, top, h), 3, left, w)
    return ops.contiguous(out) if batched else ops.contiguous(ops.squeeze(out, [0]))


# Note [Disjoint windows]
# With the stride equal to the kernel and no padding (avg_pool2d(2), an adaptive pool to a size that divides the
# input) the windows do not overlap: each input element takes exactly one window's share, so the gradient is the
# shares repeated over their windows -- one broadcast copy, where the general backward makes one strided add per
# position in the window (49 for the 7 x 7 window of a ResNet's global pool). Rows and columns past the last window
# get zeros. The values are the same: each element received one addition onto zero.
def _tiled(share, x, k):
    """The (N, C, H, W) gradient of disjoint (kh, kw) windows whose shares are ``share`` (N, C, OH, OW)."""
    n, c, oh, ow = share._sizes
    (kh, kw), (h, w) = k, x._sizes[2:]
    tiles = ops.expand(ops.reshape(share, (n, c, oh, 1, ow, 1)), (n, c, oh, kh, ow, kw))
    out = ops.reshape(ops.contiguous(tiles), (n, c, oh * kh, ow * kw))
    if (oh * kh, ow * kw) != (h, w):
        out = ops.constant_pad_nd(out, [0, w - ow * kw, 0, h - oh * kh], 0.0)
    return out


def _pads(x, g) -> tuple:
    """(rows above, below), (columns left, right): the padding, plus the ceil-mode overhang past it."""
    h, w = x._sizes[-2:]
    (kh, kw), (sh, sw), (ph, pw) = g.k, g.s, g.p
    extra_h = max(0, (g.oh - 1) * sh + kh - (h + 2 * ph))
    extra_w = max(0, (g.ow - 1) * sw + kw - (w + 2 * pw))
    return (ph, ph + extra_h), (pw, pw + extra_w)


def _divisor(x, g, count_include_pad, divisor_override):
    """``divisor_override``, or per output position the count torch divides by: the product of the two dims' window
    counts (a tensor of the output's (OH, OW))."""
    if divisor_override is not None:
        return divisor_override
    from ...factories import tensor
    from ...nn.pooling import window_counts

    h, w = x._sizes[-2:]
    dtype = x.dtype if x.dtype.is_floating_point or x.dtype is int64 else float32
    rows = tensor(window_counts(h, g.k[0], g.s[0], g.p[0], g.oh, count_include_pad), dtype=dtype, device=x.device)
    cols = tensor(window_counts(w, g.k[1], g.s[1], g.p[1], g.ow, count_include_pad), dtype=dtype, device=x.device)
    return ops.mul(ops.reshape(rows, (g.oh, 1)), cols)


def _divided(total, divisor):
    """The sums over their counts: true division, or truncating for int64 (torch's CPU kernel)."""
    if total.dtype is int64:
        return ops.div(total, divisor, rounding_mode="trunc")
    return ops.div(total, divisor)
