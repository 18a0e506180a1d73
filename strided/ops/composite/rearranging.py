"""CompositeImplicitAutograd ops that rearrange or repeat elements: flip, roll, repeat, tile, outer,
swapaxes, diagonal, diag, trace, argsort, clamp_min / clamp_max / clip, repeat_interleave, diff.

Each is composed of ops that already have kernels on every backend and derivative formulas
(index_select, narrow + cat, expand + clone, as_strided, sort, clamp), so CPU, CUDA, Meta and
autograd follow from them. Errors are torch's, raised before any work.

Note [flip and roll as gathers]
torch's tensors (and strided's) have no negative strides, so ``flip`` cannot be a view: it is one
``index_select`` per flipped dimension of size > 1 with reversed indices. ``roll`` is one
``cat`` of two ``narrow`` views per shifted dimension. Both return new memory even when nothing
moves (a clone), as torch does.
"""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ...backends.meta.common import wrap_dim
from ...dispatch.library import kernel
from .. import bound as ops
from .views import int_list

__all__ = []


def _dims(dims, ndim: int, op: str) -> list[int]:
    out = [wrap_dim(d, ndim) for d in int_list(dims, op, "dims")]
    for d in out:
        if out.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return out


@kernel("CompositeImplicitAutograd")
def flip(self, dims):
    """Reverse the order of elements along ``dims`` (Note [flip and roll as gathers])."""
    out = self
    for d in _dims(dims, self.dim(), "flip"):
        n = self._sizes[d]
        if n > 1:
            out = ops.index_select(out, d, ops.arange(n - 1, -1, -1, device=self.device))
    return ops.clone(out) if out is self else out


@kernel("CompositeImplicitAutograd")
def roll(self, shifts, dims=()):
    """Shift elements cyclically along ``dims`` (over the flattened tensor when ``dims`` is empty)."""
    shifts = int_list(shifts, "roll", "shifts")
    dims = int_list(dims, "roll", "dims")
    if not shifts:
        raise RuntimeError("`shifts` required")
    if dims and not self._sizes:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    if len(shifts) != len(dims) and not (len(dims) == 0 and len(shifts) == 1):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    if not dims:
        return ops.view.default(roll(ops.reshape(self, (-1,)), shifts, (0,)), self._sizes)
    out = self
    for s, d in zip(shifts, dims):
        d = wrap_dim(d, self.dim())
        n = self._sizes[d]
        if n == 0 or s % n == 0:
            continue
        s %= n
        out = ops.cat([ops.narrow(out, d, n - s, s), ops.narrow(out, d, 0, n - s)], d)
    return ops.clone(out) if out is self else out


@kernel("CompositeImplicitAutograd")
def repeat(self, repeats):
    """Tile ``self`` ``repeats[i]`` times along each dimension (leading new dimensions allowed)."""
    repeats = int_list(repeats, "repeat", "repeats")
    nd = self.dim()
    if len(repeats) < nd:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           "tensor")
    sizes = (1,) * (len(repeats) - nd) + tuple(self._sizes)
    final = [r * s for r, s in zip(repeats, sizes)]
    for v in final:
        if v < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {v}: {final}")
    # (1, s0, 1, s1, ...) expanded to (r0, s0, r1, s1, ...), copied once and viewed as (r0*s0, r1*s1, ...)
    interleaved = [v for s in sizes for v in (1, s)]
    expanded = [v for r, s in zip(repeats, sizes) for v in (r, s)]
    x = ops.expand(ops.reshape(self, interleaved), expanded)
    return ops.view.default(ops.clone(x, memory_format="contiguous_format"), final)


@kernel("CompositeImplicitAutograd")
def tile(self, dims):
    """``repeat`` with ``dims`` padded with leading ones to ``self.dim()`` entries."""
    dims = int_list(dims, "tile", "dims")
    return repeat(self, (1,) * (self.dim() - len(dims)) + tuple(dims))


@kernel("CompositeImplicitAutograd")
def outer(self, vec2):
    """The outer product of two 1-D tensors."""
    for name, t in (("self", self), ("vec2", vec2)):
        if t.dim() != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.dim()}-D")
    return ops.mul(ops.unsqueeze(self, 1), vec2)


@kernel("CompositeImplicitAutograd")
def swapaxes(self, axis0, axis1):
    return ops.transpose(self, axis0, axis1)


@kernel("CompositeImplicitAutograd")
def swapdims(self, dim0, dim1):
    return ops.transpose(self, dim0, dim1)


@kernel("CompositeImplicitAutograd")
def diagonal(self, offset=0, dim1=0, dim2=1):
    """A view of the diagonal ``offset`` of the (dim1, dim2) planes, as the last dimension."""
    n = self.dim()
    d1, d2 = wrap_dim(dim1, n), wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    s1, s2 = self._sizes[d1], self._sizes[d2]
    length = max(0, min(s1, s2 - offset) if offset >= 0 else min(s1 + offset, s2))
    start = self._offset
    if length > 0:
        start += offset * self._strides[d2] if offset >= 0 else -offset * self._strides[d1]
    keep = [k for k in range(n) if k not in (d1, d2)]
    sizes = [self._sizes[k] for k in keep] + [length]
    strides = [self._strides[k] for k in keep] + [self._strides[d1] + self._strides[d2]]
    return ops.as_strided(self, sizes, strides, start)


@kernel("CompositeImplicitAutograd")
def diag(self, diagonal=0):
    """A 1-D tensor's square matrix with it on diagonal ``diagonal``, or a matrix's diagonal."""
    if self.dim() == 1:
        n = self._sizes[0] + abs(diagonal)
        out = ops.zeros((n, n), dtype=self.dtype, device=self.device)
        ops.diagonal(out, diagonal).copy_(self)
        return out
    if self.dim() == 2:
        return ops.clone(ops.diagonal(self, diagonal))
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {self.dim()}D")


@kernel("CompositeImplicitAutograd")
def trace(self):
    """The sum of a matrix's main diagonal (integers sum to int64, as ``sum``)."""
    if self.dtype is dt.bool and self.device.type != "cuda":  # torch's CPU AT_DISPATCH error, before the shape
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")  # (its CUDA kernel sums bools to int64)
    if self.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {self.dim()}")
    return ops.sum(ops.diagonal(self))


@kernel("CompositeImplicitAutograd")
def argsort(self, dim=-1, descending=False):
    return ops.sort(self, dim, descending)[1]


@kernel("CompositeImplicitAutograd")
def argsort_stable(self, *, stable, dim=-1, descending=False):
    return ops.sort(self, stable=stable, dim=dim, descending=descending)[1]


@kernel("CompositeImplicitAutograd")
def clamp_min(self, min):  # noqa: A002 - torch's argument name
    return ops.clamp(self, min, None)


@kernel("CompositeImplicitAutograd")
def clamp_max(self, max):  # noqa: A002 - torch's argument name
    return ops.clamp(self, None, max)


@kernel("CompositeImplicitAutograd")
def clip(self, min=None, max=None):  # noqa: A002 - torch's argument names
    return ops.clamp(self, min, max)



# Note [repeat_interleave with tensor repeats]
# The result's length is the sum of the repeats: data. As torch, the repeats are read on the host
# (a synchronization on CUDA) unless ``output_size`` is given and the repeats stay where they are;
# meta tensors have no values, so there it raises NotImplementedError. The index is then
# ``arange(len(repeats))`` with each entry repeated, and the op is an ``index_select``.
def _repeat_index(repeats, output_size):
    d = repeats.dtype
    if d is dt.bool or d.is_floating_point or d.is_complex:  # torch's kernel takes every integer dtype, first
        from ...backends.meta.pointwise import not_implemented

        raise not_implemented(f"repeat_interleave_{repeats.device.type}", d)
    if repeats.dim() != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats.device.type == "meta":
        raise NotImplementedError("aten::repeat_interleave: the output length is the sum of the repeats, which "
                                  "meta tensors (no data) cannot compute")
    counts = repeats.numpy(force=True).astype(np.int64)
    if (counts < 0).any():
        raise RuntimeError("repeats can not be negative")
    total = int(counts.sum())
    if output_size is not None and output_size != total:
        raise RuntimeError(f"repeat_interleave: output_size {output_size} is not the sum of the repeats, {total}")
    index = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    return _index_tensor(index, repeats.device)


def _index_tensor(index, device):
    from ...factories import tensor

    return tensor(index, dtype=dt.int64, device=device)


@kernel("CompositeImplicitAutograd")
def repeat_interleave_Tensor(repeats, *, output_size=None):
    """``arange(len(repeats))`` with entry i repeated ``repeats[i]`` times, in the repeats' dtype (as torch)."""
    index = _repeat_index(repeats, output_size)
    return index if index.dtype is repeats.dtype else index.to(repeats.dtype)


@kernel("CompositeImplicitAutograd")
def repeat_interleave_self_Tensor(self, repeats, dim=None, *, output_size=None):
    """Each slice of ``self`` along ``dim`` (flattened when None) repeated ``repeats[i]`` times."""
    if dim is None:
        self, dim = ops.reshape(self, (-1,)), 0
    d = wrap_dim(dim, self.dim())
    if repeats.dim() > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if repeats.dim() == 0 or repeats._sizes[0] == 1:
        repeats = ops.expand(ops.reshape(repeats, (1,)), (self._sizes[d],))
    elif repeats._sizes[0] != self._sizes[d]:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                           f"{repeats._sizes[0]} and input.size({d}) = {self._sizes[d]}")
    return ops.index_select(self, d, _repeat_index(repeats, output_size))


@kernel("CompositeImplicitAutograd")
def repeat_interleave_self_int(self, repeats, dim=None, *, output_size=None):
    """Each slice of ``self`` along ``dim`` (flattened when None) repeated ``repeats`` times (a copy)."""
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    if dim is None:
        self, dim = ops.reshape(self, (-1,)), 0
    d = wrap_dim(dim, self.dim())
    sizes = list(self._sizes)
    x = ops.unsqueeze(self, d + 1)
    expanded = sizes[:d + 1] + [repeats] + sizes[d + 1:]
    sizes[d] *= repeats
    if output_size is not None and output_size != sizes[d]:
        raise RuntimeError(f"repeat_interleave: output_size {output_size} is not {sizes[d]}")
    return ops.reshape(ops.clone(ops.expand(x, expanded), memory_format="contiguous_format"), sizes)


@kernel("CompositeImplicitAutograd")
def diff(self, n=1, dim=-1, prepend=None, append=None):
    """The n-th forward difference along ``dim`` (``logical_xor`` for bool), after joining
    ``prepend`` before and ``append`` after ``self`` along it."""
    if self.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = wrap_dim(dim, self.dim())
    for extra in (prepend, append):
        if extra is not None and extra.dim() != self.dim():
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    parts = [t for t in (prepend, self, append) if t is not None]
    out = ops.cat(parts, d) if len(parts) > 1 else self
    for _ in range(n):
        size = out._sizes[d]
        if size == 0:
            break
        hi, lo = ops.narrow(out, d, 1, size - 1), ops.narrow(out, d, 0, size - 1)
        out = ops.logical_xor(hi, lo) if out.dtype is dt.bool else ops.sub(hi, lo)
    return ops.clone(out) if out is self else out
