"""Copies between CPU and CUDA memory and between CUDA devices, any strides and dtypes.

Note [Copy staging]
* H2D: the source is made a dense host array in its own dtype (NumPy, broadcast materialized)
  unless it already is one; it is DMA'd to the destination directly when the destination is
  dense with the same dtype, else to a device temporary that the strided-copy kernel casts and
  scatters into the destination.
* D2H: the kernel gathers the source into a dense device temporary in the destination dtype;
  one DMA brings it to the host, where NumPy scatters it into the destination's strides.
* D2D: one kernel (or ``cuMemcpyAsync`` when both are dense alike); across devices the data is
  gathered on the source device, copied peer-to-peer and scattered on the destination device.

Note [Copy safety]
Device temporaries come from the caching allocator on the stream that uses them, so their
reuse is stream-ordered.  Pageable host memory is never read or written after the call returns:
``cuMemcpyHtoDAsync`` from pageable memory returns once the source is staged, and D2H into
pageable memory is synchronous.  So a non-blocking copy with pageable memory needs no stream
synchronization of its own (torch makes none either, and its sync debug mode does not count it:
Note [Synchronizing calls]); a blocking copy synchronizes the stream.  With ``non_blocking=True``
and pinned memory the copy is truly asynchronous; the pinned block gets an event on the copy's
stream (``host_allocator``), so it is not handed out again before the DMA completes.
"""

from __future__ import annotations

import numpy as np

from ...tensor import Tensor, contiguous_strides, is_row_major
from ..cpu.common import as_numpy
from . import driver, index_errors
from .allocator import allocate_storage, record_stream
from .driver import check, cu
from .host_allocator import record_event
from .kernels import copy_kernel
from .streams import current_stream_handle
from .sync_debug import stream_synchronize

__all__ = ["copy_", "broadcast_strides"]


def broadcast_strides(src: Tensor, sizes: tuple) -> tuple:
    """``src``'s strides as seen when expanded to ``sizes`` (0 for broadcast dims)."""
    nd = len(sizes)
    off = nd - len(src._sizes)
    out = [0] * nd
    for d, (n, s) in enumerate(zip(src._sizes, src._strides)):
        out[off + d] = 0 if n == 1 and sizes[off + d] != 1 else s
    return tuple(out)


def _device_temp(nbytes: int, dev):
    return allocate_storage(nbytes, dev)


def copy_(dst: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    sizes = dst._sizes
    n = 1
    for s in sizes:
        n *= s
    if n == 0:
        return dst
    sstr = broadcast_strides(src, sizes)
    if dst.device.type == "cuda" and src.device.type == "cuda":
        _d2d(dst, src, sstr)
    elif dst.device.type == "cuda":
        _h2d(dst, src, sstr, non_blocking)
    else:
        _d2h(dst, src, sstr, non_blocking)
    return dst


def _overlaps(a: Tensor, b: Tensor) -> bool:
    if a._storage is not b._storage:
        return False
    ia, ib = a.dtype.itemsize, b.dtype.itemsize
    a0 = a._offset * ia
    a1 = a0 + (1 + sum((n - 1) * s for n, s in zip(a._sizes, a._strides))) * ia
    b0 = b._offset * ib
    b1 = b0 + (1 + sum((n - 1) * s for n, s in zip(b._sizes, b._strides))) * ib
    return a0 < b1 and b0 < a1


def _d2d(dst: Tensor, src: Tensor, sstr: tuple) -> None:
    i, j = src.device.index, dst.device.index
    sizes = dst._sizes
    if i != j:
        _cross_device(dst, src, sstr)
        return
    stream = current_stream_handle(j)
    src_ptr = src.data_ptr()
    if _overlaps(dst, src):  # read everything before writing anything
        tmp = _device_temp(dst.numel() * src.dtype.itemsize, dst.device)
        copy_kernel(j, src.dtype, src.dtype, tmp._data_ptr, src_ptr, sizes, contiguous_strides(sizes), sstr,
                    stream)
        src_ptr, sstr = tmp._data_ptr, contiguous_strides(sizes)
        src_keep = tmp  # noqa: F841 - alive until the kernel below is queued (stream-ordered reuse)
    if (dst.dtype is src.dtype and is_row_major(sizes, dst._strides) and is_row_major(sizes, sstr)):
        driver.ensure_context(j)
        check(cu().cuMemcpyAsync(dst.data_ptr(), src_ptr, dst.numel() * dst.dtype.itemsize, stream))
        return
    copy_kernel(j, dst.dtype, src.dtype, dst.data_ptr(), src_ptr, sizes, dst._strides, sstr, stream)


def _gather(src: Tensor, sstr: tuple, sizes: tuple, dtype, stream: int):
    """A dense device temporary (on src's device) holding ``src`` expanded to ``sizes`` as ``dtype``."""
    n = 1
    for s in sizes:
        n *= s
    if src.dtype is dtype and is_row_major(sizes, sstr):
        return None, src.data_ptr()
    tmp = _device_temp(n * dtype.itemsize, src.device)
    copy_kernel(src.device.index, dtype, src.dtype, tmp._data_ptr, src.data_ptr(), sizes,
                contiguous_strides(sizes), sstr, stream)
    return tmp, tmp._data_ptr


def _cross_device(dst: Tensor, src: Tensor, sstr: tuple) -> None:
    from .streams import current_stream

    i, j = src.device.index, dst.device.index
    sizes = dst._sizes
    nbytes = dst.numel() * dst.dtype.itemsize
    s_src, s_dst = current_stream(i), current_stream(j)
    tmp, ptr = _gather(src, sstr, sizes, dst.dtype, s_src.handle)
    s_dst.wait_stream(s_src)
    dense = is_row_major(sizes, dst._strides)
    dtmp = None if dense else _device_temp(nbytes, dst.device)
    target = dst.data_ptr() if dense else dtmp._data_ptr
    from .driver import _contexts

    driver.ensure_context(i)
    driver.ensure_context(j)
    check(cu().cuMemcpyPeerAsync(target, _contexts[j], ptr, _contexts[i], nbytes, s_dst.handle))
    if tmp is not None:
        record_stream(tmp, s_dst)
    else:
        record_stream(src._storage, s_dst)
    if not dense:
        copy_kernel(j, dst.dtype, dst.dtype, dst.data_ptr(), target, sizes, dst._strides,
                    contiguous_strides(sizes), s_dst.handle)


def _h2d(dst: Tensor, src: Tensor, sstr: tuple, non_blocking: bool) -> None:
    j = dst.device.index
    stream = current_stream_handle(j)
    sizes = dst._sizes
    pinned = src._storage.allocator == "pinned"
    if is_row_major(sizes, sstr) and src._sizes == sizes:
        host_ptr, host_keep = src.data_ptr(), None
    else:
        pinned = False
        host_keep = np.ascontiguousarray(np.broadcast_to(as_numpy(src), sizes))
        host_ptr = host_keep.ctypes.data
    n = dst.numel()
    nbytes = n * src.dtype.itemsize
    direct = dst.dtype is src.dtype and is_row_major(sizes, dst._strides)
    tmp = None if direct else _device_temp(nbytes, dst.device)
    target = dst.data_ptr() if direct else tmp._data_ptr
    driver.ensure_context(j)
    check(cu().cuMemcpyHtoDAsync(target, host_ptr, nbytes, stream))
    if pinned:
        record_event(src._storage, j, stream)
    if not direct:
        copy_kernel(j, dst.dtype, src.dtype, dst.data_ptr(), target, sizes, dst._strides,
                    contiguous_strides(sizes), stream)
    if not non_blocking:
        stream_synchronize(stream, j, report_index_errors=False)  # Note [Copy safety]
    del host_keep


def _d2h(dst: Tensor, src: Tensor, sstr: tuple, non_blocking: bool) -> None:
    i = src.device.index
    stream = current_stream_handle(i)
    sizes = dst._sizes
    tmp, ptr = _gather(src, sstr, sizes, dst.dtype, stream)
    nbytes = dst.numel() * dst.dtype.itemsize
    driver.ensure_context(i)
    pinned = dst._storage.allocator == "pinned"
    if is_row_major(sizes, dst._strides):
        check(cu().cuMemcpyDtoHAsync(dst.data_ptr(), ptr, nbytes, stream))
        if non_blocking:
            if pinned:
                record_event(dst._storage, i, stream)
            else:  # the driver returned once the copy into pageable memory was done (Note [Copy safety])
                index_errors.raise_pending(i)
            return
        stream_synchronize(stream, i)  # raises a kernel's pending index error (Note [Deferred index errors])
        return
    host = np.empty(sizes, dtype=dst.dtype.numpy_dtype)
    check(cu().cuMemcpyDtoHAsync(host.ctypes.data, ptr, nbytes, stream))
    stream_synchronize(stream, i)  # the host scatters the values below
    np.copyto(as_numpy(dst), host)
