"""Glue for the CUDA kernels in this folder: dtype instantiation, dim coalescing, launches.

Note [Transposed copy]
When the destination and the source are contiguous in different dims (``x.t().contiguous()``,
permutes, batched too), the elementwise copy reads or writes with a large stride and reaches a
fraction of the copy bandwidth.  ``copy_kernel`` then launches ``transpose.cu``: one block per
tile of the (X, Y) plane, X the dim where dst has stride 1 and Y the one where src has stride 1,
the other (at most 6) dims as a batch.  The tile goes through padded shared memory, loads
coalesced along Y and stores along X; same-dtype copies of elements under 8 bytes move 8 bytes
per access (``TR_VEC`` elements, at most 4, tiles of ``32 * TR_VEC``; 4 bytes with
``STRIDED_TRANSPOSE_BYTES=4``) when every pointer and stride allows it.  Tiny
planes (either side under 8) keep the elementwise path, where a tile would idle most threads.

Note [Kernel instantiation]
Each ``.cu`` file is a template over ``DST_T``/``SRC_T``/``IS_FLOAT`` macros.  A source is made
per dtype combination by prefixing ``#define`` lines, compiled once per arch (see
``compiler.py``) and loaded once per device (see ``launch.py``).
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

from ....dtypes import dtype as _dtype
from ..launch import get_kernel

__all__ = ["CTYPES", "COMPLEX_CTYPES", "ALL_CTYPES", "complex_header", "source", "coalesce", "launch_config",
           "copy_kernel", "fill_kernel", "arange_kernel", "random_kernel", "MAX_DIMS", "all_sources", "complex_sources",
           "transpose_source"]

HERE = Path(__file__).parent
MAX_DIMS = 8
CTYPES = {
    "uint8": "unsigned char", "int8": "signed char", "int16": "short", "int32": "int",
    "int64": "long long", "float16": "__half", "float32": "float", "float64": "double",
    "bool": "bool", "bfloat16": "__nv_bfloat16",
}
# Note [Complex C types]
# CTYPES lists the real dtypes only, as ``dtypes.all_dtypes`` does (Note [Complex dtypes]): it means "every
# dtype" to the kernel tables and their NVRTC tests (random, sort, scatter_reduce ... have no complex
# instantiations). The complex C types (complex.cuh, Note [Device complex type]) are COMPLEX_CTYPES;
# ALL_CTYPES is what instantiation looks names up in.
COMPLEX_CTYPES = {"complex64": "complex64_t", "complex128": "complex128_t"}
ALL_CTYPES = {**CTYPES, **COMPLEX_CTYPES}
COPY_FMT = "<QQqq8q8q8q"
FILL_FMT = "<Qqq8q8qdq"
ARANGE_FMT = "<Qqddqq"
RANDOM_FMT = "<QQqQQqddqQQ"


@cache
def _text(name: str) -> str:
    return (HERE / name).read_text()


def complex_header(*names) -> str:
    """``complex.cuh`` and ``complex_inverse_trig.cuh`` (with newlines) when a dtype name among ``names`` is
    complex, else "": real-dtype sources stay byte for byte what they were (their cache keys too)."""
    if not any(n in COMPLEX_CTYPES for n in names):
        return ""
    return _text("complex.cuh") + "\n" + _text("complex_inverse_trig.cuh") + "\n"


@cache
def source(file: str, dst: str, src: str | None = None, headers: tuple = ()) -> str:
    """The source of ``file`` instantiated for dtype names ``dst`` (and ``src``), after ``headers`` (.cuh files)."""
    lines = [f"#define DST_T {ALL_CTYPES[dst]}",
             f"#define IS_FLOAT {1 if dst in ('float16', 'float32', 'float64', 'bfloat16') else 0}"]
    if src is not None:
        lines.append(f"#define SRC_T {ALL_CTYPES[src]}")
    own = "".join(_text(h) + "\n" for h in headers) + _text(file)
    return "\n".join(lines) + "\n" + _text("common.cuh") + "\n" + complex_header(dst, src) + own


def _dtype_of(name: str) -> _dtype:
    from .... import dtypes

    return getattr(dtypes, name)


def all_sources():
    """Every (file, kernel names, source) the backend can compile (for the NVRTC null test)."""
    for d in CTYPES:
        yield "fill.cu", ("fill", "arange"), source("fill.cu", d)
        yield "random.cu", ("philox_fill",), source("random.cu", d)
        for s in CTYPES:
            yield "copy.cu", ("strided_copy", "contiguous_copy"), source("copy.cu", d, s)
        for vec in {1: (1, 2, 4), 2: (1, 2, 4), 4: (1, 2)}.get(_dtype_of(d).itemsize, (1,)):
            yield "transpose.cu", ("transpose_copy",), transpose_source(d, d, vec)
    yield "transpose.cu", ("transpose_copy",), transpose_source("float32", "bfloat16", 1)
    yield from complex_sources()
    for d in CTYPES:  # the indexing kernels (kernels/indexing_ops.py, sort_ops.py)
        yield "index.cu", ("index_gather", "index_scatter", "index_scatter_add", "index_bounds"), \
            source("index.cu", d, d)
        yield "sort.cu", ("sort_rows_shared", "sort_init", "sort_chunk_shared", "sort_step", "sort_finish"), \
            source("sort.cu", d)
        yield "misc.cu", ("triangle", "eye", "linspace", "one_hot", "minmax"), source("misc.cu", d)
        yield "cat.cu", ("cat_copy",), source("cat.cu", d)
        if d != "bool":
            yield "search.cu", ("searchsorted",), source("search.cu", d)
    from .optim_ops import MT_SIZES, mt_source  # the multi-tensor optimizer / foreach kernels

    for d in ("float32", "float16", "bfloat16", "float64"):
        for m in MT_SIZES:
            yield "multi_tensor.cu", ("fused_adam", "fused_adam_plain", "fused_sgd", "foreach_apply"), mt_source(d, m)
    for half in ("float16", "bfloat16"):  # 16-bit floats accumulate in float32
        yield "index.cu", ("index_scatter_add",), source("index.cu", "float32", half)


def complex_sources():
    """The copy, transpose and cat kernels of the complex dtypes: casts to and from every dtype."""
    for c in COMPLEX_CTYPES:
        for other in ALL_CTYPES:
            yield "copy.cu", ("strided_copy", "contiguous_copy"), source("copy.cu", c, other)
            yield "transpose.cu", ("transpose_copy",), transpose_source(c, other, 1)
            if other not in COMPLEX_CTYPES:
                yield "copy.cu", ("strided_copy", "contiguous_copy"), source("copy.cu", other, c)
                yield "transpose.cu", ("transpose_copy",), transpose_source(other, c, 1)
        yield "cat.cu", ("cat_copy",), source("cat.cu", c)


def coalesce(sizes, *stride_sets):
    """TensorIterator's dimension reduction: drop size-1 dims, order by the first operand's
    strides (largest first), merge dims that are contiguous for every operand."""
    dims = [d for d, n in enumerate(sizes) if n != 1]
    first = stride_sets[0]
    dims.sort(key=lambda d: -abs(first[d]))
    out_sizes: list[int] = []
    out_strides: list[list[int]] = [[] for _ in stride_sets]
    for d in dims:
        n = sizes[d]
        if out_sizes and all(st[-1] == ss[d] * n for st, ss in zip(out_strides, stride_sets)):
            out_sizes[-1] *= n
            for st, ss in zip(out_strides, stride_sets):
                st[-1] = ss[d]
            continue
        out_sizes.append(n)
        for st, ss in zip(out_strides, stride_sets):
            st.append(ss[d])
    if not out_sizes:
        out_sizes = [1]
        out_strides = [[1] for _ in stride_sets]
    return out_sizes, out_strides


def _pad(v):
    return list(v) + [0] * (MAX_DIMS - len(v))


def launch_config(n: int) -> tuple[int, int]:
    return min((n + 255) // 256, 1 << 16), 256


# Note [Copy plans]: a copy's coalesced shape and strides depend only on (sizes, dst strides, src
# strides), and a model copies the same few layouts every step, so they are computed once.
_copy_plans: dict = {}
_COPY_PLANS_MAX = 4096


def _copy_plan(sizes, dst_strides, src_strides):
    """``(n, shape, dst strides, src strides, padded kernel arguments)`` or None for an empty copy."""
    key = (tuple(sizes), tuple(dst_strides), tuple(src_strides))
    plan = _copy_plans.get(key, _copy_plans)
    if plan is not _copy_plans:
        return plan
    n = 1
    for s in sizes:
        n *= s
    plan = None
    if n:
        shape, (ds, ss) = coalesce(sizes, dst_strides, src_strides)
        if len(shape) > MAX_DIMS:
            raise RuntimeError(f"strided CUDA copy supports at most {MAX_DIMS} non-mergeable dims, "
                               f"got {len(shape)}")
        plan = (n, shape, ds, ss, (n, len(shape), *_pad(shape), *_pad(ds), *_pad(ss)))
    if len(_copy_plans) >= _COPY_PLANS_MAX:
        _copy_plans.clear()
    _copy_plans[key] = plan
    return plan


def copy_kernel(dev: int, dst_dtype: _dtype, src_dtype: _dtype, dst_ptr: int, src_ptr: int, sizes,
                dst_strides, src_strides, stream: int) -> None:
    """``dst = cast(src)`` elementwise over ``sizes`` (strides in elements; broadcast = stride 0)."""
    plan = _copy_plan(sizes, dst_strides, src_strides)
    if plan is None:
        return
    n, shape, ds, ss, args = plan
    if _transposed_copy(dev, dst_dtype, src_dtype, dst_ptr, src_ptr, shape, ds, ss, stream):
        return
    src_text = source("copy.cu", dst_dtype.name, src_dtype.name)
    name = "contiguous_copy" if len(shape) == 1 and ds[0] == 1 and ss[0] == 1 else "strided_copy"
    k = get_kernel(src_text, name, COPY_FMT, dev)
    grid, block = launch_config(n)
    k(grid, block, stream, dst_ptr, src_ptr, *args)


TRANSPOSE_FMT = "<QQqqqqqqq6q6q6q"
_TR_BATCH = 6


# Bytes per vector access of the transposed copy (8, or 4 to compare; tiles stay <= 128 wide).
_TR_BYTES = int(os.environ.get("STRIDED_TRANSPOSE_BYTES", "8"))


@cache
def transpose_source(dst: str, src: str, vec: int) -> str:
    word = "uint2" if vec * _dtype_of(src).itemsize == 8 else "unsigned"
    return f"#define TR_VEC {vec}\n#define TR_WORD {word}\n" + source("transpose.cu", dst, src)


def _transposed_copy(dev, dst_dtype, src_dtype, dst_ptr, src_ptr, shape, ds, ss, stream) -> bool:
    """Launch the tiled transpose for a coalesced copy when it applies (Note [Transposed copy])."""
    if len(shape) < 2 or ds[-1] != 1 or ss[-1] == 1 or len(shape) > _TR_BATCH + 2:
        return False
    y = next((k for k in range(len(shape) - 1) if ss[k] == 1), None)
    if y is None or shape[-1] < 8 or shape[y] < 8:
        return False
    nx, ny = shape[-1], shape[y]
    rest = [k for k in range(len(shape) - 1) if k != y]
    bs = [shape[k] for k in rest]
    bd = [ds[k] for k in rest]
    bsrc = [ss[k] for k in rest]
    vec = 1
    size = dst_dtype.itemsize
    if dst_dtype is src_dtype and size < _TR_BYTES:
        v = min(_TR_BYTES // size, 4)
        w = v * size
        if (dst_ptr % w == 0 and src_ptr % w == 0 and ss[-1] % v == 0 and ds[y] % v == 0
                and all(s % v == 0 for s in bd + bsrc)):
            vec = v
    tile = 32 * vec
    tiles_x, tiles_y = -(-nx // tile), -(-ny // tile)
    blocks = tiles_x * tiles_y
    for n in bs:
        blocks *= n
    if blocks >= 1 << 31:
        return False
    pad = [0] * (_TR_BATCH - len(bs))
    k = get_kernel(transpose_source(dst_dtype.name, src_dtype.name, vec), "transpose_copy", TRANSPOSE_FMT,
                   dev)
    k(blocks, 256, stream, dst_ptr, src_ptr, nx, ny, ss[-1], ds[y], tiles_x, tiles_y, len(bs),
      *bs, *pad, *bd, *pad, *bsrc, *pad)
    return True


def fill_kernel(dev: int, dtype: _dtype, ptr: int, sizes, strides, value, stream: int) -> None:
    n = 1
    for s in sizes:
        n *= s
    if n == 0:
        return
    shape, (st,) = coalesce(sizes, strides)
    k = get_kernel(source("fill.cu", dtype.name), "fill", FILL_FMT, dev)
    if dtype.is_floating_point:
        fv, iv = float(value), 0
    else:
        fv, iv = 0.0, int(value)
    grid, block = launch_config(n)
    k(grid, block, stream, ptr, n, len(shape), *_pad(shape), *_pad(st), fv, iv)


def arange_kernel(dev: int, dtype: _dtype, ptr: int, n: int, start, step, stream: int) -> None:
    if n == 0:
        return
    k = get_kernel(source("fill.cu", dtype.name), "arange", ARANGE_FMT, dev)
    if dtype.is_floating_point:
        vals = (float(start), float(step), 0, 0)
    else:
        vals = (0.0, 0.0, int(start), int(step))
    grid, block = launch_config(n)
    k(grid, block, stream, ptr, n, *vals)


def random_kernel(dev: int, dtype: _dtype, ptr: int, n: int, seed: int, offset: int, mode: int,
                  a: float = 0.0, b: float = 0.0, lo: int = 0, rng: int = 1, prob_ptr: int = 0,
                  stream: int = 0, state_ptr: int = 0) -> None:
    """Philox fill of a contiguous buffer (mode 0 uniform, 1 normal, 2 integers, 3 bernoulli);
    ``state_ptr``: device {seed, base offset} read at run time, ``offset`` then added to the base."""
    if n == 0:
        return
    k = get_kernel(source("random.cu", dtype.name), "philox_fill", RANDOM_FMT, dev)
    grid, block = launch_config(n)
    k(grid, block, stream, ptr, prob_ptr, n, seed & ((1 << 64) - 1), offset, mode, float(a), float(b),
      int(lo), int(rng), state_ptr)
