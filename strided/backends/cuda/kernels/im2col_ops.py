"""CUDA kernels of ``im2col`` and ``col2im`` (``im2col.cu``; F.unfold / F.fold and the columns of every convolution,
Note [Convolution as a GEMM]): one launch each, where the composites copy a window view of a padded copy of the
input (im2col) or add KH * KW strided planes one launch at a time (col2im). Complex and bool columns, which no
convolution makes, take the composites."""

from __future__ import annotations

from functools import cache

from .... import dtypes as dt
from ....dispatch.library import kernel
from ...meta.common import new_output
from ...meta.im2col import col2im_geometry, im2col_geometry
from ..launch import get_kernel
from ..reduction import acc_ctype, kernel_source
from ..streams import current_stream_handle
from . import CTYPES

__all__ = ["im2col_sources"]

FMT = "<QQ15q"
_FLOATING = ("float32", "float64", "float16", "bfloat16")


@cache
def _source(name: str) -> str:
    return kernel_source("im2col.cu", COL_T=CTYPES[name], ACC_T=acc_ctype(dt.to_dtype(name)))


def im2col_sources():
    """(file, kernel names, source) of every im2col.cu instantiation (NVRTC null test)."""
    for name in _FLOATING:
        yield "im2col.cu", ("im2col_kernel", "col2im_kernel"), _source(name)


def _launch(name: str, like, rows: int, row_length: int, *args) -> None:
    """One block per row (grid-striding past 65536 rows), its threads along the row: a warp multiple up to 256
    (Note [Column kernels' index math])."""
    if rows and row_length:
        dev = like.device.index
        block = min(256, (row_length + 31) // 32 * 32)
        get_kernel(_source(like.dtype.name), name, FMT, dev)(min(rows, 1 << 16), block, current_stream_handle(dev),
                                                             *args)


@kernel("CUDA")
def im2col(self, kernel_size, dilation, padding, stride):
    if self.dtype.name not in _FLOATING:
        from ....ops.composite.im2col import im2col as composite

        return composite(self, kernel_size, dilation, padding, stride)
    g = im2col_geometry(self, kernel_size, dilation, padding, stride)
    x = self if self.is_contiguous() else self.contiguous()
    rows, length = g.c * g.k[0] * g.k[1], g.lh * g.lw
    out = new_output((g.n, rows, length) if g.batched else (rows, length), self.dtype, self.device)
    _launch("im2col_kernel", self, g.n * rows, length, x.data_ptr(), out.data_ptr(), *g.args)
    return out


@kernel("CUDA")
def col2im(self, output_size, kernel_size, dilation, padding, stride):
    if self.dtype.name not in _FLOATING:
        from ....ops.composite.im2col import col2im as composite

        return composite(self, output_size, kernel_size, dilation, padding, stride)
    g = col2im_geometry(self, output_size, kernel_size, dilation, padding, stride)
    cols = self if self.is_contiguous() else self.contiguous()
    out = new_output((g.n, g.c, g.h, g.w) if g.batched else (g.c, g.h, g.w), self.dtype, self.device)
    _launch("col2im_kernel", self, g.n * g.c, g.h * g.w, cols.data_ptr(), out.data_ptr(), *g.args)
    return out
