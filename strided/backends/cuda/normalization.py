"""Launchers for the row-wise CUDA kernels: cumsum / cumprod (scan.cu), softmax / log_softmax (softmax.cu),
layer_norm (norm.cu) and cross_entropy_loss (loss.cu).

Each works on *lines*: every index but one dim, addressed like the reduction engine's kept dims
(coalesced in logical order, ``offset_of`` per line), with the dim's own strides. A contiguous dim
gets a group of threads per line; a strided one a thread per line, adjacent lines adjacent in
memory. Inputs are rounded to the result dtype and computed in the CPU kernel's compute dtype.
"""

from __future__ import annotations

import math
from functools import cache

from ... import dtypes as dt
from ...tensor import Tensor
from ..meta.common import new_output
from .kernels import CTYPES, MAX_DIMS
from .launch import get_kernel
from .reduction import acc_ctype, kernel_source, sm_count, workspace
from .streams import current_stream_handle

__all__ = ["scan", "softmax_into", "softmax_backward_into", "layer_norm_into", "layer_norm_backward_into",
           "cross_entropy_into", "normalization_sources"]

LINES_FMT = "<QQqqqqqq8q8q8q"  # SmParams: in, out, lines, D, group, dim strides, kept dims
SCAN_FMT = "<QQqqqqq8q8q8q"  # ScanParams: the same without group
CE_FMT = "<QQQQQqqqqdq"
SOFTMAX_REG_MAX_GROUP = 256  # threads per row softmax_reg may use before softmax_smem takes over (H200: bf16
# rows of 16384 ran 0.75x torch on 512-thread register rows, 1.08x in shared memory)
SOFTMAX_SMEM_BLOCK = 512  # threads of softmax_smem below 8192 vectors a row (H200 fp32: 512 best at 16384
# elements, 1024 at 32768)
LN_FMT = "<QQQQqqqd"
SM_BWD_FMT = "<QQQqqq"  # SmBwdParams
LN_BWD_FMT = "<QQQQQQqqqd"  # LnBwdParams
LN_COL_FMT = "<QQQQQQqqqq"  # LnColParams
LN_FIN_FMT = "<QQQQqq"  # LnFinishParams


@cache
def _cast_source(file: str, in_name: str, out_name: str, **extra) -> str:
    return kernel_source(file, IN_T=CTYPES[in_name], CAST_T=CTYPES[out_name], CAST_SAME=int(in_name == out_name),
                         ACC_T=acc_ctype(dt.to_dtype(out_name)), OUT_T=CTYPES[out_name], **extra)


def _lines(x: Tensor, out: Tensor, dim: int):
    """(kept dims as [size, in_stride, out_stride] rows, D, in dim stride, out dim stride)."""
    if not x._sizes:
        return [], 1, 1, 1
    rows = [(n, si, so) for d, (n, si, so) in enumerate(zip(x._sizes, x._strides, out._strides)) if d != dim]
    merged: list[list[int]] = []
    for n, si, so in rows:
        if n == 1:
            continue
        if merged and merged[-1][1] == si * n and merged[-1][2] == so * n:
            merged[-1][0] *= n
            merged[-1][1], merged[-1][2] = si, so
        else:
            merged.append([n, si, so])
    return merged, x._sizes[dim], x._strides[dim], out._strides[dim]


def _pad(v):
    v = list(v)
    return v + [0] * (MAX_DIMS - len(v))


def _line_args(kept):
    return (len(kept), *_pad(k[0] for k in kept), *_pad(k[1] for k in kept), *_pad(k[2] for k in kept))


def _prepare(x: Tensor, out: Tensor, dim: int):
    kept, D, ids, ods = _lines(x, out, dim)
    if len(kept) > MAX_DIMS:
        x = x.contiguous()
        kept, D, ids, ods = _lines(x, out, dim)
    return x, kept, D, ids, ods


def scan(x: Tensor, out: Tensor, dim: int, mul: bool = False, lse: bool = False) -> Tensor:
    """cumsum (cumprod with ``mul``, logcumsumexp with ``lse``) of ``x`` along ``dim`` into ``out`` (rounded
    to and accumulated like the CPU kernel)."""
    if out.numel() == 0:
        return out
    x, kept, D, ids, ods = _prepare(x, out, dim)
    lines = math.prod(k[0] for k in kept)
    dev = x.device.index
    src = _cast_source("scan.cu", x.dtype.name, out.dtype.name, SCAN_MUL=int(mul), SCAN_LSE=int(lse))
    args = (x.data_ptr(), out.data_ptr(), lines, D, ids, ods, *_line_args(kept))
    stream = current_stream_handle(dev)
    if ids == 1 and ods == 1 and D > 64:
        get_kernel(src, "scan_inner", SCAN_FMT, dev)(min(lines, 1 << 20), 256, stream, *args)
    else:
        get_kernel(src, "scan_outer", SCAN_FMT, dev)(min(-(-lines // 128), 1 << 20), 128, stream, *args)
    return out


def _group(D: int) -> tuple[int, int]:
    """(threads per row, block size) for a row of ``D`` elements."""
    if D <= 1024:
        return 32, 256
    return (128, 128) if D <= 8192 else (512, 512)


@cache
def _softmax_reg_shape(nv: int) -> tuple[int, int]:
    """(vectors per thread, threads per row) of softmax_reg for rows of ``nv`` vectors; (0, 0) when
    the row does not fit. Note [Softmax paths]: a warp or less per row with up to 8 vectors each
    first (no block-wide reduction), else up to SOFTMAX_REG_MAX_GROUP threads with 4 vectors each
    (fewer registers, more resident rows: H200 measurements)."""
    for regv, most in ((4, 32), (8, 32), (4, SOFTMAX_REG_MAX_GROUP)):
        group = 4
        while group * regv < nv and group < most:
            group *= 2
        if group * regv >= nv:
            return regv, group
    return 0, 0


@cache
def _smem_row_max(device_index: int) -> int:
    """Longest row (bytes) the shared-memory softmax caches: the opt-in limit less 1 KiB for the
    reductions' own shared memory."""
    from .driver import attribute

    return attribute("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", device_index) - 1024


# Note [Softmax paths]
# Rows of a contiguous dim take one of three kernels. Aligned rows of up to 1024 vectors (16 bytes)
# keep the row in the registers of a group of threads (softmax_reg: 4 to 32 lanes of a warp,
# several rows per block, or up to a 256-thread block per row; see _softmax_reg_shape), read once.
# Longer aligned rows that fit in shared memory get a block each (softmax_smem: read once into
# shared memory, as torch's SoftMaxForwardSmem). Anything else takes two passes with an online
# (max, sum) (softmax_inner; the second read mostly hits L2). A strided dim takes softmax_outer.
# Note [Row-kernel plans]
# softmax, its backward and layer_norm's forward and backward launch the same few geometries every
# step of a model, and their launch arguments (merged line dims, path, grid, block) depend only on
# metadata and the operands' 16-byte alignment. So each keeps a plan per (sizes, strides, dims,
# dtypes, device, alignment): a repeat call reads the data pointers, the stream, and launches.
# Inputs that need a contiguous copy first take the full path and store nothing. Bounded: each
# dict is cleared past 1024 keys.
_PLANS: dict = {}


def _keep(key, plan):
    if len(_PLANS) > 1024:
        _PLANS.clear()
    _PLANS[key] = plan
    return plan


def softmax_into(x: Tensor, out: Tensor, dim: int, log: bool) -> Tensor:
    """softmax (``log=False``) or log_softmax of ``x`` along ``dim`` into ``out``."""
    if out.numel() == 0:
        return out
    xp, op = x.data_ptr(), out.data_ptr()
    key = ("softmax", x._sizes, x._strides, out._strides, dim, log, x.dtype, out.dtype, x.device.index,
           not (xp | op) & 15)
    plan = _PLANS.get(key)
    if plan is None:
        x2, kept, D, ids, ods = _prepare(x, out, dim)
        plan = _softmax_plan(x2, out, kept, D, ids, ods, log)
        if x2 is x:
            _keep(key, plan)
        else:
            xp = x2.data_ptr()
    k, smem, grid, block, tail = plan
    stream = current_stream_handle(x.device.index)
    if smem:
        k.launch_smem(grid, block, smem, stream, xp, op, *tail)
    else:
        k(grid, block, stream, xp, op, *tail)
    return out


def _softmax_plan(x: Tensor, out: Tensor, kept, D: int, ids: int, ods: int, log: bool) -> tuple:
    """(kernel, dynamic shared memory or 0, grid, block, arguments after the two pointers)."""
    lines = math.prod(k[0] for k in kept)
    dev = x.device.index
    src = _cast_source("softmax.cu", x.dtype.name, out.dtype.name, LOG=int(log), SM_REGV=4)
    vec = 16 // x.dtype.itemsize
    nv = D // vec
    aligned = (ids == 1 and ods == 1 and D >= 16 and D % vec == 0 and x.data_ptr() % 16 == 0
               and out.data_ptr() % 16 == 0 and all(k[1] % vec == 0 and k[2] % vec == 0 for k in kept))
    regv, group = _softmax_reg_shape(nv)
    line_args = _line_args(kept)
    if aligned and group:
        src = _cast_source("softmax.cu", x.dtype.name, out.dtype.name, LOG=int(log), SM_REGV=regv)
        block = 256 if group <= 32 else group  # group_reduce spans the block beyond a warp
        grid = min(-(-lines // (block // group)), sm_count(dev) * 32)
        return get_kernel(src, "softmax_reg", LINES_FMT, dev), 0, grid, block, (lines, D, group, ids, ods, *line_args)
    if aligned and D * x.dtype.itemsize <= _smem_row_max(dev):
        block = min(SOFTMAX_SMEM_BLOCK if nv < 8192 else 1024, -(-nv // 32) * 32)
        grid = min(lines, sm_count(dev) * max(1, 2048 // block) * 4)
        return (get_kernel(src, "softmax_smem", LINES_FMT, dev), D * x.dtype.itemsize, grid, block,
                (lines, D, block, ids, ods, *line_args))
    if ids == 1 and ods == 1 and D >= 16:
        group, block = _group(D)
        grid = min(-(-lines // (block // group)), sm_count(dev) * 32)
        return get_kernel(src, "softmax_inner", LINES_FMT, dev), 0, grid, block, (lines, D, group, ids, ods, *line_args)
    return (get_kernel(src, "softmax_outer", LINES_FMT, dev), 0, min(-(-lines // 128), 1 << 20), 128,
            (lines, D, 0, ids, ods, *line_args))


def _ln_group(nv: int) -> tuple[int, int]:
    """(threads per row, block) of layer_norm_rows for rows of ``nv`` 16-byte vectors. H200,
    measured over rows of 768-16384 fp32/bf16 elements: a warp per row (four rows per 128-thread
    block) up to 256 vectors, else about four vectors per thread, at most 512 threads."""
    if nv <= 256:
        return 32, 128
    group = min(512, 1 << ((nv // 4).bit_length() - 1))
    return group, group


def layer_norm_into(x: Tensor, n_norm: int, weight, bias, eps: float, out: Tensor) -> Tensor:
    """layer_norm of ``x`` over its last ``n_norm`` dims into the contiguous ``out``."""
    if out.numel() == 0:
        return out
    x = x if x.is_contiguous() else x.contiguous()
    params = [t if t is None or t.is_contiguous() else t.contiguous() for t in (weight, bias)]
    w_dtype = next((t.dtype for t in params if t is not None), x.dtype)
    dev = x.device.index
    key = ("layer_norm", x._sizes, n_norm, x.dtype, w_dtype, dev)  # Note [Row-kernel plans]
    plan = _PLANS.get(key)
    if plan is None:
        D = math.prod(x._sizes[x.dim() - n_norm:])
        rows = x.numel() // D
        src = kernel_source("norm.cu", IN_T=CTYPES[x.dtype.name], W_T=CTYPES[w_dtype.name], ACC_T=acc_ctype(x.dtype))
        group, block = _ln_group(D // (16 // x.dtype.itemsize))
        grid = min(-(-rows // (block // group)), sm_count(dev) * 32)
        plan = _keep(key, (get_kernel(src, "layer_norm_rows", LN_FMT, dev), grid, block, rows, D, group))
    k, grid, block, rows, D, group = plan
    w, b = params
    k(grid, block, current_stream_handle(dev), x.data_ptr(), w.data_ptr() if w is not None else 0,
      b.data_ptr() if b is not None else 0, out.data_ptr(), rows, D, group, float(eps))
    return out


def softmax_backward_into(grad: Tensor, y: Tensor, dim: int, log: bool, res: Tensor) -> Tensor:
    """softmax / log_softmax backward along ``dim`` into ``res`` (one kernel over contiguous rows;
    another ``dim`` is moved last and copied contiguous first)."""
    if res.numel() == 0:
        return res
    if y.dim() and dim != y.dim() - 1:
        moved = res.movedim(dim, -1)
        tmp = softmax_backward_into(grad.movedim(dim, -1), y.movedim(dim, -1), y.dim() - 1, log,
                                    new_output(moved._sizes, res.dtype, res.device))
        moved.copy_(tmp)
        return res
    grad = grad if grad.is_contiguous() else grad.contiguous()
    y = y if y.is_contiguous() else y.contiguous()
    dev = y.device.index
    key = ("softmax_bwd", y._sizes, log, y.dtype, res.dtype, dev)  # Note [Row-kernel plans]
    plan = _PLANS.get(key)
    if plan is None:
        D = y._sizes[-1] if y.dim() else 1
        rows = y.numel() // D
        src = kernel_source("softmax_bwd.cu", IN_T=CTYPES[y.dtype.name], OUT_T=CTYPES[res.dtype.name],
                            ACC_T=acc_ctype(y.dtype), LOG=int(log))
        group, block = _ln_group(D // (16 // y.dtype.itemsize))
        grid = min(-(-rows // (block // group)), sm_count(dev) * 32)
        plan = _keep(key, (get_kernel(src, "softmax_bwd_rows", SM_BWD_FMT, dev), grid, block, rows, D, group))
    k, grid, block, rows, D, group = plan
    k(grid, block, current_stream_handle(dev), grad.data_ptr(), y.data_ptr(), res.data_ptr(), rows, D, group)
    return res


def layer_norm_backward_into(grad: Tensor, x: Tensor, n_norm: int, weight, eps: float, mask, dx: Tensor,
                             dw: Tensor, db: Tensor) -> None:
    """``_layer_norm_backward`` into the outputs the mask asks for (contiguous, from the Meta function).

    Note [Fused layer_norm backward]
    The decomposed backward (mean, var, rsqrt, xhat, two row means, ...) was about 16 launches and
    as many passes over the activations per layer_norm; here it is at most three: a group of
    threads per row recomputes mean and rstd (the forward keeps no statistics), sums g and g * xhat
    (g = grad * weight) and writes grad_input; a column pass sums grad * xhat and grad over chunks
    of rows (per-row statistics from the first kernel) into partial sums that a last kernel adds in
    a fixed order, so the result does not depend on scheduling.
    """
    D = math.prod(x._sizes[x.dim() - n_norm:])
    rows = math.prod(x._sizes[:x.dim() - n_norm])
    if rows == 0 or D == 0:
        for t in (dw, db):
            if t.numel():
                t.zero_()
        return
    x = x if x.is_contiguous() else x.contiguous()
    grad = grad if grad.is_contiguous() else grad.contiguous()
    if weight is not None and not weight.is_contiguous():
        weight = weight.contiguous()
    dev = x.device.index
    mask = tuple(mask)
    key = ("layer_norm_bwd", x._sizes, n_norm, x.dtype, weight.dtype if weight is not None else None, mask, dev)
    p = _PLANS.get(key)  # Note [Row-kernel plans]
    if p is None:
        p = _keep(key, _LnBackwardPlan(x, weight, mask, D, rows, dev))
    stream = current_stream_handle(dev)
    # one scratch buffer: per-row mean and rstd, then the column pass's partial sums (16-byte aligned)
    ws = workspace(p.ws_bytes, x.device) if p.ws_bytes else None
    base = ws.data_ptr() if ws is not None else 0
    mean_ptr = base if mask[1] else 0
    rstd_ptr = base + rows * p.acc_size if mask[1] else 0
    gp, xp = grad.data_ptr(), x.data_ptr()
    if p.k_rows is not None:
        p.k_rows(p.rows_grid, p.block, stream, gp, xp, weight.data_ptr() if weight is not None else 0,
                 dx.data_ptr() if mask[0] else 0, mean_ptr, rstd_ptr, rows, D, p.group, float(eps))
    if p.k_cols is not None:
        pw = base + p.stat_bytes
        pb = pw + p.chunks * D * p.acc_size
        p.k_cols(p.chunks * p.tiles, 256, stream, gp, xp, mean_ptr, rstd_ptr, pw, pb if mask[2] else 0, rows, D,
                 p.per_chunk, p.tiles)
        p.k_fin(-(-D // 256), 256, stream, pw if mask[1] else 0, pb if mask[2] else 0,
                dw.data_ptr() if mask[1] else 0, db.data_ptr() if mask[2] else 0, p.chunks, D)


class _LnBackwardPlan:
    """Kernels, launch shapes and scratch layout of :func:`layer_norm_backward_into` for one geometry."""

    __slots__ = ("acc_size", "stat_bytes", "ws_bytes", "k_rows", "rows_grid", "group", "block", "k_cols", "k_fin",
                 "chunks", "per_chunk", "tiles")

    def __init__(self, x: Tensor, weight, mask: tuple, D: int, rows: int, dev: int):
        acc = acc_ctype(x.dtype)
        self.acc_size = 8 if acc == "double" else 4
        w_dtype = weight.dtype if weight is not None else x.dtype
        src = kernel_source("norm.cu", IN_T=CTYPES[x.dtype.name], W_T=CTYPES[w_dtype.name], ACC_T=acc)
        self.stat_bytes = -(-2 * rows * self.acc_size // 16) * 16 if mask[1] else 0
        self.k_rows = self.rows_grid = self.group = self.block = None
        if mask[0] or mask[1]:
            self.group, self.block = _ln_group(D // (16 // x.dtype.itemsize))
            self.rows_grid = min(-(-rows // (self.block // self.group)), sm_count(dev) * 32)
            self.k_rows = get_kernel(src, "layer_norm_bwd_rows", LN_BWD_FMT, dev)
        self.k_cols = self.k_fin = None
        self.chunks = self.per_chunk = self.tiles = 0
        part_bytes = 0
        if mask[1] or mask[2]:
            self.tiles = -(-D // 32)
            chunks = max(1, min(-(-rows // 64), -(-2 * sm_count(dev) // self.tiles)))  # >= 64 rows a chunk
            self.per_chunk = -(-rows // chunks)
            self.chunks = -(-rows // self.per_chunk)
            part_bytes = 2 * self.chunks * D * self.acc_size
            self.k_cols = get_kernel(src, "layer_norm_bwd_cols", LN_COL_FMT, dev)
            self.k_fin = get_kernel(src, "layer_norm_bwd_finish", LN_FIN_FMT, dev)
        self.ws_bytes = self.stat_bytes + part_bytes


def cross_entropy_into(self: Tensor, target: Tensor, weight, reduction: int, ignore_index: int,
                       label_smoothing: float, prob: bool, out: Tensor) -> Tensor:
    """cross_entropy_loss (Note [cross_entropy on CUDA]) into ``out`` (allocated by the caller)."""
    class_dim = 0 if self.dim() == 1 else 1
    lp = softmax_into(self, new_output(self._sizes, self.dtype, self.device), class_dim, log=True)
    C = self._sizes[class_dim]
    S = math.prod(self._sizes[2:]) if self.dim() > 2 else 1
    M = (self.numel() // C) if C else (math.prod(target._sizes) if target._sizes else 1)
    if self.dim() == 1:
        M = 1
    target = target if target.is_contiguous() else target.contiguous()
    weight = weight if weight is None or weight.is_contiguous() else weight.contiguous()
    dev = self.device.index
    acc = acc_ctype(out.dtype)
    src = kernel_source("loss.cu", LP_T=CTYPES[self.dtype.name], TGT_T=CTYPES[target.dtype.name],
                        W_T=CTYPES[(weight.dtype if weight is not None else self.dtype).name], ACC_T=acc,
                        OUT_T=CTYPES[out.dtype.name], PROB=int(prob))
    terms = workspace(4 * max(M, 1) * 8, self.device) if reduction != 0 else None
    args = (lp.data_ptr(), target.data_ptr(), weight.data_ptr() if weight is not None else 0, out.data_ptr(),
            terms.data_ptr() if terms is not None else 0, M, C, S, int(ignore_index), float(label_smoothing),
            int(reduction))
    stream = current_stream_handle(dev)
    if M:
        get_kernel(src, "ce_terms", CE_FMT, dev)(min(-(-M // 256), 1 << 16), 256, stream, *args)
    if reduction != 0:
        get_kernel(src, "ce_finish", CE_FMT, dev)(1, 1024, stream, *args)
    return out


def normalization_sources():
    """(file, kernel names, source) of representative instantiations (NVRTC null test)."""
    for f in ("float32", "float16", "bfloat16", "float64"):
        for log in (0, 1):
            yield ("softmax.cu", ("softmax_inner", "softmax_reg", "softmax_smem"),
                   _cast_source("softmax.cu", f, f, LOG=log, SM_REGV=8))
        for mul, lse in ((0, 0), (1, 0), (0, 1)):
            yield "scan.cu", ("scan_inner", "scan_outer"), _cast_source("scan.cu", f, f, SCAN_MUL=mul, SCAN_LSE=lse)
        w = "float32" if f in ("float16", "bfloat16") else f
        yield "norm.cu", ("layer_norm_rows", "layer_norm_bwd_rows", "layer_norm_bwd_cols",
                          "layer_norm_bwd_finish"), kernel_source("norm.cu", IN_T=CTYPES[f], W_T=CTYPES[w],
                                                             ACC_T=acc_ctype(dt.to_dtype(f)))
        for tgt, prob in (("int64", 0), ("uint8", 0), (f, 1)):
            yield "loss.cu", ("ce_terms", "ce_finish"), kernel_source(
                "loss.cu", LP_T=CTYPES[f], TGT_T=CTYPES[tgt], W_T=CTYPES[f], ACC_T=acc_ctype(dt.to_dtype(f)),
                OUT_T=CTYPES[f], PROB=prob)
    for f, o in (("float32", "float32"), ("bfloat16", "bfloat16"), ("float32", "float16"), ("float64", "float64")):
        for log in (0, 1):
            yield "softmax_bwd.cu", ("softmax_bwd_rows",), kernel_source(
                "softmax_bwd.cu", IN_T=CTYPES[f], OUT_T=CTYPES[o], ACC_T=acc_ctype(dt.to_dtype(f)), LOG=log)
    yield ("softmax.cu", ("softmax_inner", "softmax_outer", "softmax_reg", "softmax_smem"),
           _cast_source("softmax.cu", "int64", "float32", LOG=0, SM_REGV=4))
    for f in ("int64", "int32", "uint8", "bool", "int8"):
        yield "scan.cu", ("scan_inner", "scan_outer"), _cast_source("scan.cu", f, "int64")
