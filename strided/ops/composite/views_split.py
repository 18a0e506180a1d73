"""Narrowing views: slice, select, narrow, and the ops that cut a tensor into views (split, chunk, unbind,
tensor_split).

Each result aliases its input's storage (Note [View base] in ``views``).
"""

from __future__ import annotations

import operator

from ...autograd.graph import AutogradMeta
from ...backends.meta.common import wrap_dim
from ...backends.meta.reductions import type_name
from ...dispatch.library import kernel
from .. import bound as ops
from .views import alias, int_list

__all__ = []


def _index(value) -> int:
    return value if type(value) is int else operator.index(value)


@kernel("CompositeExplicitAutograd")
def slice(self, dim=0, start=None, end=None, step=1):  # noqa: A001 - the op's name
    n = len(self._sizes)
    if n == 0:
        raise RuntimeError("slice() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, n)
    step = _index(step)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    size = self._sizes[d]
    # Python's clamping: negative bounds count from the end, then clip to [0, size], end >= start.
    start = 0 if start is None else _index(start)
    end = size if end is None else _index(end)
    if start < 0:
        start += size
    if end < 0:
        end += size
    start = 0 if start < 0 else (size if start > size else start)
    end = start if end < start else (size if end > size else end)
    stride = self._strides[d]
    sizes = self._sizes[:d] + ((end - start + step - 1) // step,) + self._sizes[d + 1:]
    strides = self._strides[:d] + (stride * step,) + self._strides[d + 1:]
    return alias(self, sizes, strides, self._offset + start * stride)


@kernel("CompositeExplicitAutograd")
def select(self, dim, index):
    n = len(self._sizes)
    if n == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, n)
    size = self._sizes[d]
    i = _index(index)
    if not -size <= i < size:
        raise IndexError(
            f"select(): index {i} out of range for tensor of size {list(self._sizes)} at dimension {d}"
        )
    if i < 0:
        i += size
    return alias(self, self._sizes[:d] + self._sizes[d + 1:], self._strides[:d] + self._strides[d + 1:],
                 self._offset + i * self._strides[d])


@kernel("CompositeImplicitAutograd")
def narrow(self, dim, start, length):
    n = len(self._sizes)
    if n == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, n)
    if hasattr(start, "_sizes") and (start._sizes or start.dtype.is_floating_point or start.dtype.is_complex):
        raise RuntimeError("start must be an 0-dim integral Tensor.")  # torch's narrow.Tensor
    start, length = _index(start), _index(length)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    size = self._sizes[d]
    if not -size <= start <= size:
        raise IndexError(
            f"start out of range (expected to be in range of [{-size}, {size}], but got {start})"
        )
    if start < 0:
        start += size
    if start > size - length:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return ops.slice(self, d, start, start + length, 1)


@kernel("CompositeExplicitAutograd")
def split(self, split_size, dim=0):
    n = len(self._sizes)
    if n == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, n)
    split_size = _index(split_size)
    if split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={split_size}")
    size = self._sizes[d]
    if split_size == 0 and size != 0:
        raise RuntimeError(
            f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}"
        )
    num_splits = max((size + split_size - 1) // split_size, 1) if split_size else 1
    last = split_size - (split_size * num_splits - size)
    return _multi_output(self, [_narrow(self, d, i * split_size, split_size if i < num_splits - 1 else last)
                                for i in range(num_splits)])


def _multi_output(self, views: list) -> list:
    """Mark the outputs of a function that returns several views, when autograd tracks them
    (Note [Multi-output views])."""
    base = self._base
    if (self if base is None else base)._requires_grad:
        for v in views:
            meta = v._autograd
            if meta is None:
                meta = v._autograd = AutogradMeta()
            meta.multi_output = True
    return views


def _narrow(self, d, start, length):
    stride = self._strides[d]
    return alias(self, self._sizes[:d] + (length,) + self._sizes[d + 1:], self._strides,
                 self._offset + start * stride)


@kernel("CompositeExplicitAutograd")
def split_with_sizes(self, split_sizes, dim=0):
    n = len(self._sizes)
    if n == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, n)
    sizes = int_list(split_sizes, "split_with_sizes", "split_sizes")
    size = self._sizes[d]
    for s in sizes:
        if s < 0:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes have only non-negative entries, but got "
                f"split_sizes={list(sizes)}"
            )
    if sum(sizes) != size:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size at "
            f"dimension {d}), but got split_sizes={list(sizes)}"
        )
    out, start = [], 0
    for s in sizes:
        out.append(_narrow(self, d, start, s))
        start += s
    return _multi_output(self, out)


@kernel("CompositeImplicitAutograd")
def chunk(self, chunks, dim=0):
    n = len(self._sizes)
    if n == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    chunks = _index(chunks)
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, n)
    size = self._sizes[d]
    split_size = (size + chunks - 1) // chunks
    if split_size == 0 and size == 0:
        # every chunk is empty: torch returns `chunks` empty views
        return ops.split_with_sizes(self, [0] * chunks, d)
    return ops.split(self, split_size, d)


@kernel("CompositeExplicitAutograd")
def unbind(self, dim=0):
    n = len(self._sizes)
    if n == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = wrap_dim(dim, n)
    sizes = self._sizes[:d] + self._sizes[d + 1:]
    strides = self._strides[:d] + self._strides[d + 1:]
    stride, offset = self._strides[d], self._offset
    return _multi_output(self, [alias(self, sizes, strides, offset + i * stride) for i in range(self._sizes[d])])


def _tensor_split_dim(self, dim) -> int:
    if self.dim() == 0:
        raise RuntimeError(f"tensor_split expected at least a 1-dimensional tensor, but got a tensor with "
                           f"{self.dim()} dims")
    return wrap_dim(dim, self.dim())


@kernel("CompositeImplicitAutograd")
def tensor_split_sections(self, sections, dim=0):
    """``sections`` views along ``dim``, the first ``size % sections`` one element longer."""
    d = _tensor_split_dim(self, dim)
    sections = _index(sections)
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    size = self._sizes[d]
    base, extra = divmod(size, sections)
    out, start = [], 0
    for i in range(sections):
        end = start + base + (1 if i < extra else 0)
        out.append(ops.slice(self, d, start, end))
        start = end
    return out


@kernel("CompositeImplicitAutograd")
def tensor_split_indices(self, indices, dim=0):
    """Views between consecutive ``indices`` along ``dim`` (clamped to the size, as slicing)."""
    d = _tensor_split_dim(self, dim)
    indices = int_list(indices, "tensor_split", "indices")
    out, start = [], 0
    for i in indices:
        out.append(ops.slice(self, d, start, i))
        start = i
    out.append(ops.slice(self, d, start, None))
    return out


@kernel("CompositeImplicitAutograd")
def tensor_split_tensor_indices_or_sections(self, tensor_indices_or_sections, dim=0):
    """``tensor_split`` with a CPU int64 tensor: 0-dim = sections, 1-dim = indices."""
    t = tensor_indices_or_sections
    if t.device.type != "cpu":
        raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be on cpu, but it's on {t.device}")
    if t.dtype.name != "int64":
        word = type_name(t.dtype)
        raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype of long, but got {word}")
    if t.dim() > 1:
        raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                           f"one-dimensional tensor, but got a tensor with {t.dim()} dims")
    values = t.numpy().tolist()
    if t.dim() == 0:
        return tensor_split_sections(self, int(values), dim)
    return tensor_split_indices(self, [int(v) for v in values], dim)
