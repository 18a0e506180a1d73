"""Joining ops composed from others: ``stack`` (unsqueeze each input, then cat)."""

from __future__ import annotations

from ...backends.meta.common import wrap_dim
from ...dispatch.library import kernel
from .. import bound as ops

__all__ = []


@kernel("CompositeImplicitAutograd")
def stack(tensors, dim=0):
    if not isinstance(tensors, (list, tuple)):  # a tensor is not a sequence of tensors here, as in torch
        raise TypeError(f"stack(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    tensors = tuple(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    sizes = tensors[0]._sizes
    for i, t in enumerate(tensors):
        if t._sizes != sizes:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(sizes)} at entry 0 and "
                f"{list(t._sizes)} at entry {i}"
            )
    d = wrap_dim(dim, len(sizes) + 1)
    return ops.cat([ops.unsqueeze(t, d) for t in tensors], d)
