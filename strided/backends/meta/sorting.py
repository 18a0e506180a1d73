"""Meta functions for sorting: ``sort``, ``sort.stable`` and ``topk`` (values and int64 indices)."""

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
