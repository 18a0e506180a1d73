"""Python indexing: ``Tensor.__getitem__`` and ``Tensor.__setitem__`` (torch's semantics).

Note [Indexing as views]
Basic indices (ints, slices, None, Ellipsis) turn into view ops, walking the index left to right
with a pointer into the dims of the view built so far: an int selects (``select.int``: the dim
goes away), a slice narrows (``slice.Tensor``), None adds a dim (``unsqueeze``), Ellipsis skips
the dims no other index names. The result shares memory with the tensor. Tensor indices (integer
tensors, boolean masks, lists, arrays) are collected at the pointer's position and applied after
the walk with one advanced-indexing op on the view (``index.Tensor``, or ``index_put_`` for
assignment), which copies. Because ints are applied first as views, an int never counts as an
advanced index: ``x[0, :, [0, 1]]`` has shape ``(3, 2)`` for ``x`` of shape ``(2, 3, 4)``, where
NumPy gives ``(2, 3)``; otherwise the result is NumPy's.

Note [Index conversions]
A 0-dim integer tensor is an int (a view, as in torch); a 0-dim bool (or uint8) tensor and a
Python bool add a dim of size 1 and index it with ``[0]`` (True) or ``[]`` (False), as torch
does. A list (or NumPy array) is always a tensor index: ``x[[0, 1]]`` takes rows 0 and 1, and
``x[[[0, 1], [1, 2]]]`` is one 2-d index -- NumPy's rule, and torch's after its deprecation of
reading such lists as tuples.
"""

from __future__ import annotations

import numbers
import operator

import numpy as np

from . import dtypes as dt
from .ops import bound as ops
from .tensor import Tensor

__all__ = ["getitem", "setitem"]

_MASK_DTYPES = (dt.bool, dt.uint8)


def _index_error(obj) -> IndexError:
    return IndexError(
        "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices "
        f"(got {type(obj).__name__})"
    )


def _as_index_tensor(obj, device) -> Tensor:
    """A list / tuple / array index as an index tensor on ``device`` (Note [Index conversions])."""
    from .factories import tensor

    try:
        arr = np.asarray(obj)
    except ValueError:
        raise IndexError(f"could not convert {type(obj).__name__} to an index tensor (ragged?)") from None
    if arr.size == 0:
        arr = arr.astype(np.int64)
    if arr.dtype.kind == "b":
        return tensor(arr, dtype=dt.bool, device=device)
    if arr.dtype.kind not in "iu":
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return tensor(arr, dtype=dt.int64, device=device)


def _normalize(self: Tensor, index) -> list:
    """The index as a list of ints, slices, None, Ellipsis, bools and tensors."""
    items = list(index) if type(index) is tuple else [index]
    for i, obj in enumerate(items):
        if obj is None or obj is Ellipsis or type(obj) is slice or type(obj) is int:
            continue
        if isinstance(obj, Tensor):
            continue
        if isinstance(obj, (bool, np.bool_)):
            items[i] = bool(obj)
        elif isinstance(obj, (list, tuple, np.ndarray)):
            items[i] = _as_index_tensor(obj, self.device)
        elif isinstance(obj, (numbers.Integral, np.integer)):
            items[i] = operator.index(obj)
        else:
            raise _index_error(obj)
    return items


def _specified_dims(items) -> int:
    n = 0
    for obj in items:
        if isinstance(obj, Tensor):
            n += len(obj._sizes) if obj.dtype in _MASK_DTYPES else 1
        elif obj is not None and obj is not Ellipsis and type(obj) is not bool:
            n += 1
    return n


def _select(view: Tensor, dim: int, i: int, real_dim: int) -> Tensor:
    sizes = view._sizes
    if not sizes:
        raise IndexError(
            "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to "
            "convert a 0-dim tensor to a number"
        )
    size = sizes[dim]
    if not -size <= i < size:
        raise IndexError(f"index {i} is out of bounds for dimension {real_dim} with size {size}")
    return ops.select(view, dim, i)


def _slice(view: Tensor, dim: int, s: slice) -> Tensor:
    start, stop, step = s.start, s.stop, s.step
    step = 1 if step is None else operator.index(step)
    if step <= 0:  # torch's words: a zero step is Python's slice error, a negative one torch's
        raise ValueError("slice step cannot be zero" if step == 0 else "step must be greater than zero")
    if start is None and stop is None and step == 1:
        return view  # the whole dim (torch skips the view too)
    start = None if start is None else operator.index(start)
    stop = None if stop is None else operator.index(stop)
    return ops.slice(view, dim, start, stop, step)


def _bool_index(value: bool, device) -> Tensor:
    """The index of the size-1 dim a bool adds: ``[0]`` keeps it, ``[]`` empties it."""
    from .factories import tensor

    return tensor([0] if value else [], dtype=dt.int64, device=device)


def _apply(self: Tensor, index):
    """Apply the basic part of ``index`` as views (Note [Indexing as views]).

    Returns the view and the advanced indices (a list of Tensor-or-None, one per leading dim of
    the view) or None when there are none.
    """
    items = _normalize(self, index)
    ndim = len(self._sizes)
    specified = _specified_dims(items)
    if specified > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    view = self
    dim = real_dim = 0
    advanced = None
    seen_ellipsis = False
    for obj in items:
        if type(obj) is int:
            view = _select(view, dim, obj, real_dim)
            real_dim += 1
        elif type(obj) is slice:
            view = _slice(view, dim, obj)
            dim += 1
            real_dim += 1
        elif obj is None:
            view = ops.unsqueeze(view, dim)
            dim += 1
        elif obj is Ellipsis:
            if seen_ellipsis:
                raise IndexError("an index can only have a single ellipsis ('...')")
            seen_ellipsis = True
            dim += ndim - specified
            real_dim += ndim - specified
        else:
            if type(obj) is bool:
                view = ops.unsqueeze(view, dim)
                obj = _bool_index(obj, view.device)
                width = 0
            elif not obj._sizes and obj.dtype.category == dt.INTEGRAL and obj.dtype is not dt.uint8:
                view = _select(view, dim, obj.item(), real_dim)  # a 0-dim integer tensor is an int
                real_dim += 1
                continue
            elif not obj._sizes and obj.dtype in _MASK_DTYPES:
                view = ops.unsqueeze(view, dim)
                obj = _bool_index(bool(obj.item()), view.device)
                width = 0
            else:
                width = len(obj._sizes) if obj.dtype in _MASK_DTYPES else 1
            if advanced is None:
                advanced, covered = [], 0  # covered: dims of the view the list indexes so far
            advanced.extend([None] * (dim - covered))  # a mask is one entry for several dims
            advanced.append(obj)
            dim += max(width, 1)
            covered = dim
            real_dim += width
    return view, advanced


def getitem(self: Tensor, index) -> Tensor:
    """``self[index]``: a view for basic indices, a copy when any tensor index is involved."""
    kind = type(index)
    if kind is int:
        return _select(self, 0, index, 0)
    if kind is slice and self._sizes:
        view = _slice(self, 0, index)
        return ops.view.default(self, self._sizes) if view is self else view
    view, advanced = _apply(self, index)
    if advanced is not None:
        return ops.index(view, advanced)
    return ops.view.default(view, view._sizes) if view is self else view


def _strip_leading_ones(value: Tensor) -> Tensor:
    """Drop leading size-1 dims of an assigned value (torch's slicePrefix1sDims)."""
    sizes = value._sizes
    k = 0
    while k < len(sizes) and sizes[k] == 1:
        k += 1
    return ops.view.default(value, sizes[k:]) if k else value


def _type_string(t: Tensor) -> str:
    from .backends.meta.indexing import type_string

    return type_string(t)


def setitem(self: Tensor, index, value) -> None:
    """``self[index] = value``: basic indices copy (or fill) into a view, tensor indices index_put_."""
    if isinstance(value, Tensor):
        scalar = None
    elif isinstance(value, (numbers.Number, np.bool_, np.number)):
        scalar = value
    else:
        kind = type(value)
        name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
        raise TypeError(f"can't assign a {name} to a {_type_string(self)}")
    if scalar is not None and self.dtype in _HALF_TYPES:
        # torch's scalarToTensor: a half destination takes any real Scalar (overflowing to inf), not fill_'s check
        scalar = _half_scalar(scalar, self.dtype)
    if type(index) is int and scalar is not None:
        _select(self, 0, index, 0).fill_(scalar)
        return
    if index is False:
        return  # torch: a lone False selects nothing, so nothing is written (nor checked)
    if index is True:
        index = None  # torch: a lone True assigns through a new leading dim, as a plain copy
    view, advanced = _apply(self, index)
    if advanced is None:
        if scalar is not None:
            view.fill_(scalar)
        else:
            value = _strip_leading_ones(value)
            if value._sizes != view._sizes:
                value = ops.expand(value, view._sizes)
            view.copy_(value)
        return
    if scalar is not None:
        # torch's scalarToTensor: a 0-dim CPU tensor of self's dtype (it joins any device), checked as fill_ is
        from .backends.cpu.common import scalar_as
        from .backends.meta.pointwise import check_scalar_fits
        from .factories import from_numpy

        check_scalar_fits(scalar, self.dtype)
        value = from_numpy(np.asarray(scalar_as(scalar, self.dtype)))
    else:
        value = _strip_leading_ones(value)
    view.index_put_(advanced, value)


_HALF_TYPES = (dt.float16, dt.bfloat16)


def _half_scalar(scalar, d) -> float:
    """``scalar`` rounded to the half type ``d`` (inf past its range), as a float that fill_ takes; a complex
    one must have no imaginary part."""
    if isinstance(scalar, (complex, np.complexfloating)):
        if scalar.imag != 0:  # torch converts through double here
            raise RuntimeError("value cannot be converted to type double without overflow")
        scalar = scalar.real
    with np.errstate(over="ignore"):
        return float(np.asarray(float(scalar)).astype(d.numpy_dtype))
