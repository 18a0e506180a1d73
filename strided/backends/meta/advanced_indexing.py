"""Meta functions for advanced indexing: ``index.Tensor`` and ``index_put``.

Note [Advanced indexing]
``indices`` holds one optional entry per leading dim of ``self`` (None takes the whole dim).
Integer entries (int64, int32) index one dim each. Boolean (and legacy uint8) masks stand for
``mask.nonzero()``: a k-d mask indexes k dims with k integer indices whose common length is the
number of true elements. The integer indices broadcast together; their broadcast shape replaces
the indexed dims in place when those dims are adjacent, and goes first otherwise (NumPy's rule,
which torch follows). A mask's true count is data, so meta tensors cannot size the result of a
mask index: backends expand masks first and size the output with ``index_output``.
"""

from __future__ import annotations

import math
import warnings

from ... import dtypes as dt
from ...device import CPU
from ...dispatch.library import kernel
from ...tensor import Tensor
from .common import check, new_output, new_output_like
from .indexing import TYPE_WORDS

__all__ = [
    "check_indices", "is_mask", "index_shape", "index_output", "check_values_shape", "check_index_put",
]

_INDEX_DTYPES = frozenset((dt.int64, dt.int32, dt.uint8, dt.bool))


def is_mask(t: Tensor) -> bool:
    return t.dtype is dt.bool or t.dtype is dt.uint8


def check_indices(self: Tensor, indices) -> list:
    """Validate an index list (dtypes, devices, count, mask shapes); the entries as a list."""
    entries = list(indices)
    ndim = len(self._sizes)
    if len(entries) > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim} (got {len(entries)})")
    dim = 0
    for idx in entries:
        if idx is None:
            dim += 1
            continue
        if idx.dtype not in _INDEX_DTYPES:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        if idx.device is not self.device and idx.device is not CPU:
            raise RuntimeError(
                f"indices should be either on cpu or on the same device as the indexed tensor ({self.device})"
            )
        if not is_mask(idx):
            dim += 1
            continue
        if idx.dtype is dt.uint8:
            warnings.warn("indexing with dtype strided.uint8 is now deprecated, please use a dtype "
                          "strided.bool instead.", UserWarning, stacklevel=4)
        if not idx._sizes:
            raise IndexError("index(): a 0-dim boolean index is not supported here; index with a Python "
                             "bool (x[True]) instead")
        if dim + len(idx._sizes) > ndim:
            raise IndexError(f"too many indices for tensor of dimension {ndim} (got {dim + len(idx._sizes)})")
        for j, size in enumerate(idx._sizes):
            if size != self._sizes[dim + j]:
                raise IndexError(
                    f"The shape of the mask {list(idx._sizes)} at index {j} does not match the shape of the "
                    f"indexed tensor {list(self._sizes)} at index {dim + j}"
                )
        dim += len(idx._sizes)
    return entries


def _broadcast(shapes) -> tuple:
    ndim = max(len(s) for s in shapes)
    out = [1] * ndim
    for s in shapes:
        for i, n in enumerate(s, ndim - len(s)):
            if n != out[i]:
                if out[i] != 1 and n != 1:
                    raise IndexError(
                        "shape mismatch: indexing tensors could not be broadcast together with shapes "
                        + ", ".join(str(list(x)) for x in shapes)
                    )
                if out[i] == 1:
                    out[i] = n
    return tuple(out)


def index_shape(sizes: tuple, dims) -> tuple:
    """The shape of ``self[dims]``; ``dims[d]`` is None or the shape of an integer index of dim d."""
    positions = [d for d, s in enumerate(dims) if s is not None]
    if not positions:
        return sizes
    for d in positions:
        if sizes[d] == 0 and math.prod(dims[d]):
            raise IndexError("index is out of bounds for dimension with size 0")
    shape = _broadcast([dims[d] for d in positions])
    first, last = positions[0], positions[-1]
    if last - first + 1 == len(positions):  # adjacent: the broadcast dims replace them in place
        return sizes[:first] + shape + sizes[last + 1:]
    taken = set(positions)
    return shape + tuple(s for d, s in enumerate(sizes) if d not in taken)


def index_output(self: Tensor, dims) -> Tensor:
    """The (contiguous) output of ``index`` once masks are expanded to integer index shapes."""
    return new_output(index_shape(self._sizes, dims), self.dtype, self.device)


def check_values_shape(values: Tensor, shape: tuple) -> None:
    """``values`` must expand to the indexing result's ``shape``."""
    v = values._sizes
    ok = len(v) <= len(shape) and all(n == 1 or n == m for n, m in zip(v, shape[len(shape) - len(v):]))
    check(ok, lambda: f"shape mismatch: value tensor of shape {list(v)} cannot be broadcast to indexing "
                      f"result of shape {list(shape)}")


@kernel("Meta")
def index(self, indices):
    entries = check_indices(self, indices)
    if any(e is not None and is_mask(e) for e in entries):
        raise NotImplementedError(
            "aten::index: a boolean mask index gives a data-dependent shape, which meta tensors (no data) "
            "cannot compute"
        )
    return index_output(self, [None if e is None else e._sizes for e in entries])


def _masked_fill_case(entries, values, accumulate) -> bool:
    """torch's canDispatchToMaskedFill: one mask (other entries None) and a one-element CPU value.

    torch then runs ``masked_fill_(mask, value.item())``: the value is cast to self's dtype and its
    shape is ignored, where index_put otherwise requires matching dtypes and broadcastable shapes.
    """
    if accumulate or values.numel() != 1 or values.device is not CPU:
        return False
    given = [e for e in entries if e is not None]
    return len(given) == 1 and is_mask(given[0])


def check_index_put(self: Tensor, entries, values: Tensor, accumulate: bool, dims=None) -> None:
    """Validate an index_put of checked ``entries`` (for the functional and in-place forms).

    ``dims`` are the expanded integer index shapes when the caller knows them (backends, after
    expanding masks); without them the value's shape is checked only when there is no mask.
    """
    check(values.device is self.device or (values.device is CPU and not values._sizes),
          lambda: "Expected all tensors to be on the same device, but found at least two devices, "
                  f"{self.device} and {values.device}!")
    if not _masked_fill_case(entries, values, accumulate):
        if dims is None and not any(e is not None and is_mask(e) for e in entries):
            dims = [None if e is None else e._sizes for e in entries]
        if dims is not None:
            check_values_shape(values, index_shape(self._sizes, dims))
        check(values.dtype is self.dtype,
              lambda: "Index put requires the source and destination dtypes match, got "
                      f"{TYPE_WORDS[self.dtype]} for the destination and {TYPE_WORDS[values.dtype]} for the "
                      "source.")


@kernel("Meta")
def index_put(self, indices, values, accumulate=False):
    check_index_put(self, check_indices(self, indices), values, accumulate)
    return new_output_like(self)
