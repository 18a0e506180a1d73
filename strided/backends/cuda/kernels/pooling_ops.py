"""CUDA kernels of 2-d pooling: ``max_pool2d_with_indices`` (``max_pool.cu``), ``avg_pool2d`` (``avg_pool.cu``) and
their backwards, one launch each, as torch's (aten/src/ATen/native/cuda/DilatedMaxPool2d.cu, AveragePool2d.cu),
where the composites (a window view copied and reduced, Note [Convolution as a GEMM]) make a copy of every window
and about ten launches."""

from __future__ import annotations

from functools import cache

from .... import dtypes as dt
from ....dispatch.library import kernel
from ...meta.common import new_output
from ...meta.pooling import avg_pool2d_geometry, max_pool2d_geometry
from ..launch import get_kernel
from ..reduction import acc_ctype, kernel_source
from ..streams import current_stream_handle
from . import CTYPES, launch_config

__all__ = ["pool_sources"]

FWD_FMT = "<QQQ13q"
BWD_FMT = "<QQQ13q"


AVG_FWD_FMT = "<QQ13q"
AVG_BWD_FMT = "<QQ13q"
_KERNELS = {"max_pool.cu": ("max_pool2d_fwd", "max_pool2d_bwd"), "avg_pool.cu": ("avg_pool2d_fwd", "avg_pool2d_bwd")}


@cache
def _source(file: str, name: str) -> str:
    return kernel_source(file, POOL_T=CTYPES[name], ACC_T=acc_ctype(dt.to_dtype(name)))


def pool_sources():
    """(file, kernel names, source) of every max_pool.cu and avg_pool.cu instantiation (NVRTC null test)."""
    for file, names in _KERNELS.items():
        for name in ("float32", "float64", "float16", "bfloat16"):
            yield file, names, _source(file, name)


def _launch(file: str, name: str, fmt: str, like, total: int, *args) -> None:
    if total:
        dev = like.device.index
        grid, block = launch_config(total)
        get_kernel(_source(file, like.dtype.name), name, fmt, dev)(grid, block, current_stream_handle(dev), *args)


@kernel("CUDA")
def max_pool2d_with_indices(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    g = max_pool2d_geometry(self, kernel_size, stride, padding, dilation, ceil_mode)
    x = self if self.is_contiguous() else self.contiguous()
    lead = self._sizes[:-2]
    out = new_output((*lead, g.oh, g.ow), self.dtype, self.device)
    idx = new_output((*lead, g.oh, g.ow), dt.int64, self.device)
    _launch("max_pool.cu", "max_pool2d_fwd", FWD_FMT, self, out.numel(), x.data_ptr(), out.data_ptr(), idx.data_ptr(),
            *g.args)
    return out, idx


@kernel("CUDA")
def max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
    g = max_pool2d_geometry(self, kernel_size, stride, padding, dilation, ceil_mode, grad_output, indices)
    go = grad_output if grad_output.is_contiguous() else grad_output.contiguous()
    ix = indices if indices.is_contiguous() else indices.contiguous()
    grad_in = new_output(self._sizes, self.dtype, self.device)
    _launch("max_pool.cu", "max_pool2d_bwd", BWD_FMT, self, grad_in.numel(), go.data_ptr(), ix.data_ptr(),
            grad_in.data_ptr(), *g.args)
    return grad_in


@kernel("CUDA")
def avg_pool2d(self, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None):
    g = avg_pool2d_geometry(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    x = self if self.is_contiguous() else self.contiguous()
    out = new_output((*self._sizes[:-2], g.oh, g.ow), self.dtype, self.device)
    _launch("avg_pool.cu", "avg_pool2d_fwd", AVG_FWD_FMT, self, out.numel(), x.data_ptr(), out.data_ptr(), *g.args)
    return out


@kernel("CUDA")
def avg_pool2d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override):
    g = avg_pool2d_geometry(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
                            grad_output)
    go = grad_output if grad_output.is_contiguous() else grad_output.contiguous()
    grad_in = new_output(self._sizes, self.dtype, self.device)
    _launch("avg_pool.cu", "avg_pool2d_bwd", AVG_BWD_FMT, self, grad_in.numel(), go.data_ptr(), grad_in.data_ptr(),
            *g.args)
    return grad_in
