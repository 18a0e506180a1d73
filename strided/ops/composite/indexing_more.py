"""Indexing compositions: index_fill, index_copy, index_reduce (over scatter_reduce), masked_scatter,
put, take, fill_diagonal_ and scatter's legacy ``reduce=`` forms, with torch's argument checks and messages.

Note [Index bounds in compositions]
Where torch's message for an out-of-range index is the composition's own (``take``, ``put_``,
``index_copy_``, ``index_fill_``, ``index_reduce_``, ``masked_scatter_``'s count), the indices are checked by the
``_check_index_range`` op before the ops composed: the CPU raises at once; CUDA checks in a kernel and reports
at the next synchronizing call, as the indexing kernels do (Note [Deferred index errors]), so these
compositions never synchronize and can be captured in a CUDA graph (torch's kernels device-assert there). The
check is launched first, so its report is the one read; the ops composed skip the bad elements (index,
index_put and scatter_reduce never touch memory outside the tensor). Meta tensors have no values to check.
"""

from __future__ import annotations

from ... import dtypes as dt
from ...backends.meta.common import wrap_dim
from ...backends.meta.pointwise import scalar_type_name
from ...dispatch.library import kernel
from ...tensor import Tensor
from .. import bound as ops

__all__ = []


def _check_range(index, low: int, high: int, message: str, op: str, index_error: bool = True) -> None:
    """Every value of ``index`` in ``[low, high)``, else ``message`` (Note [Index bounds in compositions])."""
    ops._check_index_range(ops.reshape(index, (-1,)), low, high, message, op, index_error)


def _dim_index(self, d: int, index):
    """``[None] * d + [index]``: index_put / index indices that pick ``index`` along dim ``d``."""
    return [None] * d + [index]


@kernel("CompositeImplicitAutograd")
def index_fill(self, dim, index, value):
    """``self`` with the slices at ``index`` along ``dim`` set to ``value`` (a Scalar or a 0-dim Tensor)."""
    d = wrap_dim(dim, max(self.dim(), 1))
    if index.dtype is not dt.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if index.dim() > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.dim()} dimension(s).")
    if isinstance(value, complex) and not self.dtype.is_complex:
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is not supported")
    size = self._sizes[d] if self.dim() else 1
    _check_range(index, -size, size, f"index {{index}} is out of bounds for dimension {d} with size {size}",
                 "index_fill_")
    mask = ops.index_put(ops.zeros((size,), dtype=dt.bool, device=self.device), [ops.reshape(index, (-1,))],
                         ops.ones((), dtype=dt.bool, device=self.device))
    if self.dim():
        mask = ops.reshape(mask, [size if k == d else 1 for k in range(self.dim())])
    else:
        mask = ops.reshape(mask, ())
    if isinstance(value, Tensor):
        return ops.masked_fill(self, mask, value.to(self.dtype) if value.dtype is not self.dtype else value)
    return ops.masked_fill(self, mask, value)


@kernel("CompositeImplicitAutograd")
def index_copy(self, dim, index, source):
    """``self`` with the slices at ``index`` along ``dim`` replaced by ``source``'s."""
    d = wrap_dim(dim, max(self.dim(), 1))
    if index.dim() > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.dim()})")
    n = index.numel()
    src_n = source._sizes[d] if source.dim() else 1
    if n != src_n:
        raise IndexError(f"index_copy_(): Number of indices ({n}) should be equal to source.size(dim) ({src_n})")
    if index.dtype is not dt.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got {scalar_type_name(index.dtype)}")
    if self.dtype is not source.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{scalar_type_name(self.dtype)} and (source) {scalar_type_name(source.dtype)}")
    for k in range(self.dim()):
        if k != d and (source.dim() != self.dim() or source._sizes[k] != self._sizes[k]):
            s_dim = min(k, source.dim() - 1) if source.dim() else 0
            s_size = source._sizes[s_dim] if source.dim() else 1
            raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice shapes. Destination "
                               f"slice shape: {self._sizes[k]} at dimension {k} and source slice shape: {s_size} at "
                               f"dimension {s_dim}.")
    size = self._sizes[d] if self.dim() else 1
    _check_range(index, 0, size, f"index_copy_(): index {{index}} is out of bounds for dimension {d} with size "
                 f"{size}", "index_copy_")
    if self.dim() == 0:
        return ops.clone(ops.reshape(source, ())) if n else ops.clone(self)
    flat = ops.reshape(index, (-1,))
    if flat.device.type == "cuda":  # a negative index (reported) must not wrap: make it one index_put skips
        flat = ops.where(ops.lt(flat, 0), size, flat)
    return ops.index_put(self, _dim_index(self, d, flat), source)


_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")


@kernel("CompositeImplicitAutograd")
def index_reduce(self, dim, index, source, reduce, *, include_self=True):
    """Reduce ``source``'s slices into ``self``'s at ``index`` along ``dim`` (prod, mean, amax or amin)."""
    if reduce not in _INDEX_REDUCTIONS:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    d = wrap_dim(dim, max(self.dim(), 1))
    if index.dim() > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: {index.dim()} with type: "
                         f"{scalar_type_name(index.dtype)} and size: {list(index._sizes)}")
    if index.dtype not in (dt.int64, dt.int32):
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: "
                           f"{scalar_type_name(index.dtype)}")
    if self.dtype is not source.dtype:
        raise RuntimeError(f"index_reduce_(): self ({scalar_type_name(self.dtype)}) and source "
                           f"({scalar_type_name(source.dtype)}) must have the same scalar type")
    n = index.numel()
    src_n = source._sizes[d] if source.dim() else 1
    if n != src_n:
        raise RuntimeError(f"index_reduce_(): Number of indices ({n}) should be equal to source.size(dim): "
                           f"({src_n}), for dim: {d}")
    if self.dtype is dt.bool:  # torch's index_reduce kernels take every dtype but bool (CPU: two kernels)
        kernel = ("index_func_" if include_self else "index_reduce_func_exclude_input_init") \
            if self.device.type == "cpu" else "index_reduce"
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    size = self._sizes[d] if self.dim() else 1
    _check_range(index, 0, size, "index out of range in self", "index_reduce_")
    if self.dim() == 0:
        self1, src1 = ops.reshape(self, (1,)), ops.reshape(source, (1,) if source.dim() == 0 else source._sizes)
        out = index_reduce(self1, 0, index, src1, reduce, include_self=include_self)
        return ops.reshape(out, ())
    shape = [n if k == d else 1 for k in range(self.dim())]
    idx = ops.expand(ops.reshape(index.to(dt.int64), shape), source._sizes)
    return ops.scatter_reduce(self, d, idx, source, reduce, include_self=include_self)


@kernel("CompositeImplicitAutograd")
def masked_scatter(self, mask, source):
    """``self`` with the positions where ``mask`` is True filled from ``source``, in row-major order."""
    if mask.dtype is not dt.bool:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{scalar_type_name(mask.dtype)}")
    if self.dtype is not source.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{scalar_type_name(self.dtype)} and {scalar_type_name(source.dtype)}")
    x, m = ops.broadcast_tensors([self, mask])
    flat_m = ops.reshape(m, (-1,))
    n = source.numel()
    # the source position of each True (-1 at each False): all must be below n (Note [Index bounds in compositions])
    pos = ops.where(flat_m, ops.sub(ops.cumsum(flat_m, 0), 1), -1)
    _check_range(pos, -1, n, "Number of elements of source < number of ones in mask", "masked_scatter_", False)
    if n == 0:  # then no ones (or the check above fails)
        return ops.clone(x)
    picked = ops.reshape(ops.index(ops.reshape(source, (-1,)), [ops.clamp(pos, 0, n - 1)]), x._sizes)
    return ops.where(m, picked, x)


def _check_take_index(self, index, name: str) -> None:
    if index.dtype is not dt.int64:
        raise RuntimeError(f"{name}(): Expected a long tensor for index, but got {scalar_type_name(index.dtype)}")
    n = self.numel()
    if name == "take" and n == 0 and index.numel():
        raise IndexError("take(): tried to take from an empty tensor")
    _check_range(index, -n, n, f"out of range: tried to access index {{index}} on a tensor of {n} elements.", name)


@kernel("CompositeImplicitAutograd")
def take(self, index):
    """``self`` read as 1-D at ``index`` (negative indices count from the end); shaped like ``index``."""
    _check_take_index(self, index, "take")
    return ops.reshape(ops.index(ops.reshape(self, (-1,)), [ops.reshape(index, (-1,))]), index._sizes)


@kernel("CompositeImplicitAutograd")
def put(self, index, source, accumulate=False):
    """``self`` read as 1-D with ``source`` written (or added) at ``index``."""
    if index.dtype is not dt.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {scalar_type_name(index.dtype)}")
    if self.dtype is not source.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{scalar_type_name(self.dtype)} and source.dtype = {scalar_type_name(source.dtype)}")
    if source.numel() != index.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    _check_take_index(self, index, "put_")
    if index.numel() == 0:
        return ops.clone(self)
    flat = ops.index_put(ops.reshape(self, (-1,)), [ops.reshape(index, (-1,))], ops.reshape(source, (-1,)),
                         accumulate)
    return ops.reshape(flat, self._sizes)


@kernel("CompositeExplicitAutograd")
def fill_diagonal_(self, fill_value, wrap=False):
    """Fill the main diagonal of a 2-D (or all-equal-dims) tensor in place; ``wrap`` restarts it below a
    tall matrix's square part every ``width + 1`` rows, as NumPy's ``fill_diagonal``."""
    n = self.dim()
    if n < 2:
        raise RuntimeError("dimensions must larger than 1")
    height, width = self._sizes[0], self._sizes[1]
    if n > 2 and any(s != height for s in self._sizes[1:]):
        raise RuntimeError("all dimensions of input must be of equal length")
    size = min(height, width)
    stride = sum(self._strides)
    offset = self.storage_offset()
    ops.fill_(ops.as_strided(self, [size], [stride], offset), fill_value)
    if wrap and n == 2 and height > width + 1:
        step = width + 1
        wrap_size = (self.numel() + step - 1) // step - size
        ops.fill_(ops.as_strided(self, [wrap_size], [stride], offset + self._strides[0] * (width + 1)), fill_value)
    return self


@kernel("CompositeImplicitAutograd")
def _scatter_reduce_backward(grad, self, dim, index, src, reduce, include_self, result):
    """``(grad_self, grad_src)`` of scatter_reduce (torch's scatter_reduce_backward): ``prod`` divides out
    each factor (zeros handled exactly), ``amax`` / ``amin`` share the gradient among the tied extremes."""
    if reduce == "sum":
        grad_self, grad_src = grad, ops.gather(grad, dim, index)
    elif reduce == "mean":
        n = ops.ones_like(grad) if include_self else ops.zeros_like(grad)
        n = ops.scatter_add(n, dim, index, ops.ones_like(src))
        n = ops.masked_fill(n, ops.eq(n, 0), 1)
        grad_self, grad_src = ops.div(grad, n), ops.div(ops.gather(grad, dim, index), ops.gather(n, dim, index))
    elif reduce == "prod":
        masked_self = ops.masked_fill(self, ops.eq(self, 0), 1)
        masked_self_result = ops.scatter_reduce(masked_self, dim, index, src, reduce, include_self=include_self)
        grad_self = ops.div(ops.mul(grad, masked_self_result), masked_self)
        src_zero = ops.eq(src, 0)
        zeros_at = ops.gather(ops.scatter_add(ops.zeros_like(self), dim, index, src_zero.to(self.dtype)), dim, index)
        single_zero = ops.logical_and(src_zero, ops.eq(zeros_at, 1))
        masked_src_result = ops.scatter_reduce(self, dim, index, ops.masked_fill(src, single_zero, 1), reduce,
                                               include_self=include_self)
        grad_src = ops.where(single_zero, ops.gather(ops.mul(grad, masked_src_result), dim, index),
                             ops.div(ops.gather(ops.mul(grad, result), dim, index), ops.masked_fill(src, src_zero, 1)))
    else:  # amax, amin
        value = ops.gather(result, dim, index)
        self_is = ops.eq(self, result)
        src_is = ops.eq(src, value)
        count = ops.scatter_add(self_is.to(self.dtype), dim, index, src_is.to(self.dtype))
        share = ops.div(grad, count)
        grad_self = ops.mul(self_is, share)
        grad_src = ops.mul(src_is, ops.gather(share, dim, index))
    if not include_self:
        grad_self = ops.scatter(grad_self, dim, index, 0)
    return grad_self, grad_src


# scatter(dim, index, src | value, reduce="add" | "multiply"): torch's older accumulating scatter, kept by torch (with
# a deprecation warning, once, for the Tensor src form) and written here over scatter_add / scatter_reduce("prod")
def _legacy_scatter_reduce(self, dim, index, src, reduce):
    if reduce == "add":
        return ops.scatter_add(self, dim, index, src)
    if reduce == "multiply":
        return ops.scatter_reduce(self, dim, index, src, "prod", include_self=True)
    raise RuntimeError("reduce argument must be either add or multiply.")


@kernel("CompositeImplicitAutograd")
def scatter_with_reduce(self, dim, index, src, *, reduce):
    from ...warn_once import warn_once

    warn_once("scatter reduce", "The reduce argument of torch.scatter with Tensor src is deprecated and will be "
              "removed in a future PyTorch release. Use torch.scatter_reduce instead for more reduction options.",
              stacklevel=None)
    return _legacy_scatter_reduce(self, dim, index, src, reduce)


@kernel("CompositeImplicitAutograd")
def scatter_value_with_reduce(self, dim, index, value, *, reduce):
    src = ops.full(index.shape, value, dtype=self.dtype, device=self.device)
    return _legacy_scatter_reduce(self, dim, index, src, reduce)


@kernel("CompositeImplicitAutograd")
def scatter_with_reduce_(self, dim, index, src, *, reduce):
    """In-place ``scatter(..., reduce=)`` of a Tensor src or a value (Note [In-place compositions])."""
    from .inplace_compositions import _assign, grad_safe_source

    return _assign(self, ops.scatter(grad_safe_source(self, index, src), dim, index, src, reduce=reduce))
