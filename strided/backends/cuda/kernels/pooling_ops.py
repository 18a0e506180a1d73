"""CUDA kernels of 2-d max pooling (``max_pool.cu``): ``max_pool2d_with_indices`` and its backward, one launch each,
as torch's (aten/src/ATen/native/cuda/DilatedMaxPool2d.cu), where the composite (a window view copied and reduced,
Note [Convolution as a GEMM]) makes a copy of every window and about ten launches."""

from __future__ import annotations

from functools import cache

from .... import dtypes as dt
from ....dispatch.library import kernel
from ...meta.common import new_output
from ...meta.pooling import max_pool2d_geometry
from ..launch import get_kernel
from ..reduction import acc_ctype, kernel_source
from ..streams import current_stream_handle
from . import CTYPES, launch_config

__all__ = ["max_pool_sources"]

FWD_FMT = "<QQQ13q"
BWD_FMT = "<QQQ13q"


@cache
def _source(name: str) -> str:
    return kernel_source("max_pool.cu", POOL_T=CTYPES[name], ACC_T=acc_ctype(dt.to_dtype(name)))


def max_pool_sources():
    """(file, kernel names, source) of every max_pool.cu instantiation (NVRTC null test)."""
    for name in ("float32", "float64", "float16", "bfloat16"):
        yield "max_pool.cu", ("max_pool2d_fwd", "max_pool2d_bwd"), _source(name)


def _launch(name: str, fmt: str, like, total: int, *args) -> None:
    if total:
        dev = like.device.index
        grid, block = launch_config(total)
        get_kernel(_source(like.dtype.name), name, fmt, dev)(grid, block, current_stream_handle(dev), *args)


@kernel("CUDA")
def max_pool2d_with_indices(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    g = max_pool2d_geometry(self, kernel_size, stride, padding, dilation, ceil_mode)
    x = self if self.is_contiguous() else self.contiguous()
    lead = self._sizes[:-2]
    out = new_output((*lead, g.oh, g.ow), self.dtype, self.device)
    idx = new_output((*lead, g.oh, g.ow), dt.int64, self.device)
    _launch("max_pool2d_fwd", FWD_FMT, self, out.numel(), x.data_ptr(), out.data_ptr(), idx.data_ptr(), *g.args)
    return out, idx


@kernel("CUDA")
def max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
    g = max_pool2d_geometry(self, kernel_size, stride, padding, dilation, ceil_mode, grad_output, indices)
    go = grad_output if grad_output.is_contiguous() else grad_output.contiguous()
    ix = indices if indices.is_contiguous() else indices.contiguous()
    grad_in = new_output(self._sizes, self.dtype, self.device)
    _launch("max_pool2d_bwd", BWD_FMT, self, grad_in.numel(), go.data_ptr(), ix.data_ptr(), grad_in.data_ptr(),
            *g.args)
    return grad_in
