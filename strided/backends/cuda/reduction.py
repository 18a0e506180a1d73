"""The CUDA reduction engine: any set of reduced dims, any input layout, deterministic.

Note [CUDA reduction engine]
A reduction maps an input to a contiguous output allocated by the Meta function. The input's dims
split into *kept* dims (the output's, in logical order, so output element ``o`` starts at
``offset_of(o, kept)``) and *reduced* dims, each group coalesced (size-1 dims dropped, neighbours
merged when their strides allow). Reduced dims keep their logical order for index-returning ops
(argmax, max.dim: the index is the logical position) and are ordered by stride otherwise.

Two paths (kernels/reduce.cu):
- *inner*: the reduced elements are contiguous (one dim, stride 1). A warp (short rows) or a
  512-thread block (long rows) reduces one output with 16-byte loads and warp shuffles.
- *outer*: anything else, tuned for a strided reduced dim with contiguous outputs. A block holds
  ``bx`` adjacent outputs (threads along the contiguous output dim, so loads coalesce) times
  ``512 / bx`` threads walking down each column; the column partials combine through shared
  memory. Large aligned inputs load 4 adjacent columns per thread as one vector
  (``reduce_outer_vec``). Large inputs whose outputs are not contiguous in memory are first
  copied contiguous.
When there are too few outputs to fill the GPU, each output's reduced range is cut into
``splits`` chunks: the kernels write partial *states* (sum, Welford triple, (value, index), ...)
to a workspace and ``reduce_combine`` folds them in split order. Nothing uses atomics, so the
same input gives the same bits on every run. ``R == 0`` runs only the combine kernel, which
writes the identity (sum 0, prod 1, all True, mean/var NaN...).

Inputs are rounded to the result dtype first (``CAST_T``, as the CPU kernels' ``self.to(dtype)``)
and accumulated in the CPU kernel's compute dtype: float for float16/bfloat16, the dtype itself
otherwise (float32 sums in float32, float64 in double, integral sums in int64).
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path

from ... import dtypes as dt
from ...tensor import Tensor, make_tensor
from .. import allocate as _allocate
from .kernels import CTYPES, MAX_DIMS
from .launch import get_kernel
from .streams import current_stream_handle

__all__ = ["OPS", "reduce", "acc_ctype", "sm_count", "kernel_source", "coalesce_ordered",
           "workspace", "reduce_sources"]

HERE = Path(__file__).parent / "kernels"
OPS = {"sum": 0, "mean": 1, "prod": 2, "amax": 3, "amin": 4, "argmax": 5, "argmin": 6, "max_dim": 7,
       "min_dim": 8, "var": 9, "std": 10, "norm": 11, "all": 12, "any": 13, "logsumexp": 14}
RED_FMT = "<QQQQqqqqqqq" + "q8q8q" * 2 + "dq"
STATE_BYTES = 32  # an upper bound of sizeof(State) over every reducer
_BLOCK = 512
INNER_WARP_MAX = 4096  # rows up to this long get a warp each; longer ones too when there are many rows
COL_VEC = 4  # RED_CV of reduce.cu
INNER_WARPS_PER_SM = 16  # inner path: split rows across warps until this many warps per SM (a split costs a
# workspace and a combine launch: H200, 4096 bf16 rows of 4096: 16 beat 64)
OUTER_BLOCKS_PER_SM = 1  # outer path: split columns until this many blocks per SM (H200 fp32 16384^2: 1 beat 2-4)
OUTER_NO_SPLIT_BYTES = 256 << 10  # outer path: no split while one block reads at most this much (a split's
# workspace and combine launch cost ~20 us of host time, more than the few us of GPU time it saves on
# small inputs such as the bias gradients of a training step: (1024, 768) fp32 summed over rows)


@cache
def _text(name: str) -> str:
    return (HERE / name).read_text()


def acc_ctype(d: dt.dtype) -> str:
    """C type the CPU kernels compute ``d`` results in (float for the half types)."""
    return "float" if d in (dt.float16, dt.bfloat16) else CTYPES[d.name]


_ONE_WORD = {"long long": "i64", "unsigned char": "u8_t", "signed char": "i8_t"}


@cache
def kernel_source(file: str, **defines) -> str:
    """``common.cuh`` + ``reduce_ops.cuh`` + ``file`` with ``#define`` lines for ``defines``
    (C types spelled as one word, so that ``T(0)`` parses)."""
    head = "".join(f"#define {k} {_ONE_WORD.get(v, v)}\n" for k, v in defines.items())
    return head + _text("common.cuh") + "\n" + _text("reduce_ops.cuh") + "\n" + _text(file)


@cache
def _red_source(op: str, in_name: str, cast_name: str, acc: str, out_name: str) -> str:
    return kernel_source("reduce.cu", IN_T=CTYPES[in_name], CAST_T=CTYPES[cast_name],
                         CAST_SAME=int(in_name == cast_name), ACC_T=acc, OUT_T=CTYPES[out_name], OP=OPS[op])


def reduce_sources():
    """(file, kernel names, source) of representative reduce.cu instantiations (NVRTC null test):
    every reducer on every floating dtype, and the integral / bool forms the ops use."""
    names = ("reduce_inner", "reduce_outer", "reduce_combine", "reduce_outer_vec")
    floats = ("float32", "float16", "bfloat16", "float64")
    for op in ("sum", "mean", "prod", "amax", "amin", "var", "std", "norm", "logsumexp"):
        for f in floats:
            yield "reduce.cu", names, _red_source(op, f, f, acc_ctype(dt.to_dtype(f)), f)
    for op in ("argmax", "argmin", "max_dim", "min_dim"):
        for f in ("float32", "bfloat16", "int64", "uint8"):
            out = "int64" if op.startswith("arg") else f
            yield "reduce.cu", names, _red_source(op, f, f, acc_ctype(dt.to_dtype(f)), out)
    for f in ("int32", "bool"):
        for op in ("sum", "prod"):
            yield "reduce.cu", names, _red_source(op, f, "int64", "long long", "int64")
    yield "reduce.cu", names, _red_source("amax", "int8", "int8", "signed char", "int8")
    for f in ("float32", "bool", "uint8"):
        for op in ("all", "any"):
            yield "reduce.cu", names, _red_source(op, f, f, "bool", "uint8" if f == "uint8" else "bool")
    yield "reduce.cu", names, _red_source("sum", "float32", "int32", "int", "int32")
    yield "reduce.cu", names, _red_source("logsumexp", "int64", "float32", "float", "float32")


@cache
def sm_count(device_index: int) -> int:
    from .device import get_device_properties

    return get_device_properties(device_index).multi_processor_count


def coalesce_ordered(pairs):
    """Merge (size, stride) pairs, outermost first, keeping their order; drops size-1 dims."""
    out: list[list[int]] = []
    for n, s in pairs:
        if n == 1:
            continue
        if out and out[-1][1] == s * n:
            out[-1][0] *= n
            out[-1][1] = s
        else:
            out.append([n, s])
    return out


def workspace(nbytes: int, device) -> Tensor:
    """A scratch buffer from the caching allocator (freed with the returned tensor)."""
    return make_tensor(_allocate(max(nbytes, 1), device), 0, (max(nbytes, 1),), (1,), dt.uint8)


def _pow2(n: int) -> int:
    return 1 << max(0, (int(n) - 1).bit_length())


def _pad(v):
    v = list(v)
    return v + [0] * (MAX_DIMS - len(v))


def _split(R: int, want: int, min_chunk: int, vec: int) -> tuple[int, int]:
    """(splits, chunk): at most ``want`` chunks of at least ``min_chunk`` elements."""
    splits = max(1, min(want, R // max(min_chunk, 1)))
    chunk = -(-R // splits)
    chunk = -(-chunk // vec) * vec
    return -(-R // chunk), chunk


def plan(sizes, strides, dimset, ordered: bool):
    """(kept, reduced, R, inner path?, better copied contiguous?) for Note [CUDA reduction engine]."""
    kept = coalesce_ordered([(n, s) for d, (n, s) in enumerate(zip(sizes, strides)) if d not in dimset])
    red = [(n, s) for d, (n, s) in enumerate(zip(sizes, strides)) if d in dimset]
    if not ordered:
        red.sort(key=lambda p: -abs(p[1]))
    red = coalesce_ordered(red)
    R = math.prod(n for n, _ in red)
    inner = len(red) == 1 and red[0][1] == 1 and R >= 16
    contiguous_cols = bool(kept) and kept[-1][1] == 1
    copy = len(kept) > MAX_DIMS or len(red) > MAX_DIMS or not (inner or contiguous_cols)
    return kept, red, R, inner, copy


def _vector_columns(x: Tensor, kept, red) -> bool:
    """Whether the outer path can load COL_VEC adjacent outputs' elements as one vector: one
    reduced dim, groups of COL_VEC columns inside the contiguous kept dim, aligned pointer and
    strides (large inputs only)."""
    return (len(red) == 1 and bool(kept) and kept[-1][1] == 1 and kept[-1][0] % COL_VEC == 0
            and all(s % COL_VEC == 0 for _, s in kept[:-1]) and red[0][1] % COL_VEC == 0
            and x.data_ptr() % (COL_VEC * x.dtype.itemsize) == 0 and x.numel() >= (1 << 20))


# Note [Reduction plan memo]
# A reduction's launch geometry (path, kernels, grid, block, splits, the dims part of the arguments)
# depends only on metadata: the op and dtypes, the input's sizes and strides, the reduced dims, the
# output's size, norm's p / var's correction, the device, and (for the vectorized outer path) whether
# the input's address is aligned. So the first call with a given key plans as before and later ones
# read the plan: one dict lookup instead of coalescing and sizing again (a training step reduces
# about 50 times, most of them bias gradients). A plan that first copies the input contiguous is not
# kept. Bounded: cleared past 4096 keys.
_PLANS: dict = {}


def reduce(op: str, x: Tensor, out: Tensor, dims, *, cast: dt.dtype | None = None, acc: str | None = None,
           out_idx: Tensor | None = None, arg: float = 0.0, mode: int = 0) -> Tensor:
    """Reduce ``x`` over ``dims`` into the contiguous ``out`` with reducer ``op``.

    ``cast`` is the dtype inputs are rounded to first (default: ``x``'s), ``acc`` the C type to
    accumulate in (default: the CPU compute type of ``cast``); ``out_idx`` receives max.dim's
    indices; ``arg``/``mode`` are norm's p (Note [norm modes]) or var's correction.
    """
    n_out = out.numel()
    if n_out == 0:
        return out
    dev = x.device.index
    ptr = x.data_ptr()
    key = (op, x.dtype, cast, acc, out.dtype, x._sizes, x._strides, tuple(dims), n_out, arg, mode, dev,
           ptr % (COL_VEC * x.dtype.itemsize) == 0)
    plan = _PLANS.get(key)
    if plan is None:
        x, plan, keep = _plan_launch(op, x, out.dtype, n_out, dims, cast, acc, arg, mode, dev)
        ptr = x.data_ptr()
        if keep:
            if len(_PLANS) > 4096:
                _PLANS.clear()
            _PLANS[key] = plan
    k, grid, block, tail, k2, grid2, ws_bytes = plan
    stream = current_stream_handle(dev)
    optr = out.data_ptr()
    iptr = out_idx.data_ptr() if out_idx is not None else 0
    ws = workspace(ws_bytes, x.device) if ws_bytes else None  # freed (stream-ordered) after both launches
    wptr = ws.data_ptr() if ws is not None else 0
    k(grid, block, stream, ptr, optr, iptr, wptr, *tail)
    if k2 is not None:
        k2(grid2, 256, stream, ptr, optr, iptr, wptr, *tail)
    return out


def _plan_launch(op, x, out_dtype, n_out, dims, cast, acc, arg, mode, dev):
    """``(x, plan, keep)`` for :func:`reduce` (Note [CUDA reduction engine]): ``x``, copied contiguous
    when its layout calls for it (then ``keep`` is False); ``plan`` = (kernel, grid, block, arguments
    after the four pointers, combine kernel or None, its grid, workspace bytes)."""
    cast = cast or x.dtype
    acc = acc or acc_ctype(cast)
    ordered = op in ("argmax", "argmin", "max_dim", "min_dim")
    src = _red_source(op, x.dtype.name, cast.name, acc, out_dtype.name)
    dimset = set(dims) if x.dim() else set()
    kept, red, R, inner, copy = plan(x._sizes, x._strides, dimset, ordered)
    keep = True
    if copy and (len(kept) > MAX_DIMS or len(red) > MAX_DIMS or (x.numel() >= (1 << 18) and not x.is_contiguous())):
        x = x.contiguous()
        keep = False
        kept, red, R, inner, _ = plan(x._sizes, x._strides, dimset, ordered)
    if len(kept) > MAX_DIMS or len(red) > MAX_DIMS:
        raise RuntimeError(f"strided CUDA reductions support at most {MAX_DIMS} non-mergeable kept and reduced "
                           f"dim groups, got {len(kept)} and {len(red)}")
    dims_part = (len(kept), *_pad(n for n, _ in kept), *_pad(s for _, s in kept),
                 len(red), *_pad(n for n, _ in red), *_pad(s for _, s in red), float(arg), int(mode))
    if R == 0:
        k = get_kernel(src, "reduce_combine", RED_FMT, dev)
        return x, (k, min(-(-n_out // 256), 65535), 256, (n_out, 0, 0, 0, 0, 1, 0, *dims_part), None, 0, 0), keep
    sms = sm_count(dev)
    vec = 16 // x.dtype.itemsize
    if inner:
        group = 32 if R <= INNER_WARP_MAX or n_out >= sms * 4 else _BLOCK  # H200: warps won at 16384 x 16384
        block = 256 if group == 32 else _BLOCK
        per_block = block // group
        want = -(-(sms * (INNER_WARPS_PER_SM if group == 32 else 4)) // n_out)
        splits, chunk = _split(R, want, group * vec * 4, vec)
        name, ws_os, ws_ss = "reduce_inner", splits, 1
        grid = min(-(-(n_out * splits) // per_block), sms * 32)
    else:
        vec_cols = _vector_columns(x, kept, red)
        cols = n_out // COL_VEC if vec_cols else n_out
        group = min(32, _pow2(cols))
        by = max(min(_BLOCK // group, _pow2(R)), max(1, 32 // group))
        block = group * by
        colblocks = -(-cols // group)
        if R * group * (COL_VEC if vec_cols else 1) * x.dtype.itemsize <= OUTER_NO_SPLIT_BYTES:
            splits, chunk = 1, R
        else:
            want = -(-(sms * OUTER_BLOCKS_PER_SM) // colblocks)
            splits, chunk = _split(R, want, by * 16, 1)
        name, ws_os, ws_ss = ("reduce_outer_vec" if vec_cols else "reduce_outer"), 1, n_out
        grid = min(colblocks * splits, sms * 64)
    k = get_kernel(src, name, RED_FMT, dev)
    tail = (n_out, R, splits, chunk, group, ws_os, ws_ss, *dims_part)
    if splits > 1:
        k2 = get_kernel(src, "reduce_combine", RED_FMT, dev)
        return x, (k, grid, block, tail, k2, min(-(-n_out // 256), 65535), n_out * splits * STATE_BYTES), keep
    return x, (k, grid, block, tail, None, 0, 0), keep
