"""CompositeExplicitAutograd kernels of ``im2col`` and ``col2im`` (``F.unfold`` / ``F.fold``, the convolution's
columns, Note [Convolution as a GEMM]), for every backend without its own (CPU, Meta): im2col as the window view of
the zero-padded input copied into columns, col2im as one strided add per kernel offset (Note [Fold as col2im]). Each
is the other's gradient (derivatives.yaml), so convolutions and folds differentiate without the window view's
scatter-add."""

from __future__ import annotations

from ...backends.meta.im2col import col2im_geometry, im2col_geometry
from ...dispatch.library import kernel
from .. import bound as ops

__all__ = []


@kernel("CompositeExplicitAutograd")
def im2col(self, kernel_size, dilation, padding, stride):
    """(N, C * KH * KW, LH * LW) columns of sliding blocks of an (N, C, H, W) (or unbatched) input."""
    from ...nn.convolution import _padded, _windows

    g = im2col_geometry(self, kernel_size, dilation, padding, stride)
    x = self if g.batched else ops.unsqueeze(self, 0)
    cols = _windows(_padded(x, (g.p[0], g.p[0]), (g.p[1], g.p[1]), 0.0), g.k, g.s, g.d, g.lh, g.lw)
    out = ops.reshape(cols, (g.n, g.c * g.k[0] * g.k[1], g.lh * g.lw))
    return out if g.batched else ops.squeeze(out, [0])


@kernel("CompositeExplicitAutograd")
def col2im(self, output_size, kernel_size, dilation, padding, stride):
    """Columns of sliding blocks summed back into an image of ``output_size`` (Note [Fold as col2im])."""
    from ...nn.convolution_transpose import _col2im

    g = col2im_geometry(self, output_size, kernel_size, dilation, padding, stride)
    x = self if g.batched else ops.unsqueeze(self, 0)
    cols = ops.reshape(x, (g.n, g.c, g.k[0], g.k[1], g.lh, g.lw))
    (ph, pw), (h, w) = g.p, (g.h, g.w)
    out = ops.zeros((g.n, g.c, h + 2 * ph, w + 2 * pw), dtype=x.dtype, device=x.device)
    _col2im(out, cols, (g.lh, g.lw), g.s, g.d)
    if ph or pw:  # cut the padded border off into a contiguous tensor, as torch's output
        out = ops.contiguous(ops.slice(ops.slice(out, 2, ph, ph + h), 3, pw, pw + w))
    return out if g.batched else ops.squeeze(out, [0])
