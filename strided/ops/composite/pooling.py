"""CompositeExplicitAutograd kernels of 2-d max pooling, for every backend without its own (CPU, Meta):
``max_pool2d_with_indices`` over the window view of Note [Convolution as a GEMM], and its backward as one
``scatter_add`` of the gradients to the chosen elements (Note [The element a max pool chooses])."""

from __future__ import annotations

import math

from ...backends.meta.pooling import max_pool2d_geometry
from ...dispatch.library import kernel
from .. import bound as ops

__all__ = []


@kernel("CompositeExplicitAutograd")
def max_pool2d_with_indices(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """(values, indices) of 2-d max pooling; an index is the flat position in its (H, W) input plane."""
    from ...dtypes import int64
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
