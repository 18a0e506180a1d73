"""Meta functions for advanced indexing: ``index.Tensor`` and ``index_put``.

Note [Advanced indexing]
``indices`` holds one optional entry per leading dim of ``self`` (None takes the whole dim).
Integer entries (int64, int32) index one dim each. Boolean (and legacy uint8) masks stand for
``mask.nonzero()``: a k-d mask indexes k dims with k integer indices whose common length is the
number of true elements. The integer indices broadcast together; their broadcast shape replaces
the indexed dims in place when those dims are adjacent, and goes first otherwise (NumPy's rule,
which torch follows). A mask's true count is data, so meta tensors cannot size the result of a
mask index: backends expand masks first and size the output with ``index_output``.

Note [Index preparation]
Every backend prepares advanced indices the same way, here, once: ``check_indices`` validates the
entries; ``expand_indices`` turns each mask into its nonzero() index arrays, converts the integer
indices and checks their bounds (``-size <= i < size``, torch's error text); ``index_output`` or
``check_index_put`` then size and check the result, and ``index_layout`` with ``place_indexed``
say where the broadcast index dims go. Only three steps touch data, so a backend supplies them as
an ``IndexBackend``: a mask's nonzero(), an integer index as the backend's index array, and the
first out-of-range value of each array (batched, so CUDA reads its bounds results back once).
Negative indices stay negative: the backend's gather/scatter wraps them (NumPy's fancy indexing,
the CUDA kernels' ``wrap`` flag).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import NamedTuple

from ... import dtypes as dt
from ...device import CPU
from ...dispatch.library import kernel
from ...tensor import Tensor
from .common import check, new_output, new_output_like
from .indexing import TYPE_WORDS

__all__ = [
    "check_indices", "is_mask", "index_layout", "place_indexed", "index_shape", "index_output",
    "check_values_shape", "check_index_put", "check_no_internal_overlap", "IndexBackend", "expand_indices",
    "prepare_index", "prepare_index_put",
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


def index_layout(sizes: tuple, dims) -> tuple:
    """``(positions, shape, adjacent)`` of ``self[dims]`` (at least one ``dims[d]`` not None).

    ``positions``: the indexed dims; ``shape``: their indices' broadcast shape; ``adjacent``:
    whether the indexed dims are consecutive (see ``place_indexed``).
    """
    positions = []
    for d, s in enumerate(dims):
        if s is not None:
            if not sizes[d] and math.prod(s):
                raise IndexError("index is out of bounds for dimension with size 0")
            positions.append(d)
    shape = _broadcast([dims[d] for d in positions])
    return positions, shape, positions[-1] - positions[0] + 1 == len(positions)


def place_indexed(values: tuple, positions, adjacent: bool, inserted: tuple) -> tuple:
    """``values`` (per dim of self) with the indexed dims replaced by ``inserted``: in place when
    they are adjacent, first otherwise (Note [Advanced indexing])."""
    if adjacent:
        return values[:positions[0]] + inserted + values[positions[-1] + 1:]
    return inserted + tuple(v for d, v in enumerate(values) if d not in positions)


def index_shape(sizes: tuple, dims) -> tuple:
    """The shape of ``self[dims]``; ``dims[d]`` is None or the shape of an integer index of dim d."""
    if dims.count(None) == len(dims):
        return sizes
    positions, shape, adjacent = index_layout(sizes, dims)
    return place_indexed(sizes, positions, adjacent, shape)


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


def check_no_internal_overlap(self: Tensor) -> None:
    """The in-place ``index_put_`` must not write through an expanded (stride-0) dim."""
    if 0 in self._strides and 0 not in self._sizes and any(
            st == 0 and sz > 1 for sz, st in zip(self._sizes, self._strides)):
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a single "
            "memory location. Please clone() the tensor before performing the operation."
        )


class IndexBackend(NamedTuple):
    """A backend's data-dependent steps of index preparation (Note [Index preparation])."""

    nonzero: Callable  # (self, mask) -> one 1-d index array per mask dim
    as_index: Callable  # (self, integer index tensor) -> the backend's index array for it
    first_bad: Callable  # (self, [(entry, array, size)]) -> per check the first value outside [-size, size) or None


def expand_indices(self: Tensor, entries, backend: IndexBackend) -> tuple:
    """Checked ``entries`` as ``(arrays, dims)``: per indexed dim None or an index array, and its shape.

    Masks become their nonzero() arrays; integer indices are converted and bounds-checked.
    """
    arrays, dims, checks, numbers = [], [], [], []
    for e in entries:
        if e is None:
            arrays.append(None)
            dims.append(None)
            continue
        if is_mask(e):
            for a in backend.nonzero(self, e):
                arrays.append(a)
                dims.append((len(a),))
            continue
        size = self._sizes[len(arrays)]
        a = backend.as_index(self, e)
        # A non-empty index of an empty dim is index_shape's error. torch's message numbers the
        # index tensor among the given ones, not the dim it indexes.
        if size and e.numel():
            checks.append((e, a, size))
            numbers.append(len(dims) - dims.count(None))
        arrays.append(a)
        dims.append(e._sizes)
    if checks:
        for k, (_, _, size), bad in zip(numbers, checks, backend.first_bad(self, checks)):
            if bad is not None:
                raise IndexError(f"index {bad} is out of bounds for dimension {k} with size {size}")
    return arrays, dims


def prepare_index(self: Tensor, indices, backend: IndexBackend) -> tuple:
    """``index.Tensor``'s checks and expanded indices: ``(arrays, dims, out)``."""
    arrays, dims = expand_indices(self, check_indices(self, indices), backend)
    return arrays, dims, index_output(self, dims)


def prepare_index_put(self: Tensor, indices, values: Tensor, accumulate: bool, backend: IndexBackend) -> tuple:
    """``index_put``'s checks and expanded indices: ``(arrays, dims)``."""
    entries = check_indices(self, indices)
    arrays, dims = expand_indices(self, entries, backend)
    check_index_put(self, entries, values, accumulate, dims)
    return arrays, dims


@kernel("Meta")
def index_put(self, indices, values, accumulate=False):
    check_index_put(self, check_indices(self, indices), values, accumulate)
    return new_output_like(self)
