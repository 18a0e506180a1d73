"""CUDA kernels for ``cummax`` and ``cummin`` (``scan_index.cu``): values and indices of the running
extreme along one dim, with torch's NaN and tie rules (the CPU kernel's answers, index for index)."""

from __future__ import annotations

import math
from functools import cache

from .... import dtypes as dt
from ....dispatch.library import kernel
from ...meta import reductions as meta
from ...meta.common import wrap_dim
from ..launch import get_kernel
from ..normalization import _line_args, _prepare
from ..reduction import acc_ctype, kernel_source
from ..streams import current_stream_handle
from . import CTYPES

__all__ = ["scan_index_sources"]

SI_FMT = "<QQQqqqqq8q8q8q"
_FLOATS = ("float16", "bfloat16", "float32", "float64")


@cache
def _source(name: str, is_min: bool) -> str:
    d = dt.to_dtype(name)
    acc = acc_ctype(d) if name in _FLOATS else CTYPES[name]
    return kernel_source("scan_index.cu", IN_T=CTYPES[name], ACC_T=acc, IS_FLOAT=int(name in _FLOATS),
                         IS_MIN=int(is_min))


def scan_index_sources():
    """(file, kernel names, source) of every scan_index.cu instantiation (NVRTC null test)."""
    for name in CTYPES:
        for is_min in (False, True):
            yield "scan_index.cu", ("scan_index_inner", "scan_index_outer"), _source(name, is_min)


def _cummaxmin(self, dim, name: str):
    values, indices = result = meta.cummaxmin(self, dim, name)
    if values.numel() == 0:
        return result
    x, kept, D, ids, ods = _prepare(self, values, wrap_dim(dim, self.dim()) if self._sizes else 0)
    lines = math.prod(k[0] for k in kept)
    dev = x.device.index
    src = _source(self.dtype.name, name == "cummin")
    args = (x.data_ptr(), values.data_ptr(), indices.data_ptr(), lines, D, ids, ods, *_line_args(kept))
    stream = current_stream_handle(dev)
    if ids == 1 and ods == 1 and D > 64:
        get_kernel(src, "scan_index_inner", SI_FMT, dev)(min(lines, 1 << 20), 256, stream, *args)
    else:
        get_kernel(src, "scan_index_outer", SI_FMT, dev)(min(-(-lines // 128), 1 << 20), 128, stream, *args)
    return result


@kernel("CUDA")
def cummax(self, dim):
    return _cummaxmin(self, dim, "cummax")


@kernel("CUDA")
def cummin(self, dim):
    return _cummaxmin(self, dim, "cummin")
