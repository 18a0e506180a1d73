"""Copies between dtypes, devices and layouts: ``_to_copy``, ``clone``, ``detach``, ``dropout``."""

from __future__ import annotations

from ...dispatch.library import kernel
from ...tensor import make_tensor
from .. import bound as ops

__all__ = []


@kernel("CompositeExplicitAutograd")
def _to_copy(self, *, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False,
             memory_format=None):
    out = ops.empty_like(self, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
                         memory_format=memory_format)
    return _fresh(out.copy_(self, non_blocking))


def _fresh(out):
    """A new tensor starts at version 0, as torch's: the copy_ that filled it is not a user's in-place update."""
    out._storage._version = 0
    return out


@kernel("CompositeExplicitAutograd")
def clone(self, *, memory_format=None):
    return _fresh(ops.empty_like(self, memory_format=memory_format).copy_(self))


@kernel("CompositeExplicitAutograd")
def detach(self):
    return make_tensor(self._storage, self._offset, self._sizes, self._strides, self.dtype)


@kernel("CompositeExplicitAutograd")
def dropout(input, p, train, *, generator=None):
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not train or p == 0:
        return input.clone() if not train else input * 1
    if p == 1:
        return input * 0
    keep = ops.empty_like(input).bernoulli_(1 - p, generator=generator)
    return input * keep * (1.0 / (1 - p))
