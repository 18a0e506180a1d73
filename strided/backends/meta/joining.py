"""Meta functions for joining tensors: ``cat`` (``stack`` is a composite of unsqueeze + cat)."""

from __future__ import annotations

from ... import dtypes as dt
from ...conversion import suggest_memory_format
from ...dispatch.library import kernel
from ...tensor import Tensor, memory_format_strides
from .common import common_device, new_output, wrap_dim

__all__ = ["cat_output"]


def _is_skipped(t: Tensor) -> bool:
    # Note [Legacy cat skip]: torch keeps accepting 1-d empty tensors of size (0,) next to
    # tensors of any shape (old code built "empty" tensors that way); they are ignored, except
    # that their dtype still takes part in type promotion.
    return t._sizes == (0,)


def _cat_inputs(tensors, dim) -> tuple:
    """Validate ``cat``'s arguments; (output sizes, dtype, device, wrapped dim, kept tensors)."""
    tensors = tuple(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    dtype = None
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"cat(): expected a sequence of Tensors, but element {i} is {type(t).__name__}")
        if not t._sizes:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
        dtype = t.dtype if dtype is None else dt.promote_types(dtype, t.dtype)
    dev = common_device(*tensors)
    kept = [(i, t) for i, t in enumerate(tensors) if not _is_skipped(t)]
    if not kept:
        return (0,), dtype, dev, 0, ()
    ref = kept[0][1]
    ndim = len(ref._sizes)
    d = wrap_dim(dim, ndim)
    total = 0
    for i, t in kept:
        if len(t._sizes) != ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ndim} and {len(t._sizes)}")
        for k in range(ndim):
            if k != d and t._sizes[k] != ref._sizes[k]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size {ref._sizes[k]} but "
                    f"got size {t._sizes[k]} for tensor number {i} in the list."
                )
        total += t._sizes[d]
    sizes = ref._sizes[:d] + (total,) + ref._sizes[d + 1:]
    return sizes, dtype, dev, d, tuple(t for _, t in kept)


def cat_output(tensors, dim) -> tuple:
    """The output of ``cat``, the wrapped dim and the tensors that are not skipped."""
    sizes, dtype, dev, d, kept = _cat_inputs(tensors, dim)
    # torch's compute_output_memory_format: a channels-last format only when every input suggests it.
    strides = None
    mf = suggest_memory_format(kept[0]) if kept else "contiguous_format"
    if mf != "contiguous_format" and all(suggest_memory_format(t) == mf for t in kept[1:]):
        strides = memory_format_strides(sizes, mf)
    return new_output(sizes, dtype, dev, strides), d, kept


@kernel("Meta")
def cat(tensors, dim=0):
    return cat_output(tensors, dim)[0]
