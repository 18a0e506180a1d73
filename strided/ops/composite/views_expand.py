"""Broadcasting views: expand, expand_as, broadcast_to (stride 0 along the expanded dims; torch's
inferExpandGeometry), one kernel for every backend as the other views (``views.py``)."""

from __future__ import annotations

from ...dispatch.library import kernel
from ...tensor import Tensor
from .. import bound as ops
from .views import _type_name, alias, int_list

__all__ = ["expand_geometry"]

# Note [Expand memo]: as views (Note [View memo]), the geometry of a valid expand depends only on
# (sizes, strides, requested sizes); ``sizes`` has been through int_list (exact ints, no bools). An
# invalid request raises before anything is stored.
_EXPAND_MEMO: dict = {}


def expand_geometry(self: Tensor, sizes: tuple) -> tuple:
    """(sizes, strides) of ``self`` expanded to ``sizes`` (torch's inferExpandGeometry)."""
    tsizes, tstrides = self._sizes, self._strides
    key = (tsizes, tstrides, sizes)
    hit = _EXPAND_MEMO.get(key)
    if hit is not None:
        return hit
    if len(_EXPAND_MEMO) > 4096:
        _EXPAND_MEMO.clear()
    hit = _EXPAND_MEMO[key] = _infer_expand(self, sizes)
    return hit


def _infer_expand(self: Tensor, sizes: tuple) -> tuple:
    tsizes, tstrides = self._sizes, self._strides
    ndim, tdim = len(sizes), len(tsizes)
    if ndim < tdim:
        raise RuntimeError(
            f"expand({_type_name(self)}{{{list(tsizes)}}}, size={list(sizes)}): the number of sizes provided "
            f"({ndim}) must be greater or equal to the number of dimensions in the tensor ({tdim})"
        )
    out_sizes, out_strides = [0] * ndim, [0] * ndim
    for i in range(ndim - 1, -1, -1):
        dim = tdim - ndim + i
        if dim >= 0:
            size, stride = tsizes[dim], tstrides[dim]
        else:
            size, stride = 1, (out_sizes[i + 1] * out_strides[i + 1] if i + 1 < ndim else 1)
        target = sizes[i]
        if target == -1:
            if dim < 0:
                raise RuntimeError(
                    "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing "
                    f"dimension {i}"
                )
            target = size
        elif target < -1:
            raise RuntimeError(f"Trying to create tensor with negative dimension {target}: {list(sizes)}")
        if size != target:
            if size != 1:
                raise RuntimeError(
                    f"The expanded size of the tensor ({target}) must match the existing size ({size}) at "
                    f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  "
                    f"Tensor sizes: {list(tsizes)}"
                )
            size, stride = target, 0
        out_sizes[i], out_strides[i] = size, stride
    return tuple(out_sizes), tuple(out_strides)


@kernel("CompositeExplicitAutograd")
def expand(self, size, *, implicit=False):
    sizes, strides = expand_geometry(self, int_list(size, "expand"))
    return alias(self, sizes, strides)


@kernel("CompositeImplicitAutograd")
def expand_as(self, other):
    return ops.expand(self, other._sizes)


@kernel("CompositeImplicitAutograd")
def broadcast_to(self, size):
    return ops.expand(self, size)
