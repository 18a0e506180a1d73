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

__all__ = ["im2col_sources", "launch_columns", "launch_shape"]

FMT = "<QQ16q"
COL_ILP = 4  # im2col.cu's elements per thread
_FLOATING = ("float32", "float64", "float16", "bfloat16")


@cache
def _source(name: str, image: str | None = None) -> str:
    if image is None or image == name:
        return kernel_source("im2col.cu", COL_T=CTYPES[name], ACC_T=acc_ctype(dt.to_dtype(name)))
    return kernel_source("im2col.cu", COL_T=CTYPES[name], ACC_T=acc_ctype(dt.to_dtype(name)), IMG_T=CTYPES[image])


def im2col_sources():
    """(file, kernel names, source) of every im2col.cu instantiation (NVRTC null test)."""
    for name in _FLOATING:
        yield "im2col.cu", ("im2col_kernel", "col2im_kernel"), _source(name)
    for image in ("float16", "bfloat16"):  # Note [Half columns] in convolution_ops.py
        yield "im2col.cu", ("col2im_kernel",), _source("float32", image)


@cache
def launch_shape(rows: int, row_length: int, per_thread: int) -> tuple[int, int]:
    """(grid, block) of a column kernel (Note [Column kernels' index math]). im2col (``per_thread`` COL_ILP): a
    block per row, up to 2^16, as wide as the row's steps need (32-256 threads). col2im (``per_thread`` 1): a block
    per tile of a plane, of the 64-256 threads that pad the plane least (the larger on a tie), up to 2^18."""
    if per_thread > 1:
        steps = -(-row_length // per_thread)
        return min(rows, 1 << 16), min(256, max(32, (steps + 31) // 32 * 32))
    block, padded = 256, None
    for b in (256, 128, 64):
        size = -(-row_length // b) * b
        if padded is None or size < padded:
            block, padded = b, size
    return min(rows * (padded // block), 1 << 18), block


def launch_columns(name: str, like, rows: int, row_length: int, src: int, dst: int, args: tuple,
                   image_dtype=None) -> None:
    """Launch ``im2col_kernel`` (``rows`` column rows of ``row_length``) or ``col2im_kernel`` (``rows`` image
    planes of ``row_length`` pixels) on ``like``'s device and current stream; ``like`` has the columns' dtype,
    ``image_dtype`` (col2im, default the same) the image's."""
    if rows and row_length:
        dev = like.device.index
        grid, block = launch_shape(rows, row_length, COL_ILP if name == "im2col_kernel" else 1)
        source = _source(like.dtype.name, None if image_dtype is None else image_dtype.name)
        get_kernel(source, name, FMT, dev)(grid, block, current_stream_handle(dev), src, dst, *args)


@kernel("CUDA")
def im2col(self, kernel_size, dilation, padding, stride):
    if self.dtype.name not in _FLOATING:
        from ....ops.composite.im2col import im2col as composite

        return composite(self, kernel_size, dilation, padding, stride)
    g = im2col_geometry(self, kernel_size, dilation, padding, stride)
    x = self if self.is_contiguous() else self.contiguous()
    rows, length = g.c * g.k[0] * g.k[1], g.lh * g.lw
    out = new_output((g.n, rows, length) if g.batched else (rows, length), self.dtype, self.device)
    launch_columns("im2col_kernel", self, g.n * rows, length, x.data_ptr(), out.data_ptr(), g.args)
    return out


@kernel("CUDA")
def col2im(self, output_size, kernel_size, dilation, padding, stride):
    if self.dtype.name not in _FLOATING:
        from ....ops.composite.im2col import col2im as composite

        return composite(self, output_size, kernel_size, dilation, padding, stride)
    g = col2im_geometry(self, output_size, kernel_size, dilation, padding, stride)
    cols = self if self.is_contiguous() else self.contiguous()
    out = new_output((g.n, g.c, g.h, g.w) if g.batched else (g.c, g.h, g.w), self.dtype, self.device)
    launch_columns("col2im_kernel", self, g.n * g.c, g.h * g.w, cols.data_ptr(), out.data_ptr(), g.args)
    return out
