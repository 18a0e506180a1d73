"""torch operators composed of existing ones: ``frac``, ``rot90``, ``diag_embed``, ``atleast_2d``, ``hstack``,
``hsplit``, the ``*_scatter`` ops and ``Tensor.unfold``; the in-place view ops (``squeeze_``, ``t_``...) are in
``inplace_views.py``. Every kernel is CompositeImplicitAutograd (autograd records the ops it calls).
"""

from __future__ import annotations

from ...backends.meta.common import wrap_dim
from ...dispatch.library import kernel
from ...dtypes import int64
from .. import bound as ops
from .views import int_list

__all__ = []

_CIA = "CompositeImplicitAutograd"


# ---------------------------------------------------------------- pointwise
@kernel(_CIA)
def frac(self):
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f"\"frac_cpu\" not implemented for '{_word(self.dtype)}'")
    return ops.sub(self, ops.trunc(self))


@kernel(_CIA)
def frac_(self):
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f"\"frac_cpu\" not implemented for '{_word(self.dtype)}'")
    return ops.sub_(self, ops.trunc(self))


@kernel(_CIA)
def nan_to_num_(self, nan=None, posinf=None, neginf=None):
    """torch's nan_to_num in place: the masks are taken before any write (Note [Composite in-place forms])."""
    if self.dtype.is_complex:  # each part apart, in place through its real view
        nan_to_num_(ops.real(self), nan, posinf, neginf)
        nan_to_num_(ops.imag(self), nan, posinf, neginf)
        return self
    if not self.dtype.is_floating_point:
        return self
    from ...type_info import finfo

    info = finfo(self.dtype)
    masks = (ops.isnan(self), ops.eq(self, float("inf")), ops.eq(self, float("-inf")))
    values = (0.0 if nan is None else nan, info.max if posinf is None else posinf,
              info.min if neginf is None else neginf)
    for mask, value in zip(masks, values):
        ops.masked_fill_(self, mask, value)
    return self


@kernel(_CIA)
def i0(self):
    from ...special import i0 as special_i0

    return special_i0(self)


@kernel(_CIA)
def i0_(self):
    from ...special import i0 as special_i0
    from .inplace_compositions import _assign, grad_safe_source

    return _assign(self, special_i0(grad_safe_source(self)))  # an integer self refuses the float result, as torch


# ---------------------------------------------------------------- rearranging
@kernel(_CIA)
def fliplr(self):
    if len(self._sizes) < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return ops.flip(self, [1])


@kernel(_CIA)
def flipud(self):
    if len(self._sizes) < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return ops.flip(self, [0])


@kernel(_CIA)
def rot90(self, k=1, dims=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane of ``dims``, from the first towards the second."""
    dims = int_list(dims)
    n = len(self._sizes)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if n < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {n}")
    if dims[0] == dims[1] or abs(dims[0] - dims[1]) == n:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    if not (-n <= dims[0] < n):
        raise RuntimeError(f"Rotation dim0 out of range, dim0 = {dims[0]}")
    if not (-n <= dims[1] < n):
        raise RuntimeError(f"Rotation dim1 out of range, dim1 = {dims[1]}")
    k %= 4
    if k == 1:
        return ops.transpose(ops.flip(self, [dims[1]]), dims[0], dims[1])
    if k == 2:
        return ops.flip(self, list(dims))
    if k == 3:
        return ops.transpose(ops.flip(self, [dims[0]]), dims[0], dims[1])
    return ops.clone(self)


@kernel(_CIA)
def adjoint(self):
    if len(self._sizes) < 2:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of matrices. "
                           f"Got {len(self._sizes)}-D tensor.")
    t = ops.transpose(self, -2, -1)
    return ops.conj(t) if self.dtype.is_complex else t  # the conjugate transpose, as mH


@kernel(_CIA)
def diag_embed(self, offset=0, dim1=-2, dim2=-1):
    """Matrices whose ``offset`` diagonal (in the plane ``dim1``, ``dim2`` of the result) is the last dim."""
    n = len(self._sizes) + 1
    d1, d2 = wrap_dim(dim1, n), wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    src = self if self._sizes else ops.reshape(self, (1,))
    size = src._sizes[-1] + abs(offset)
    out = ops.zeros(src._sizes[:-1] + (size, size), dtype=self.dtype, device=self.device)
    out = _put_diagonal(out, src, offset)
    return ops.movedim(out, [n - 2, n - 1], [d1, d2])


def _put_diagonal(out, src, offset):
    """``out`` with its last two dims' ``offset`` diagonal replaced by ``src``'s last dim (index_put: its
    formulas differentiate both, and save nothing a later write could invalidate)."""
    k = src._sizes[-1] if src._sizes else 0
    i = ops.arange(0, k, device=out.device)
    rows, cols = ops.add(i, max(-offset, 0)), ops.add(i, max(offset, 0))
    lead = len(out._sizes) - 2
    return ops.index_put(out, [None] * lead + [rows, cols], src)


@kernel(_CIA)
def diagflat(self, offset=0):
    return ops.diag(ops.reshape(self, (-1,)), offset)


@kernel(_CIA)
def vander(x, N=None, increasing=False):  # noqa: N803 - torch's argument name
    """Columns ``x ** 0 .. x ** (N - 1)`` (reversed unless ``increasing``), as torch: a cumulative product,
    integers and bool promoted to int64."""
    if len(x._sizes) != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x._sizes[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = x.dtype if x.dtype.is_floating_point or x.dtype.is_complex else int64
    ones = ops.ones((x._sizes[0], min(n, 1)), dtype=dtype, device=x.device)
    if n > 1:
        col = ops.unsqueeze(x if x.dtype is dtype else x.to(dtype), 1)
        ones = ops.cat([ones, ops.cumprod(ops.expand(col, (x._sizes[0], n - 1)), 1)], 1)
    return ones if increasing else ops.flip(ones, [1])


# ---------------------------------------------------------------- shapes and joining
def _atleast(t, n: int):
    k = len(t._sizes)
    if k >= n:
        return t
    if n == 1 or k == 0:
        return ops.reshape(t, (1,) * (n - k) + t._sizes)
    if n == 2:
        return ops.unsqueeze(t, 0)
    return ops.unsqueeze(ops.unsqueeze(t, 0), 2) if k == 1 else ops.unsqueeze(t, 2)


@kernel(_CIA)
def atleast_1d(self):
    return _atleast(self, 1)


@kernel(_CIA)
def atleast_2d(self):
    return _atleast(self, 2)


@kernel(_CIA)
def atleast_3d(self):
    return _atleast(self, 3)


@kernel(_CIA)
def atleast_1d_sequence(tensors):
    return [_atleast(t, 1) for t in tensors]


@kernel(_CIA)
def atleast_2d_sequence(tensors):
    return [_atleast(t, 2) for t in tensors]


@kernel(_CIA)
def atleast_3d_sequence(tensors):
    return [_atleast(t, 3) for t in tensors]


def _nonempty(tensors, name: str) -> None:
    if not isinstance(tensors, (list, tuple)):  # a tensor is not a sequence of tensors here, as in torch
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    if len(tensors) == 0:
        raise RuntimeError(f"{name} expects a non-empty TensorList")


@kernel(_CIA)
def hstack(tensors):
    _nonempty(tensors, "hstack")
    rs = [_atleast(t, 1) for t in tensors]
    return ops.cat(rs, 0 if len(rs[0]._sizes) == 1 else 1)


@kernel(_CIA)
def vstack(tensors):
    _nonempty(tensors, "vstack")
    return ops.cat([_atleast(t, 2) for t in tensors], 0)


@kernel(_CIA)
def row_stack(tensors):
    _nonempty(tensors, "row_stack")
    return vstack(tensors)


@kernel(_CIA)
def dstack(tensors):
    _nonempty(tensors, "dstack")
    return ops.cat([_atleast(t, 3) for t in tensors], 2)


@kernel(_CIA)
def column_stack(tensors):
    _nonempty(tensors, "column_stack")
    cols = [ops.reshape(t, (t.numel(), 1)) if len(t._sizes) <= 1 else t for t in tensors]
    return ops.cat(cols, 1)


_SPLIT_DIM = {"hsplit": (1, 1), "vsplit": (0, 2), "dsplit": (2, 3)}  # name -> (dim, the least ndim)


def _split_check(self, name: str) -> int:
    dim, least = _SPLIT_DIM[name]
    n = len(self._sizes)
    if name == "hsplit":
        if n < 1:
            raise RuntimeError(f"torch.hsplit requires a tensor with at least 1 dimension, but got a tensor with {n} "
                               "dimensions!")
        return 1 if n > 1 else 0
    if n < least:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {least} dimension, but got a tensor with "
                           f"{n} dimensions!")
    return dim


def _split_sections(self, sections, name: str):
    dim = _split_check(self, name)
    if sections == 0 or self._sizes[dim] % sections != 0:
        raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the dimension "
                           f"{self._sizes[dim]} is not divisible by the split_size {sections}!")
    return ops.tensor_split(self, sections, dim)


def _split_indices(self, indices, name: str):
    return ops.tensor_split(self, int_list(indices), _split_check(self, name))


for _name in _SPLIT_DIM:
    def _int(self, sections, _name=_name):
        return _split_sections(self, sections, _name)

    def _array(self, indices, _name=_name):
        return _split_indices(self, indices, _name)

    _int.__name__, _array.__name__ = f"{_name}_int", f"{_name}_array"
    kernel(_CIA)(_int)
    kernel(_CIA)(_array)
del _name


@kernel(_CIA)
def unfold(self, dimension, size, step):
    """The view of every ``size``-long window along ``dimension``, ``step`` apart, as a new last dim."""
    n = len(self._sizes)
    d = wrap_dim(dimension, max(n, 1))
    length = self._sizes[d] if n else 1
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {length} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    stride = self._strides[d] if n else 1
    if n == 0:
        return ops.as_strided(self, (size,), (1,), self._offset)
    sizes = self._sizes[:d] + ((length - size) // step + 1,) + self._sizes[d + 1:] + (size,)
    strides = self._strides[:d] + (stride * step,) + self._strides[d + 1:] + (stride,)
    return ops.as_strided(self, sizes, strides, self._offset)


# ---------------------------------------------------------------- scatters: a copy of self with a view written
def _scatter_into(self, src, view_fn):
    out = ops.clone(self)
    view = view_fn(out)
    if view._sizes != src._sizes:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src._sizes)}, "
                           f"slice size = {list(view._sizes)}")
    ops.copy_(view, src)
    return out


@kernel(_CIA)
def diagonal_scatter(self, src, offset=0, dim1=0, dim2=1):
    n = len(self._sizes)
    view = ops.diagonal(self, offset, dim1, dim2)
    if view._sizes != src._sizes:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src._sizes)}, "
                           f"slice size = {list(view._sizes)}")
    d1, d2 = wrap_dim(dim1, n), wrap_dim(dim2, n)
    moved = ops.movedim(self, [d1, d2], [n - 2, n - 1])
    return ops.movedim(_put_diagonal(moved, src, offset), [n - 2, n - 1], [d1, d2])


@kernel(_CIA)
def select_scatter(self, src, dim, index):
    return _scatter_into(self, src, lambda t: ops.select(t, dim, index))


@kernel(_CIA)
def slice_scatter(self, src, dim=0, start=None, end=None, step=1):
    return _scatter_into(self, src, lambda t: ops.slice(t, dim, start, end, step))


@kernel(_CIA)
def as_strided_scatter(self, src, size, stride, storage_offset=None):
    """``self`` (as a contiguous tensor) with the elements ``as_strided(size, stride, storage_offset)`` would
    view replaced by ``src``: an index_put at their linear positions."""
    size, stride = int_list(size), int_list(stride)
    shape = tuple(size)
    if src._sizes != shape:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src._sizes)}, "
                           f"slice size = {list(shape)}")
    offset = storage_offset or 0
    needed = 0 if 0 in shape else offset + 1 + sum((n - 1) * st for n, st in zip(size, stride))
    if needed > self.numel():  # the view of ``self``'s contiguous copy would reach past its storage
        item = self.dtype.itemsize
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
                           f"itemsize {item} requiring a storage size of {needed * item} are out of bounds for "
                           f"storage of size {self.numel() * item}")
    index = ops.full(shape, offset, dtype=int64, device=self.device)
    for d, (n, st) in enumerate(zip(size, stride)):
        step = ops.mul(ops.arange(0, n, device=self.device), st)
        index = ops.add(index, ops.reshape(step, (n,) + (1,) * (len(size) - d - 1)))
    flat = ops.reshape(ops.contiguous(self), (-1,))
    return ops.reshape(ops.index_put(flat, [ops.reshape(index, (-1,))], ops.reshape(src, (-1,))), self._sizes)


def _word(d) -> str:
    from ...backends.meta.pointwise import scalar_type_name

    return scalar_type_name(d)
