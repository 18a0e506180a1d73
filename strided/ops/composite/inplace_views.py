"""The in-place view ops -- ``squeeze_``, ``unsqueeze_``, ``t_``, ``transpose_``, ``as_strided_``, ``swapaxes_`` /
``swapdims_`` -- which change ``self``'s metadata and have formulas in derivatives.yaml (Note [In-place views])."""

from __future__ import annotations

from ...dispatch.library import kernel
from .. import bound as ops
from .views import int_list

__all__ = []

_CIA = "CompositeImplicitAutograd"


# Note [In-place views]
# ``x.squeeze_()`` gives ``x`` the metadata of ``x.squeeze()``: same storage, new sizes and strides. The
# kernel is CompositeExplicitAutograd (it runs below autograd on every backend) and derivatives.yaml
# has the view's formula; the in-place autograd kernel then rebases ``x``'s history on the node, as
# for any in-place op (Note [In-place autograd]).
def _restride(self, view):
    self._sizes, self._strides, self._offset = view._sizes, view._strides, view._offset
    self._np = None  # Note [NumPy view memo]
    return self


@kernel("CompositeExplicitAutograd")
def squeeze_(self):
    return _restride(self, ops.squeeze(self))


@kernel("CompositeExplicitAutograd")
def squeeze__dims(self, dim):
    return _restride(self, ops.squeeze(self, int_list(dim)))


@kernel("CompositeExplicitAutograd")
def unsqueeze_(self, dim):
    return _restride(self, ops.unsqueeze(self, dim))


@kernel("CompositeExplicitAutograd")
def t_(self):
    return _restride(self, ops.t(self))


@kernel("CompositeExplicitAutograd")
def transpose_(self, dim0, dim1):
    return _restride(self, ops.transpose(self, dim0, dim1))


@kernel("CompositeExplicitAutograd")
def as_strided_(self, size, stride, storage_offset=None):
    return _restride(self, ops.as_strided(self, size, stride, storage_offset))


@kernel(_CIA)
def swapaxes_(self, axis0, axis1):
    return ops.transpose_(self, axis0, axis1)


@kernel(_CIA)
def swapdims_(self, dim0, dim1):
    return ops.transpose_(self, dim0, dim1)
