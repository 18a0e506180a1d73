"""CUDA kernels for indexing along one dim (index_select, gather, scatter, scatter_add, index_add,
embedding) and the ``misc.cu`` kernels (tril/triu, one_hot, linspace, eye); cat is in
``joining_ops``, advanced indexing in ``advanced_indexing_ops``, sorting in ``sort_ops``.  Each
calls the op's Meta function for validation and its output, exactly like the CPU kernels in
``backends/cpu/{indexing,factories}.py``, whose results and errors these match (Note [Offset
indexing], Note [CUDA index bounds], Note [CUDA accumulation] in ``index_launch``).
"""

from __future__ import annotations

import math

from .... import dtypes as dt
from ....dispatch.library import kernel
from ....tensor import Tensor, contiguous_strides
from ...meta import factories as fmeta
from ...meta import indexing as meta
from ...meta.common import new_output, wrap_dim
from .complex_ops import as_real, index_add_pairs, over_pairs, scatter_add_pairs, scatter_whole_elements
from .index_launch import (
    Target,
    check_deferred,
    copy_into,
    deferred_check,
    deterministic_check,
    first_bad,
    index_run,
    read_i64,
    run,
    scalar_tensor,
    to_cuda_i64,
)

__all__ = []

TRI_FMT = "<QQqq8q8qqq"
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1


def _sizes1(t: Tensor):
    """Sizes and strides with a 0-d tensor seen as 1-d of size 1 (the CPU's atleast_1d)."""
    return (t._sizes, t._strides) if t._sizes else ((1,), (1,))


_OUT_OF_RANGE = "index out of range in self: index {index}"  # the CPU's words, then the value


def _check_now(device, idx: Tensor, size: int, exc_type: type, message: str) -> None:
    """The synchronous check, where no main launch runs to report a bad index (empty outputs)."""
    bad = first_bad(device, [(idx, 0, size)])[0] if idx.numel() else None
    if bad is not None:
        raise exc_type(message.format(index=bad))


def _bounds(dim: int, size: int) -> str:
    """The CPU kernel's message for a bad index along ``dim``, ``{index}`` standing for the value."""
    return f"index {{index}} is out of bounds for dimension {dim} with size {size}"


@kernel("CUDA")
def index_select(self, dim, index):
    out = meta.index_select(self, dim, index)
    if self.dtype.is_complex:  # Note [Complex gathers]
        return over_pairs(index_select, out, self, dim, index)
    d = wrap_dim(dim, len(self._sizes))
    idx = to_cuda_i64(index, self.device).reshape(-1)
    size = meta.nonempty_size(self, d)
    sizes, strides = _sizes1(self)
    osz = sizes[:d] + (idx.numel(),) + sizes[d + 1:]
    if not math.prod(osz):  # no launch to report from: check now (the CPU kernel checks too)
        _check_now(self.device, idx, size, IndexError, _OUT_OF_RANGE)
        return out
    err = deferred_check(self.device, idx, size, IndexError, _OUT_OF_RANGE, "index_select")
    bst = strides[:d] + (0,) + strides[d + 1:]
    ist = tuple(1 if k == d else 0 for k in range(len(osz)))
    index_run("index_gather", self, out, osz, contiguous_strides(osz), bst, [(idx, ist, strides[d], size)], err=err)
    return out


@kernel("CUDA")
def gather(self, dim, index, *, sparse_grad=False):
    out = meta.gather(self, dim, index, sparse_grad=sparse_grad)
    if not out.numel():
        return out
    if self.dtype.is_complex:  # Note [Complex gathers]
        return over_pairs(gather, out, self, dim, index)
    d = wrap_dim(dim, len(self._sizes))
    sizes, strides = _sizes1(self)
    idx = to_cuda_i64(index, self.device)
    err = deferred_check(self.device, idx, sizes[d], RuntimeError, _bounds(d, sizes[d]), "gather")
    isz = _sizes1(idx)[0]
    bst = tuple(0 if k == d else s for k, s in enumerate(strides))
    index_run("index_gather", self, out, isz, contiguous_strides(isz), bst,
              [(idx, contiguous_strides(isz), strides[d], sizes[d])], err=err)
    return out


@kernel("CUDA")
def _check_index_range(index, low, high, message, op, index_error=True):
    """The range check of a composition, found by a kernel and reported without a sync (Note [Index bounds in
    compositions])."""
    check_deferred(index, low, high, IndexError if index_error else RuntimeError, message, op)


def _scatter(self, dim, index, src, accumulate: bool, name: str) -> Tensor:
    out = meta.scatter_output(self, dim, index, src)
    copy_into(out, self)
    if not index.numel():
        return out
    if accumulate:
        deterministic_check(name, self.dtype)
    d = wrap_dim(dim, len(self._sizes))
    sizes, strides = _sizes1(out)
    idx = to_cuda_i64(index, self.device)
    err = deferred_check(self.device, idx, sizes[d], RuntimeError, _bounds(d, sizes[d]), name)
    isz = _sizes1(idx)[0]
    if isinstance(src, Tensor):
        a, ast = src, _sizes1(src)[1]
    else:
        a, ast = scalar_tensor(src, self), (0,) * len(isz)
    target = Target(out, accumulate)
    bst = tuple(0 if k == d else s for k, s in enumerate(strides))
    index_run("index_scatter_add" if accumulate else "index_scatter", target.b, a, isz, ast, bst,
              [(idx, contiguous_strides(isz), strides[d], sizes[d])], err=err)
    target.finish()
    return out


@kernel("CUDA")
def scatter(self, dim, index, src=None, value=None):
    source = src if value is None else value
    if self.dtype.is_complex:  # Note [Complex scatter]
        meta.scatter_output(self, dim, index, source)  # torch's checks, before any launch
        if not index.numel():
            return self.clone()
        return scatter_whole_elements(scatter, self, dim, index, source)
    return _scatter(self, dim, index, source, False, "scatter")


@kernel("CUDA")
def scatter_add(self, dim, index, src):
    if self.dtype.is_complex:  # Note [Complex gathers]
        out = meta.scatter_output(self, dim, index, src)
        return scatter_add_pairs(scatter_add, out, self, dim, index, src)
    return _scatter(self, dim, index, src, True, "scatter_add_cuda_kernel")


@kernel("CUDA")
def index_add(self, dim, index, source, *, alpha=1):
    out = meta.index_add(self, dim, index, source, alpha=alpha)
    if self.dtype.is_complex:  # Note [Complex gathers]
        return index_add_pairs(index_add, out, self, dim, index, source, alpha)
    if isinstance(alpha, complex):
        alpha = alpha.real  # its imaginary part is 0 (the Meta function's check)
    copy_into(out, self)
    d = wrap_dim(dim, len(self._sizes))
    sizes, strides = _sizes1(out)
    idx = to_cuda_i64(index, self.device).reshape(-1)
    if not source.numel():
        _check_now(self.device, idx, sizes[d], RuntimeError, _bounds(d, sizes[d]))
        return out
    err = deferred_check(self.device, idx, sizes[d], RuntimeError, _bounds(d, sizes[d]), "index_add")
    if self.dtype is dt.bool:
        if not bool(alpha):
            return out
        alpha = 1
    deterministic_check("index_add_cuda_", self.dtype)
    ssz, sst = _sizes1(source)
    target = Target(out, True)
    bst = tuple(0 if k == d else s for k, s in enumerate(strides))
    ist = tuple(1 if k == d else 0 for k in range(len(ssz)))
    fa, ia = (float(alpha), 1) if self.dtype.is_floating_point else (1.0, int(alpha))
    index_run("index_scatter_add", target.b, source, ssz, sst, bst, [(idx, ist, strides[d], sizes[d])],
              falpha=fa, ialpha=ia, err=err)
    target.finish()
    return out


@kernel("CUDA")
def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    out = meta.embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse)
    if weight.dtype.is_complex:  # Note [Complex gathers]: the rows through index_select's real pairs
        return index_select(weight, 0, indices.reshape((-1,))).reshape(out._sizes)
    idx = to_cuda_i64(indices, weight.device)
    osz = out._sizes
    if not math.prod(osz):
        _check_now(weight.device, idx, weight._sizes[0], IndexError, _OUT_OF_RANGE)
        return out
    err = deferred_check(weight.device, idx, weight._sizes[0], IndexError, _OUT_OF_RANGE, "embedding")
    ist = contiguous_strides(idx._sizes) + (0,)
    bst = (0,) * len(idx._sizes) + (weight._strides[1],)
    index_run("index_gather", weight, out, osz, out._strides, bst, [(idx, ist, weight._strides[0],
                                                                     weight._sizes[0])], err=err)
    return out


# ------------------------------------------------------------------------------ misc.cu: masks, factories
def _triangle(self, diagonal, upper: bool) -> Tensor:
    if self.dtype.is_complex:  # the real kernel over the pairs, their dim moved in front of the matrices
        out = (meta.triu if upper else meta.tril)(self, diagonal)
        parts = _triangle(as_real(self).movedim(-1, 0), diagonal, upper)
        as_real(out).copy_(parts.movedim(0, -1))
        return out
    out = (meta.triu if upper else meta.tril)(self, diagonal)
    n = out.numel()
    if n:
        if len(self._sizes) > 8:
            raise RuntimeError("strided CUDA tril/triu support at most 8 dims")
        pad = [0] * (8 - len(self._sizes))
        run("misc.cu", self.dtype, "triangle", TRI_FMT, self.device.index, n, out.data_ptr(), self.data_ptr(), n,
            len(self._sizes), *self._sizes, *pad, *self._strides, *pad, int(diagonal), int(upper))
    return out


@kernel("CUDA")
def tril(self, diagonal=0):
    return _triangle(self, diagonal, False)


@kernel("CUDA")
def triu(self, diagonal=0):
    return _triangle(self, diagonal, True)


@kernel("CUDA")
def one_hot(self, num_classes=-1):
    if self.dtype is not dt.int64 or not self.numel():
        out = meta.one_hot(self, num_classes)
        x = self
    elif num_classes != -1:  # the class range checked by kernels, reported without a sync (torch: device asserts)
        out = meta.one_hot(self, num_classes)  # its checks of num_classes, then the output
        x = to_cuda_i64(self, self.device)
        check_deferred(x, 0, _I64_MAX, RuntimeError, "Class values must be non-negative.", "one_hot")
        check_deferred(x, _I64_MIN, num_classes, RuntimeError, "Class values must be smaller than num_classes.",
                       "one_hot")
    else:  # the class count is the largest value: read back (a sync, as torch's)
        x = to_cuda_i64(self, self.device)
        res = new_output((2,), dt.int64, self.device)
        run("misc.cu", dt.int64, "minmax", "<QQq", self.device.index, 1, x.data_ptr(), res.data_ptr(),
            x.numel(), grid=1, block=1024)
        lo, top = (int(v) for v in read_i64(res.data_ptr(), self.device.index, 2))
        if lo < 0:
            raise RuntimeError("Class values must be non-negative.")
        num_classes = top + 1
        out = meta.one_hot_output(self, num_classes)
    total = out.numel()
    if total:
        x = to_cuda_i64(x, self.device)
        run("misc.cu", dt.int64, "one_hot", "<QQqq", self.device.index, total, out.data_ptr(), x.data_ptr(),
            total, num_classes)
    return out


@kernel("CUDA")
def linspace(start, end, steps, *, dtype=None, layout=None, device=None, pin_memory=None):
    out = fmeta.linspace(start, end, steps, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)
    if steps and out.dtype.category == dt.INTEGRAL:  # torch's integer rule (rare: made on the host, then copied)
        from ....tensor_data import tensor

        return out.copy_(tensor(fmeta.integer_linspace(start, end, steps, out.dtype)).to(out.dtype))
    if steps:
        step = (float(end) - float(start)) / (steps - 1) if steps > 1 else 0.0
        run("misc.cu", out.dtype, "linspace", "<Qqddd", out.device.index, steps, out.data_ptr(), steps,
            float(start), float(end), step)
    return out


@kernel("CUDA")
def eye(n, m, *, dtype=None, layout=None, device=None, pin_memory=None):
    out = fmeta.eye(n, m, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)
    total = out.numel()
    if total:
        run("misc.cu", out.dtype, "eye", "<Qqq", out.device.index, total, out.data_ptr(), total, m)
    return out
