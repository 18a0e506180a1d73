"""One-line CompositeImplicitAutograd ops: torch's other spellings of existing operators.

``max(a, b)`` is ``maximum``, ``true_divide`` is ``div``, ``square`` is ``pow(self, 2)`` (as torch),
``view_as`` / ``reshape_as`` take the other tensor's shape, ``type_as`` its dtype. Autograd
differentiates them through the op they call.
"""

from __future__ import annotations

from ...dispatch.library import kernel
from .. import bound as ops

__all__ = []


@kernel("CompositeImplicitAutograd")
def max_other(self, other):
    return ops.maximum(self, other)


@kernel("CompositeImplicitAutograd")
def min_other(self, other):
    return ops.minimum(self, other)


@kernel("CompositeImplicitAutograd")
def square(self):
    return ops.pow(self, 2)


@kernel("CompositeImplicitAutograd")
def view_as(self, other):
    return ops.view.default(self, other._sizes)


@kernel("CompositeImplicitAutograd")
def reshape_as(self, other):
    return ops.reshape(self, other._sizes)


@kernel("CompositeImplicitAutograd")
def type_as(self, other):
    return ops._to_copy(self, dtype=other.dtype) if self.dtype is not other.dtype else self


@kernel("CompositeImplicitAutograd")
def true_divide(self, other):
    return ops.div(self, other)
