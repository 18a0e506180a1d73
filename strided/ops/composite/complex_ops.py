"""Composite kernels of the complex ops: the dtype-changing views ``view_as_real`` / ``view_as_complex``
and the views built on them (``real``, ``imag``), ``conj`` and the conjugate / negative bit no-ops, and
``sgn`` (``z / |z|``). One kernel serves every backend (Note [Complex operators] in ops/complex_support.py).

Note [No conjugate bit]
torch's ``conj`` of a complex tensor is a lazy view: it sets a conjugate bit that later kernels read
(``resolve_conj`` materializes it). strided has no conjugate bit (nor negative bit): ``conj`` of a
complex tensor returns ``conj_physical(self)``, a new tensor, so writes to it do not reach ``self`` as
they would in torch, and ``is_conj()`` / ``is_neg()`` are always False. ``conj`` of a real tensor is
``self``, as in torch; ``resolve_conj`` and ``resolve_neg`` return ``self``. ``conj_physical`` of a real
tensor is a copy where torch returns ``self``: it is a backend kernel with a derivative formula here, and
an op's output must not be its own input.

Note [Dtype-changing views]
``view_as_real`` views each complex element as its (re, im) pair: a new last dim of size 2 and stride
1, every other stride and the storage offset doubled, the dtype the real one of the same precision.
``view_as_complex`` is its inverse and needs a layout that has one (torch's checks and words). Both
alias the storage and name the root tensor as ``_base`` (Note [View base] in views.py), so writes
through them reach the base and the version counter is shared. ``view(dtype)`` reinterprets the bytes
in another dtype (torch's ``view.dtype``): the same layout for the same element size, else the last dim
(which must have stride 1) scales by the size ratio, with torch's checks in torch's order and words;
like torch's, it is never differentiable.
"""

from __future__ import annotations

from ... import dtypes as dt
from ...backends.meta.common import check
from ...backends.meta.pointwise import scalar_type_name
from ...dispatch.library import kernel
from ...tensor import Tensor, make_tensor
from .. import bound as ops
from .views import mark_view

__all__ = []

_CEA, _CIA = "CompositeExplicitAutograd", "CompositeImplicitAutograd"


def _dtype_view(self: Tensor, dtype, sizes: tuple, strides: tuple, offset: int) -> Tensor:
    """A view of ``self``'s storage with another dtype (Note [Dtype-changing views])."""
    t = make_tensor(self._storage, offset, sizes, strides, dtype)
    base = self._base
    root = t._base = self if base is None else base
    if root._requires_grad:
        mark_view(self, t)
    return t


@kernel(_CEA)
def view_dtype(self, dtype):
    if not isinstance(dtype, dt.dtype):
        raise TypeError(f"view(): argument 'dtype' must be strided.dtype, not {type(dtype).__name__}")
    d = dtype
    old, new = self.dtype.itemsize, d.itemsize
    sizes, strides, offset = self._sizes, self._strides, self._offset
    if old == new:
        return _dtype_view(self, d, sizes, strides, offset)
    what = f"to view {scalar_type_name(self.dtype)} as {scalar_type_name(d)} (different element sizes)"
    check(len(sizes) > 0, lambda: f"self.dim() cannot be 0 {what}")
    if old > new:  # more, smaller elements
        r = old // new
        check(strides[-1] == 1, lambda: f"self.stride(-1) must be 1 {what}, but got {strides[-1]}")
        return _dtype_view(self, d, sizes[:-1] + (sizes[-1] * r,), tuple(s * r for s in strides[:-1]) + (1,),
                           offset * r)
    r = new // old
    check(sizes[-1] % r == 0, lambda: f"self.size(-1) must be divisible by {r} {what}, but got {sizes[-1]}")
    check(offset % r == 0, lambda: f"self.storage_offset() must be divisible by {r} {what}, but got {offset}")
    check(strides[-1] == 1, lambda: f"self.stride(-1) must be 1 {what}, but got {strides[-1]}")
    for i, s in enumerate(strides[:-1]):
        check(s % r == 0, lambda i=i, s=s: f"self.stride({i}) must be divisible by {r} {what}, but got {s}")
    return _dtype_view(self, d, sizes[:-1] + (sizes[-1] // r,), tuple(s // r for s in strides[:-1]) + (1,),
                       offset // r)


@kernel(_CEA)
def view_as_real(self):
    check(self.dtype.is_complex, "view_as_real is only supported for complex tensors")
    return _dtype_view(self, self.dtype.to_real(), self._sizes + (2,), tuple(2 * s for s in self._strides) + (1,),
                       2 * self._offset)


@kernel(_CEA)
def view_as_complex(self):
    d = self.dtype
    check(d is dt.float32 or d is dt.float64 or d is dt.float16,
          lambda: "view_as_complex is only supported for half, float and double tensors, but got a tensor of "
                  f"scalar type: {scalar_type_name(d)}")
    sizes, strides = self._sizes, self._strides
    check(len(sizes) > 0, "Input tensor must have one or more dimensions")
    check(sizes[-1] == 2, "Tensor must have a last dimension of size 2")
    check(strides[-1] == 1, "Tensor must have a last dimension with stride 1")
    check(all(s % 2 == 0 for s in strides[:-1]), "Tensor must have a stride divisible by 2 for all but last dimension")
    check(self._offset % 2 == 0, "Tensor must have a storage_offset divisible by 2")
    return _dtype_view(self, d.to_complex(), sizes[:-1], tuple(s // 2 for s in strides[:-1]), self._offset // 2)


@kernel(_CIA)
def real(self):
    return ops.select(ops.view_as_real(self), -1, 0) if self.dtype.is_complex else self


@kernel(_CIA)
def imag(self):
    check(self.dtype.is_complex, "imag is not implemented for tensors with non-complex dtypes.")
    return ops.select(ops.view_as_real(self), -1, 1)


@kernel(_CIA)
def conj(self):
    """Note [No conjugate bit]: a new tensor for complex ``self``, ``self`` for real."""
    return ops.conj_physical(self) if self.dtype.is_complex else self


@kernel(_CEA)
def conj_physical_(self):
    return ops.copy_(self, ops.conj_physical(self)) if self.dtype.is_complex else self


@kernel(_CIA)
def resolve_conj(self):
    return self  # Note [No conjugate bit]


@kernel(_CIA)
def resolve_neg(self):
    return self  # Note [No conjugate bit]


@kernel(_CEA)
def sgn(self):
    """``sign`` for real dtypes; ``z / |z|`` (0 at 0) for complex ones."""
    if not self.dtype.is_complex:
        return ops.sign(self)
    magnitude = ops.abs(self)
    return ops.div(self, ops.add(magnitude, ops.eq(magnitude, 0)))


@kernel(_CIA)
def sgn_(self):
    return ops.copy_(self, sgn(self)) if self.dtype.is_complex else ops.sign_(self)
