"""Meta functions for sorting: ``sort``, ``sort.stable``, ``topk`` (values and int64 indices) and
``searchsorted`` (its argument checks, shared by the backends)."""

from __future__ import annotations

from ... import dtypes as dt
from ... import return_types
from ...dispatch.library import kernel
from .common import check, new_output, new_output_like, wrap_dim

__all__ = []


@kernel("Meta")
def sort(self, dim=-1, descending=False):
    wrap_dim(dim, len(self._sizes))
    # torch allocates both outputs like the input (a transposed input gives transposed outputs).
    return return_types.sort((new_output_like(self), new_output_like(self, dt.int64)))


@kernel("Meta")
def sort_stable(self, *, stable, dim=-1, descending=False):
    return sort(self, dim, descending)


@kernel("Meta")
def topk(self, k, dim=-1, largest=True, sorted=True):
    d = wrap_dim(dim, len(self._sizes))
    size = self._sizes[d] if self._sizes else 1
    check(0 <= k <= size, "selected index k out of range")
    sizes = self._sizes[:d] + (k,) + self._sizes[d + 1:] if self._sizes else ()
    values = new_output(sizes, self.dtype, self.device)
    return return_types.topk((values, new_output(sizes, dt.int64, self.device)))


def searchsorted_check(seq, values, out_int32, right, side, sorter) -> bool:
    """torch's argument checks of ``searchsorted``; returns whether to search right (upper bound)."""
    from .reductions import type_name

    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left "
                               "while right was True")
        right = side == "right"
    if seq.dim() == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
                           "dimension")
    if seq.dim() > 1 and (values.dim() != seq.dim() or values._sizes[:-1] != seq._sizes[:-1]):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries "
            f"tensor and input value tensor must match, but we got boundaries tensor {list(seq._sizes)} and input "
            f"value tensor {list(values._sizes)}")
    if sorter is not None:
        if sorter.dtype is not dt.int64:
            raise RuntimeError(f"torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                               f"{type_name(sorter.dtype)}")
        if sorter._sizes != seq._sizes:
            raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                               f"tensor {list(seq._sizes)}and got sorter tensor {list(sorter._sizes)}")
    for t in (seq, values):
        if t.dtype is dt.bool:
            raise NotImplementedError("\"searchsorted_out_cpu\" not implemented for 'Bool'")
    return bool(right)


@kernel("Meta")
def searchsorted(sorted_sequence, self, *, out_int32=False, right=False, side=None, sorter=None):
    searchsorted_check(sorted_sequence, self, out_int32, right, side, sorter)
    return searchsorted_output(self, out_int32)


def searchsorted_output(self, out_int32: bool):
    """The (unchecked) result of ``searchsorted``: the backends run ``searchsorted_check`` once first."""
    return new_output(self._sizes, dt.int32 if out_int32 else dt.int64, self.device)
