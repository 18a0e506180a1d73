"""CUDA kernels for ``sort``, ``sort.stable`` and ``topk`` (Meta functions and semantics of
``backends/cpu/sorting.py``, Note [Sort order]), and ``searchsorted`` (``search.cu``).

Note [CUDA sort]
The sorted dim is moved last into a contiguous (rows, n) buffer (a tiled transpose when it
is not already last).  Every value becomes an order-preserving unsigned 64-bit key (NaN above
+inf, -0 equal to +0; descending sorts the complemented key) and every comparison breaks ties
by the original index, so the keys are unique and any sorting network yields the *stable*
order: equal values keep their index order in both directions, as the CPU's.  Rows padded to
P = next power of two sort with a bitonic network: rows up to 2048 elements in one block's
shared memory; longer rows in global scratch, with the short-distance stages of each merge
(distance < 2048) done in shared memory per 2048-element chunk, so a row of 2^20 elements
takes about 55 launches.  topk sorts and keeps the first k (``sorted=False`` returns them
sorted too, as on the CPU).
"""

from __future__ import annotations

from .... import dtypes as dt
from ....dispatch.library import kernel
from ....tensor import Tensor, contiguous_strides, is_row_major
from ...meta import sorting as meta
from ...meta.common import new_output
from . import copy_kernel
from .index_launch import read_i64, run, stream, to_cuda_i64

__all__ = []

SORT_FMT = "<QQQQQqqqqqqq"
_SMEM = 2048


def _moved(t: Tensor, d: int):
    """Sizes and strides of ``t`` with dim ``d`` last."""
    order = [k for k in range(len(t._sizes)) if k != d] + [d]
    return tuple(t._sizes[k] for k in order), tuple(t._strides[k] for k in order)


def _sorted_rows(self: Tensor, d: int, descending: bool):
    """(values, indices) as contiguous (.., n) buffers, dim ``d`` last, and their moved sizes."""
    dev, s = self.device.index, stream(self)
    sizes, strides = _moved(self, d) if self._sizes else ((1,), (1,))
    n = sizes[-1]
    rows = self.numel() // n
    if is_row_major(sizes, strides):
        src = self
    else:
        src = new_output(sizes, self.dtype, self.device)
        copy_kernel(dev, self.dtype, self.dtype, src.data_ptr(), self.data_ptr(), sizes, src._strides, strides, s)
    values = new_output(sizes, self.dtype, self.device)
    indices = new_output(sizes, dt.int64, self.device)
    p = 1
    while p < n:
        p *= 2
    head = (src.data_ptr(), values.data_ptr(), indices.data_ptr())
    desc = int(bool(descending))
    if p <= _SMEM:
        run("sort.cu", self.dtype, "sort_rows_shared", SORT_FMT, dev, 1, *head, 0, 0, rows, n, p, desc, 2, p, 0,
            grid=rows, block=min(1024, max(32, p // 2)))
        return values, indices, sizes
    keys = new_output((rows * p,), dt.int64, self.device)
    idx = new_output((rows * p,), dt.int64, self.device)

    def launch(name, k_first, k_last, j=0, grid=None, block=None, total=rows * p):
        run("sort.cu", self.dtype, name, SORT_FMT, dev, total, *head, keys.data_ptr(), idx.data_ptr(), rows, n, p,
            desc, k_first, k_last, j, grid=grid, block=block)

    chunks = rows * p // _SMEM
    launch("sort_init", 0, 0)
    launch("sort_chunk_shared", 2, _SMEM, grid=chunks, block=1024)
    k = 2 * _SMEM
    while k <= p:
        j = k // 2
        while j >= _SMEM:
            launch("sort_step", k, k, j, total=rows * p // 2)
            j //= 2
        launch("sort_chunk_shared", k, k, grid=chunks, block=1024)
        k *= 2
    launch("sort_finish", 0, 0, total=rows * n)
    return values, indices, sizes


def _store(out: Tensor, buf: Tensor, d: int, sizes, keep: int) -> None:
    """Copy the first ``keep`` of each row of the moved (.., n) buffer into ``out`` (dim ``d``)."""
    osz, ost = _moved(out, d) if out._sizes else ((1,), (1,))
    bst = contiguous_strides(sizes)
    copy_kernel(out.device.index, out.dtype, buf.dtype, out.data_ptr(), buf.data_ptr(), osz[:-1] + (keep,),
                ost, bst, stream(out))


def _dim(dim, t) -> int:
    n = len(t._sizes)
    return 0 if n == 0 else (dim + n if dim < 0 else dim)


@kernel("CUDA")
def sort(self, dim=-1, descending=False):
    values, indices = result = meta.sort(self, dim, descending)
    if self.numel():
        d = _dim(dim, self)
        v, i, sizes = _sorted_rows(self, d, descending)
        _store(values, v, d, sizes, sizes[-1])
        _store(indices, i, d, sizes, sizes[-1])
    return result


@kernel("CUDA")
def sort_stable(self, *, stable, dim=-1, descending=False):
    return sort(self, dim, descending)


@kernel("CUDA")
def topk(self, k, dim=-1, largest=True, sorted=True):
    if self.dtype is dt.bool:
        raise RuntimeError("\"topk_out_cuda\" not implemented for 'Bool'")
    values, indices = result = meta.topk(self, k, dim, largest, sorted)
    if values.numel():
        d = _dim(dim, self)
        v, i, sizes = _sorted_rows(self, d, largest)
        _store(values, v, d, sizes, k)
        _store(indices, i, d, sizes, k)
    return result


# ------------------------------------------------------------------------------ search.cu: searchsorted
SEARCH_FMT = "<QQQQQqqqq"


def _contiguous_as(t: Tensor, dtype) -> Tensor:
    if t.dtype is dtype and is_row_major(t._sizes, t._strides):
        return t
    out = new_output(t._sizes, dtype, t.device)
    if out.numel():
        copy_kernel(t.device.index, dtype, t.dtype, out.data_ptr(), t.data_ptr(), t._sizes, out._strides, t._strides,
                    stream(t))
    return out


@kernel("CUDA")
def searchsorted(sorted_sequence, self, *, out_int32=False, right=False, side=None, sorter=None):
    right = meta.searchsorted_check(sorted_sequence, self, out_int32, right, side, sorter)
    out = meta.searchsorted_output(self, out_int32)
    n, m = out.numel(), sorted_sequence._sizes[-1]
    if not n:
        return out
    dev = self.device.index
    if sorter is not None and sorter.numel():  # validated as the CPU does: one read (a synchronization)
        srt = to_cuda_i64(sorter, self.device)
        res = new_output((2,), dt.int64, self.device)
        run("misc.cu", dt.int64, "minmax", "<QQq", dev, 1, srt.data_ptr(), res.data_ptr(), srt.numel(), grid=1,
            block=1024)
        lo, hi = (int(v) for v in read_i64(res.data_ptr(), dev, 2))
        if lo < 0 or hi >= m:
            raise RuntimeError("torch.searchsorted(): sorter index out of range")
    else:
        srt = None
    common = dt.promote_types(sorted_sequence.dtype, self.dtype)  # as torch: both in the common dtype
    seq, vals = _contiguous_as(sorted_sequence, common), _contiguous_as(self, common)
    per_row = self._sizes[-1] if sorted_sequence.dim() > 1 else 0
    o64, o32 = (0, out.data_ptr()) if out_int32 else (out.data_ptr(), 0)
    run("search.cu", common, "searchsorted", SEARCH_FMT, dev, n, vals.data_ptr(), seq.data_ptr(),
        srt.data_ptr() if srt is not None else 0, o64, o32, n, m, per_row, int(right))
    return out
