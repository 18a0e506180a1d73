"""Launch helpers for the indexing kernels (index.cu, sort.cu, misc.cu, cat.cu): device temporaries,
int64 index uploads, bounds checks read back once, the offset-indexing launcher, and the
accumulation target of the scatter-adds.

Note [Offset indexing]
index_select, gather, embedding and index.Tensor all read ``a[i] = b[offset(i)]`` over an
iteration shape (the output's): ``offset(i)`` is ``b_strides . coords(i)`` plus, for each int64
index array, ``idx[k][idx_strides[k] . coords(i)] * idx_bstride[k]``.  scatter, scatter_add,
index_add and index_put run the same map the other way, ``b[offset(i)] (+)= a[i]``.  The host
only chooses strides: a dim supplied by an index gets b-stride 0, and index arrays are broadcast
over the iteration shape with stride 0.  One kernel per direction covers every op.

Note [CUDA index bounds]
An out-of-range index must raise the CPU kernel's error, never touch memory outside the tensor.
The main kernels check every index they read and skip such elements, so no launch can read or
write out of range, and report the bad value without synchronizing (Note [Deferred index errors]
in ``index_errors.py``): the CPU kernel's exception is raised at the next synchronizing call
(torch's CUDA kernels device-assert instead, which leaves the context unusable; here the context
stays usable). Where no main launch runs (an empty result) the indices are checked at once
(``first_bad``: ``index_bounds``, an atomicMin of the first bad position into a small buffer,
read back with one device-to-host copy, which synchronizes the stream).
A stream under CUDA graph capture cannot synchronize, so there the check kernel traps on a bad
index instead (``index_bounds_trap``): a replay with an out-of-range index fails like torch's
device-side assert, at the next synchronization, and still never touches memory out of range.

Note [CUDA accumulation]
scatter_add, index_add and index_put(accumulate=True) add with atomics.  Integer and bool adds
are exact in any order, so they are deterministic; floating-point adds of duplicate indices land
in a run-dependent order (results may differ in the last bits between runs, as torch's CUDA
kernels).  float16/bfloat16 accumulate in a float32 copy and are rounded once at the end, as
the CPU kernels do.  With ``strided.use_deterministic_algorithms(True)`` the floating-point cases
raise torch's error instead.
"""

from __future__ import annotations

import numpy as np

from .... import dtypes as dt
from ....device import CPU
from ....tensor import Tensor
from ...cpu.common import as_numpy
from ...meta.common import new_output
from .. import driver, index_errors
from ..capture import captures_underway, stream_is_capturing
from ..copies import copy_ as copy_impl
from ..driver import check, cu
from ..launch import get_kernel
from ..streams import current_stream_handle
from ..sync_debug import stream_synchronize
from . import MAX_DIMS, copy_kernel, fill_kernel, launch_config, source

__all__ = [
    "stream", "run", "to_cuda_i64", "to_host", "first_bad", "read_i64", "index_run", "IDX_MAX", "copy_into",
    "deferred_check", "deferred_checks", "check_deferred",
    "scalar_tensor", "deterministic_check", "Target",
]

IDX_MAX = 8
INDEX_FMT = "<QQqq8q8q8qq8Q64q8q8qqdqQq"
BOUNDS_FMT = "<QQqqq"
_HALF = (dt.float16, dt.bfloat16)


def stream(t: Tensor) -> int:
    return current_stream_handle(t.device.index)


def run(file: str, dtype, name: str, fmt: str, dev: int, n: int, *values, src_dtype=None, grid=None,
        block=None) -> None:
    """Launch ``name`` of ``file`` (instantiated for ``dtype``) over ``n`` elements."""
    k = get_kernel(source(file, dtype.name, None if src_dtype is None else src_dtype.name), name, fmt, dev)
    g, b = launch_config(n)
    k(grid or g, block or b, current_stream_handle(dev), *values)


def to_cuda_i64(t: Tensor, device) -> Tensor:
    """``t`` (CPU or CUDA, int32/int64) as a contiguous int64 tensor on ``device``."""
    if t.device is device and t.dtype is dt.int64 and t.is_contiguous():
        return t
    out = new_output(t._sizes, dt.int64, device)
    if out.numel():
        copy_impl(out, t)
    return out


def to_host(t: Tensor) -> np.ndarray:
    """A CUDA tensor's values as a NumPy array (synchronizes)."""
    if t.device is CPU:
        return as_numpy(t)
    out = new_output(t._sizes, t.dtype, CPU)
    if out.numel():
        copy_impl(out, t)
    return as_numpy(out)


def read_i64(ptr: int, dev: int, count: int = 1) -> np.ndarray:
    host = np.empty(count, dtype=np.int64)
    s = current_stream_handle(dev)
    driver.ensure_context(dev)
    check(cu().cuMemcpyDtoHAsync(host.ctypes.data, ptr, 8 * count, s))
    stream_synchronize(s, dev)  # Note [Synchronizing calls]
    return host


def first_bad(device, checks) -> list:
    """For each ``(int64 CUDA tensor, lo, hi)``: the first value outside ``[lo, hi)``, or None.

    One launch per array and a single read-back (Note [CUDA index bounds])."""
    if not checks:
        return []
    dev = device.index
    s = current_stream_handle(dev)
    if captures_underway() and stream_is_capturing(s):
        for idx, lo, hi in checks:
            n = idx.numel()
            if n:
                run("index.cu", dt.int64, "index_bounds_trap", BOUNDS_FMT, dev, n, idx.data_ptr(), 0, n, lo, hi,
                    src_dtype=dt.int64)
        return [None] * len(checks)
    buf = new_output((len(checks),), dt.int64, device)
    driver.ensure_context(dev)
    check(cu().cuMemsetD8Async(buf.data_ptr(), 0xFF, 8 * len(checks), s))
    for k, (idx, lo, hi) in enumerate(checks):
        n = idx.numel()
        if n:
            run("index.cu", dt.int64, "index_bounds", BOUNDS_FMT, dev, n, idx.data_ptr(),
                buf.data_ptr() + 8 * k, n, lo, hi, src_dtype=dt.int64)
    pos = read_i64(buf.data_ptr(), dev, len(checks))
    out = []
    for (idx, _, _), p in zip(checks, pos):
        out.append(None if p == -1 else int(read_i64(idx.data_ptr() + 8 * int(p), dev)[0]))
    return out


def _pad(v, n=MAX_DIMS):
    return list(v) + [0] * (n - len(v))


def deferred_check(device, idx: Tensor, size: int, exc_type: type, message: str, op: str) -> tuple[int, int]:
    """The ``err`` argument of :func:`index_run` for indices valid in ``[0, size)`` (Note [Deferred
    index errors]); on a stream under graph capture the trapping check runs instead and nothing is
    reported (Note [CUDA index bounds])."""
    return deferred_checks(device, [(idx, 0, size, message)], exc_type, op)


def deferred_checks(device, checks, exc_type: type, op: str) -> tuple[int, int]:
    """:func:`deferred_check` for a launch with several index arrays: ``checks`` holds, per array in
    ``index_run``'s order, ``(int64 CUDA array, lo, hi, message)`` (valid: ``lo <= v < hi``)."""
    dev = device.index
    if captures_underway() and stream_is_capturing(current_stream_handle(dev)):
        first_bad(device, [(idx, lo, hi) for idx, lo, hi, _ in checks])
        return 0, 0
    return index_errors.expect(dev, exc_type, [m for _, _, _, m in checks], op)


REPORT_FMT = "<QQqqqq"


def check_deferred(idx: Tensor, lo: int, hi: int, exc_type: type, message: str, op: str) -> None:
    """Check that every value of the int64 CUDA tensor ``idx`` lies in ``[lo, hi)`` without a sync: a bad one is
    reported as ``exc_type(message)`` (``{index}`` standing for the value) at the next synchronizing call, as
    the indexing kernels report theirs (Note [Deferred index errors]); under graph capture a bad one traps."""
    n = idx.numel()
    if not n:
        return
    idx = to_cuda_i64(idx, idx.device)
    dev = idx.device.index
    if captures_underway() and stream_is_capturing(current_stream_handle(dev)):
        first_bad(idx.device, [(idx, lo, hi)])
        return
    err, tag = index_errors.expect(dev, exc_type, message, op)
    run("index.cu", dt.int64, "index_bounds_report", REPORT_FMT, dev, n, idx.data_ptr(), err, tag, n, lo, hi,
        src_dtype=dt.int64)


def index_run(name: str, b: Tensor, a: Tensor, sizes, a_strides, b_strides, idxs, *, wrap=0, falpha=1.0,
              ialpha=1, b_ptr=None, b_dtype=None, err=(0, 0)) -> None:
    """Run ``index_gather`` / ``index_scatter`` / ``index_scatter_add`` (Note [Offset indexing]).

    ``idxs``: ``(int64 CUDA tensor, its strides over sizes, b's stride of its dim, that dim's size)``;
    ``err``: from :func:`deferred_check`, or ``(0, 0)`` when the caller checked the indices itself.
    """
    n = 1
    for s in sizes:
        n *= s
    if n == 0:
        return
    if len(sizes) > MAX_DIMS or len(idxs) > IDX_MAX:
        raise RuntimeError(f"strided CUDA indexing supports at most {MAX_DIMS} dims and {IDX_MAX} index "
                           f"tensors, got {len(sizes)} and {len(idxs)}")
    ptrs = [i.data_ptr() for i, _, _, _ in idxs]
    strides = []
    for _, st, _, _ in idxs:
        strides += _pad(st)
    strides += [0] * (MAX_DIMS * (IDX_MAX - len(idxs)))
    bst = [x for _, _, x, _ in idxs]
    bsz = [x for _, _, _, x in idxs]
    b_dtype = b_dtype or b.dtype
    run("index.cu", b_dtype, name, INDEX_FMT, b.device.index, n,
        a.data_ptr(), b.data_ptr() if b_ptr is None else b_ptr, n, len(sizes), *_pad(sizes), *_pad(a_strides),
        *_pad(b_strides), len(idxs), *_pad(ptrs, IDX_MAX), *strides, *_pad(bst, IDX_MAX), *_pad(bsz, IDX_MAX),
        wrap, float(falpha), int(ialpha), *err, src_dtype=a.dtype)
    if err[0] and driver.LAUNCH_BLOCKING:  # the launch synchronized: report at the op
        index_errors.raise_pending(b.device.index)


def copy_into(dst: Tensor, src: Tensor) -> None:
    """``dst.copy_(src)`` for same-shaped CUDA tensors, on dst's current stream."""
    if dst.numel():
        copy_kernel(dst.device.index, dst.dtype, src.dtype, dst.data_ptr(), src.data_ptr(), dst._sizes,
                    dst._strides, src._strides, stream(dst))


def scalar_tensor(value, like: Tensor) -> Tensor:
    """A one-element CUDA tensor of ``like``'s dtype holding ``value`` cast as the CPU casts it."""
    if isinstance(value, Tensor):
        value = value.item()
    if like.dtype is dt.bool:
        value = bool(value)
    t = new_output((), like.dtype, like.device)
    fill_kernel(like.device.index, like.dtype, t.data_ptr(), (), (), value, stream(t))
    return t


def deterministic_check(name: str, dtype) -> None:
    """Floating-point atomics are the non-deterministic case (Note [CUDA accumulation])."""
    if dtype.is_floating_point:
        from ...determinism import alert_not_deterministic

        alert_not_deterministic(name)


class Target:
    """The tensor an accumulating scatter adds into: itself, or a float32 copy for 16-bit floats."""

    def __init__(self, t: Tensor, accumulate: bool):
        self.t = t
        self.acc = None
        if accumulate and t.dtype in _HALF:
            self.acc = new_output(t._sizes, dt.float32, t.device)
            copy_into(self.acc, t)
        self.b = self.acc if self.acc is not None else t

    def finish(self) -> None:
        if self.acc is not None:
            copy_into(self.t, self.acc)
