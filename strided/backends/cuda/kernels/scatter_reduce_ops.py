"""CUDA kernel for ``scatter_reduce.two`` (``scatter_reduce.cu``); the in-place ``scatter_reduce_.two`` is its
autogen overload. Validation and the output are the Meta function's, results and errors the CPU kernel's
(``backends/cpu/math_more.py``).

Note [CUDA scatter_reduce]
The output starts as a copy of ``self``. With ``include_self=False`` a first launch writes the reduction's
identity (0, 1, lowest, highest) at every position that receives a src element, so the reduction then sees
only src there, as the CPU's ``acc[where] = identity``. One launch then combines each src element into
its position atomically: sum and mean add (``atomicAdd``; 1- and 2-byte integers by a compare-and-swap on
their 32-bit word), prod, and floating amax / amin, loop on ``atomicCAS``, integer amax / amin use
``atomicMax`` / ``atomicMin`` where the width has one. amax / amin propagate NaN (``np.maximum.at``); bool
sums and maxima are ORs, products and minima ANDs, as NumPy's. float16 / bfloat16 accumulate in a float32
copy rounded once at the end (the CPU computes in float32 too). mean also counts the src elements per
position (int64 atomics), then a last launch divides by ``max(count + include_self, 1)``: true division
in double for floating dtypes (rounded once, into the result), floor division for integers. Integer and
bool results are exact in any order; floating sums, means and products are not (the order of the atomics
varies), so those raise under ``use_deterministic_algorithms(True)``. Every launch checks its indices on
the device and reports the first bad one (Note [CUDA index bounds], Note [Deferred index errors]).
"""

from __future__ import annotations

from functools import cache

from .... import dtypes as dt
from ....dispatch.library import kernel
from ...meta import math_more as meta
from ...meta.common import new_output, wrap_dim
from ...meta.pointwise import scalar_type_name
from ..copies import copy_ as copy_impl
from . import CTYPES, MAX_DIMS, fill_kernel, source
from .index_launch import copy_into, deferred_check, deterministic_check, run, stream, to_cuda_i64
from .indexing_ops import _bounds, _sizes1

__all__ = ["scatter_reduce_sources", "SR_FMT", "MEAN_FMT", "KERNELS"]

SR_FMT = "<QQQQqq8q8q8qqqqQq"  # ScatterReduceParams
MEAN_FMT = "<QQQqq"  # MeanParams
KERNELS = ("scatter_reduce_init", "scatter_reduce", "scatter_reduce_mean")
_REDUCE = {"sum": 0, "prod": 1, "mean": 2, "amax": 3, "amin": 4}
_HALF = (dt.float16, dt.bfloat16)


def _acc_name(name: str) -> str:
    return "float32" if name in ("float16", "bfloat16") else name


@cache
def scatter_reduce_source(name: str) -> str:
    """scatter_reduce.cu for results of dtype ``name`` (the accumulator float32 for 16-bit floats)."""
    return source("scatter_reduce.cu", _acc_name(name), name)


def scatter_reduce_sources():
    """Every (file, kernel names, source) of this module, for the NVRTC null test."""
    for name in CTYPES:
        yield "scatter_reduce.cu", KERNELS, scatter_reduce_source(name)


def _pad(v):
    return list(v) + [0] * (MAX_DIMS - len(v))


@kernel("CUDA")
def scatter_reduce(self, dim, index, src, reduce, *, include_self=True):
    out = meta.scatter_reduce(self, dim, index, src, reduce, include_self=include_self)
    if self.dtype.is_complex:
        return _complex_sum(self, out, dim, index, src, reduce, include_self)
    copy_into(out, self)
    if not index.numel():
        return out
    if reduce in ("sum", "mean", "prod"):
        deterministic_check("scatter_reduce_cuda", self.dtype)
    d = wrap_dim(dim, max(len(self._sizes), 1))
    sizes, strides = _sizes1(out)  # out is contiguous (the Meta function's new_output)
    idx = to_cuda_i64(index, self.device)
    isz = _sizes1(idx)[0]
    if len(isz) > MAX_DIMS:
        raise RuntimeError(f"strided CUDA scatter_reduce supports at most {MAX_DIMS} dims, got {len(isz)}")
    err = deferred_check(self.device, idx, sizes[d], RuntimeError, _bounds(d, sizes[d]), "scatter_reduce")
    if src.device is not out.device:  # a 0-dim CPU src (the dispatcher lets it join): to the device
        src = copy_impl(new_output(src._sizes, src.dtype, out.device), src)
    acc = out
    if out.dtype in _HALF:  # Note [CUDA scatter_reduce]: a float32 accumulator
        acc = new_output(out._sizes, dt.float32, out.device)
        copy_into(acc, out)
    count = None
    dev = out.device.index
    if reduce == "mean":
        count = new_output(out._sizes, dt.int64, out.device)
        fill_kernel(dev, dt.int64, count.data_ptr(), count._sizes, count._strides, 0, stream(count))
    n = idx.numel()
    bst = tuple(0 if k == d else s for k, s in enumerate(strides))
    values = (acc.data_ptr(), src.data_ptr(), idx.data_ptr(), 0 if count is None else count.data_ptr(), n,
              len(isz), *_pad(isz), *_pad(_sizes1(src)[1]), *_pad(bst), strides[d], sizes[d], _REDUCE[reduce], *err)
    if not include_self:
        run("scatter_reduce.cu", acc.dtype, "scatter_reduce_init", SR_FMT, dev, n, *values, src_dtype=out.dtype)
    run("scatter_reduce.cu", acc.dtype, "scatter_reduce", SR_FMT, dev, n, *values, src_dtype=out.dtype)
    total = out.numel()
    if count is not None:
        run("scatter_reduce.cu", acc.dtype, "scatter_reduce_mean", MEAN_FMT, dev, total, out.data_ptr(),
            acc.data_ptr(), count.data_ptr(), total, int(bool(include_self)), src_dtype=out.dtype)
    elif acc is not out:
        copy_into(out, acc)
    return out


def _complex_sum(self, out, dim, index, src, reduce, include_self):
    """Complex ``scatter_reduce``: as torch's CUDA, only ``sum`` (a scatter_add over the pairs, Note [Complex
    gathers]; with ``include_self=False`` the positions that receive a src element start from 0)."""
    from ....ops import bound as ops

    if reduce != "sum":
        raise NotImplementedError(f'"cuda_scatter_gather_base_kernel_func" not implemented for '
                                  f"'{scalar_type_name(self.dtype)}'")
    if not index.numel():
        copy_into(out, self)
        return out
    deterministic_check("scatter_reduce_cuda", self.dtype)
    base = self
    if not include_self:
        hit = ops.scatter(ops.zeros(self._sizes, dtype=dt.int64, device=self.device), dim, index, 1)
        base = ops.masked_fill(self, ops.ne(hit, 0), 0)
    return ops.scatter_add(base, dim, index, src)
