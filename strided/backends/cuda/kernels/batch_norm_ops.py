"""CUDA kernels of ``native_batch_norm`` and ``native_batch_norm_backward`` (``batch_norm.cu``, Note [Batch-norm
kernels]): two launches each way, where the composites (ops/composite/batch_norm.py) take a dozen ops, most of
them host-bound. Inputs these kernels do not take -- channels-last or other non-contiguous layouts, parameters of
another dtype than the statistics', more than 2^31 elements -- go to the composites."""

from __future__ import annotations

import math
from functools import cache

from .... import dtypes as dt
from ....dispatch.library import kernel
from ....ops import bound as ops
from ...meta.common import new_output
from ..launch import get_kernel
from ..reduction import kernel_source, sm_count
from ..streams import current_stream_handle
from . import CTYPES

__all__ = ["batch_norm_sources", "BN_FMT", "GN_FMT", "GN_VEC_BYTES", "launch_group_norm"]

BN_FMT = "<12Q3q2dq"  # BnParams: 12 pointers, n, c, s, momentum, eps, training
GN_FMT = "<11Q5qd"  # GnParams: 11 pointers, n, c, s, groups, vec, eps
GN_VEC_BYTES = 16  # GnPack: the vector path's loads and stores
BN_BLOCK = 256
_INPUTS = ("float32", "float64", "float16", "bfloat16")


def _param_dtype(d: dt.dtype) -> dt.dtype:
    return dt.float64 if d is dt.float64 else dt.float32


@cache
def _source(name: str) -> str:
    p = _param_dtype(dt.to_dtype(name)).name
    return kernel_source("batch_norm.cu", IN_T=CTYPES[name], P_T=CTYPES[p], BN_BLOCK=BN_BLOCK)


def batch_norm_sources():
    """(file, kernel names, source) of every batch_norm.cu instantiation (NVRTC null test)."""
    for name in _INPUTS:
        yield "batch_norm.cu", ("bn_stats", "bn_apply", "bn_grad_stats", "bn_grad_apply", "gn_stats", "gn_apply",
                                "gn_grad_stats", "gn_grad_sums", "gn_grad_apply"), _source(name)


def _takes(x, *params) -> bool:
    """Whether the kernels take ``x`` (contiguous, a floating dtype, indexable in 32 bits) and the per-channel
    tensors (each None or a contiguous vector of C elements in the statistics' dtype on ``x``'s device)."""
    if x.dtype.name not in _INPUTS or x.dim() < 2 or not x.is_contiguous() or x.numel() >= 1 << 31:
        return False
    c, pd = x._sizes[1], _param_dtype(x.dtype)
    return all(t is None or (t.dtype is pd and t._sizes == (c,) and t.device == x.device and t.is_contiguous())
               for t in params)


def _ptr(t) -> int:
    return 0 if t is None else t.data_ptr()


def _launch(name: str, x, grid: int, fields) -> None:
    dev = x.device.index
    get_kernel(_source(x.dtype.name), name, BN_FMT, dev)(grid, BN_BLOCK, current_stream_handle(dev), *fields)


def _geometry(x):
    n, c = x._sizes[0], x._sizes[1]
    s = math.prod(x._sizes[2:])
    elementwise_grid = min((n * c * s + BN_BLOCK - 1) // BN_BLOCK, sm_count(x.device.index) * 16)
    return n, c, s, min(c, 65535), max(elementwise_grid, 1)


@kernel("CUDA")
def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    from ....ops.composite.batch_norm import native_batch_norm as composite

    if not _takes(input, weight, bias, running_mean, running_var) or (not training and running_mean is None) \
            or (not training and running_var is None) or input.numel() == 0:
        return composite(input, weight, bias, running_mean, running_var, training, momentum, eps)
    n, c, s, channel_grid, grid = _geometry(input)
    pd = _param_dtype(input.dtype)
    out = new_output(input._sizes, input.dtype, input.device)
    if training:
        if n * s <= 1:
            return composite(input, weight, bias, running_mean, running_var, training, momentum, eps)
        mean, invstd = new_output((c,), pd, input.device), new_output((c,), pd, input.device)
        running = (_ptr(running_mean), _ptr(running_var))
    else:
        mean, invstd = ops.clone(running_mean), ops.rsqrt(ops.add(running_var, eps))
        running = (0, 0)
    fields = (input.data_ptr(), 0, out.data_ptr(), _ptr(weight), _ptr(bias), mean.data_ptr(), invstd.data_ptr(),
              *running, 0, 0, 0, n, c, s, float(momentum), float(eps), int(bool(training)))
    if training:
        _launch("bn_stats", input, channel_grid, fields)
        if running_mean is not None:
            running_mean._storage._version += 1  # written in place, as the composite's add_ counts
        if running_var is not None:
            running_var._storage._version += 1
    _launch("bn_apply", input, grid, fields)
    return out, mean, invstd


@kernel("CUDA")
def native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean, save_invstd, train,
                               eps, output_mask):
    from ....ops.composite.batch_norm import native_batch_norm_backward as composite

    args = (grad_out, input, weight, running_mean, running_var, save_mean, save_invstd, train, eps, output_mask)
    if not train and running_mean is not None and running_var is not None:  # evaluation: the running statistics
        save_mean, save_invstd = running_mean, ops.rsqrt(ops.add(running_var, eps))
    if (not _takes(input, weight, save_mean, save_invstd) or save_mean is None or save_invstd is None
            or grad_out.dtype is not input.dtype or grad_out._sizes != input._sizes or input.numel() == 0
            or grad_out.device != input.device):
        return composite(*args)
    g = grad_out if grad_out.is_contiguous() else grad_out.contiguous()
    n, c, s, channel_grid, grid = _geometry(input)
    pd = _param_dtype(input.dtype)
    want_input, want_weight, want_bias = output_mask
    dev = input.device
    gi = new_output(input._sizes if want_input else (0,), input.dtype, dev)
    gw = new_output((c,) if want_weight else (0,), weight.dtype if weight is not None else pd, dev)
    gb = new_output((c,) if want_bias else (0,), weight.dtype if weight is not None else pd, dev)
    sums = new_output((2 * c,), pd, dev)
    fields = (input.data_ptr(), g.data_ptr(), gi.data_ptr() if want_input else 0, _ptr(weight), 0,
              save_mean.data_ptr(), save_invstd.data_ptr(), 0, 0, gw.data_ptr() if want_weight else 0,
              gb.data_ptr() if want_bias else 0, sums.data_ptr(), n, c, s, 0.0, float(eps), int(bool(train)))
    _launch("bn_grad_stats", input, channel_grid, fields)
    if want_input:
        _launch("bn_grad_apply", input, grid, fields)
    return gi, gw, gb


def launch_group_norm(name: str, x, fields) -> None:
    """Launch group-norm kernel ``name`` (Note [Group-norm kernels]) over ``x`` with ``GnParams`` ``fields``: a
    block per (sample, group) (gn_stats) or per (sample, channel) (gn_grad_stats), a thread per group and per
    channel (gn_grad_sums), or a thread per element or per vector of elements (gn_apply, gn_grad_apply)."""
    n, c, s, groups, vec = fields[-6:-1]
    if name == "gn_stats":
        grid = min(n * groups, 65535)
    elif name == "gn_grad_stats":
        grid = min(n * c, 65535)
    elif name == "gn_grad_sums":
        grid = (max(n * groups, c) + BN_BLOCK - 1) // BN_BLOCK
    else:
        units = n * c * s // (GN_VEC_BYTES // x.dtype.itemsize if vec else 1)
        grid = max(min((units + BN_BLOCK - 1) // BN_BLOCK, sm_count(x.device.index) * 16), 1)
    dev = x.device.index
    get_kernel(_source(x.dtype.name), name, GN_FMT, dev)(grid, BN_BLOCK, current_stream_handle(dev), *fields)
