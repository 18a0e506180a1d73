"""CompositeImplicitAutograd ops that rearrange or repeat elements: flip, roll, repeat, tile, outer,
swapaxes, diagonal, diag, trace, argsort, clamp_min / clamp_max / clip.

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
    if len(shifts) != len(dims) and not (len(dims) == 0 and len(shifts) == 1):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    if not dims:
        return ops.view(roll(ops.reshape(self, (-1,)), shifts, (0,)), self._sizes)
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
    return ops.view(ops.clone(x, memory_format="contiguous_format"), final)


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

