"""CompositeImplicitAutograd ops that select or count elements: masked_select, nan_to_num,
count_nonzero, take_along_dim. Autograd goes through the indexing, ``where`` and comparisons they use."""

from __future__ import annotations

from ... import dtypes as dt
from ...backends.meta.common import broadcast_shapes, wrap_dim
from ...backends.meta.reductions import type_name
from ...dispatch.library import kernel
from ...type_info import finfo
from .. import bound as ops

__all__ = []


@kernel("CompositeImplicitAutograd")
def masked_select(self, mask):
    """The elements of ``self`` where the (broadcast) bool ``mask`` is True, as a 1-D tensor."""
    if mask.dtype is not dt.bool:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = broadcast_shapes(self._sizes, mask._sizes) or (1,)  # 0-dim operands: one element to select or not
    return ops.index(ops.expand(self, shape), [ops.expand(mask, shape)])


@kernel("CompositeImplicitAutograd")
def nan_to_num(self, nan=None, posinf=None, neginf=None):
    """NaN -> ``nan`` (0), +inf -> ``posinf`` (the dtype's max), -inf -> ``neginf`` (its lowest)."""
    for name, v in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise TypeError(f"nan_to_num(): argument '{name}' must be float, not {type(v).__name__}")
    if self.dtype.is_complex:  # torch's: each part apart, with the part dtype's limits
        return ops.complex(nan_to_num(ops.real(self), nan, posinf, neginf),
                           nan_to_num(ops.imag(self), nan, posinf, neginf))
    if not self.dtype.is_floating_point:
        return ops.clone(self)
    info = finfo(self.dtype)
    out = ops.where(ops.isnan(self), 0.0 if nan is None else nan, self)
    out = ops.where(ops.eq(self, float("inf")), info.max if posinf is None else posinf, out)
    return ops.where(ops.eq(self, float("-inf")), info.min if neginf is None else neginf, out)


@kernel("CompositeImplicitAutograd")
def count_nonzero(self, dim=None):
    """The number of nonzero elements (over ``dim``, one int or a list), as int64."""
    dims = [] if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    return ops.sum(ops.ne(self, 0), dims) if dims else ops.sum(ops.ne(self, 0))


@kernel("CompositeImplicitAutograd")
def take_along_dim(self, indices, dim=None):
    """``gather`` along ``dim`` with ``self`` and ``indices`` broadcast against each other in the other
    dims; without ``dim``, over the flattened tensor."""
    if indices.dtype is not dt.int64:
        word = type_name(indices.dtype)
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got {word}")
    if dim is None:
        return ops.gather(ops.reshape(self, (-1,)), 0, ops.reshape(indices, (-1,)))
    if self.dim() != indices.dim():
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {self.dim()} dimensions for input, and {indices.dim()} dimensions for indices")
    d = wrap_dim(dim, self.dim())
    rest_self = self._sizes[:d] + (1,) + self._sizes[d + 1:]
    rest_idx = indices._sizes[:d] + (1,) + indices._sizes[d + 1:]
    shape = list(broadcast_shapes(rest_self, rest_idx))
    self_shape, idx_shape = list(shape), list(shape)
    self_shape[d], idx_shape[d] = self._sizes[d], indices._sizes[d]
    index = ops.expand(indices, idx_shape)
    if self._sizes[d]:  # torch wraps every index along ``dim``: -1 is the last, size + 1 the second
        index = ops.remainder(index, self._sizes[d])
    return ops.gather(ops.expand(self, self_shape), d, index)
