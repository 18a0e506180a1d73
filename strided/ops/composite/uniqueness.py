"""CompositeImplicitAutograd ``_unique2``, ``unique_dim`` and ``unique_consecutive`` (torch.unique's ops).

Note [unique as sort + boundaries]
A value starts a new group where it differs from its predecessor: in sorted order for ``unique``, in
the input's order for ``unique_consecutive``. With ``first`` that boolean mask, the unique values are
``masked_select(values, first)``, the inverse is ``cumsum(first) - 1`` (scattered back through the
sort's indices), and the counts are the gaps between the group starts. Everything is sort, compare,
cumsum, scatter and index ops, so it runs on every backend; the output length is data, so it reads
one count on the host (a synchronization on CUDA, as torch's) and meta tensors raise. NaNs never
compare equal, so each NaN is its own group, as in torch. Along a ``dim``, slices are compared
whole: ``unique_consecutive`` marks a slice that differs anywhere from the previous one, and
``unique_dim`` sorts the slices lexicographically first (one stable sort per element of a slice,
last element first).
"""

from __future__ import annotations

from ... import dtypes as dt
from ...backends.meta.common import wrap_dim
from ...dispatch.library import kernel
from .. import bound as ops

__all__ = []


def _empty_long(device, shape=(0,)):
    return ops.empty(shape, dtype=dt.int64, device=device)


def _groups(rows, first, order, return_inverse, return_counts, inverse_shape):
    """(unique rows, inverse, counts) given the rows in group order, the group-start mask and the
    permutation ``order`` (None: identity) that put the rows in that order."""
    device = rows.device
    if rows.device.type == "meta":
        raise NotImplementedError("aten::unique: the number of unique values is data, which meta tensors (no data) "
                                  "cannot compute")
    starts = ops.reshape(ops.nonzero(first), (-1,))
    uniq = ops.index_select(rows, 0, starts)
    inverse = counts = _empty_long(device)
    if return_inverse:
        group = ops.sub(ops.cumsum(first, 0), 1)
        if order is not None:
            group = ops.scatter(ops.empty_like(group), 0, order, group)
        inverse = ops.reshape(group, inverse_shape)
    if return_counts:
        n = ops.full((1,), rows._sizes[0], dtype=dt.int64, device=device)
        counts = ops.diff(ops.cat([starts, n]))
    return uniq, inverse, counts


def _starts(rows):
    """True where a row differs from the previous one (the first row always starts a group)."""
    head = ops.ones((1,), dtype=dt.bool, device=rows.device)
    n = rows._sizes[0]
    if n <= 1:
        return ops.ones((n,), dtype=dt.bool, device=rows.device)
    differs = ops.ne(ops.narrow(rows, 0, 1, n - 1), ops.narrow(rows, 0, 0, n - 1))
    if rows.dim() > 1:
        differs = ops.any(ops.reshape(differs, (n - 1, -1)), 1)
    return ops.cat([head, differs])


@kernel("CompositeImplicitAutograd")
def _unique2(self, sorted=True, return_inverse=False, return_counts=False):  # noqa: A002 - torch's name
    """Sorted unique elements, the index of each input element's value in them, and their counts
    (Note [unique as sort + boundaries]); ``sorted=False`` gives sorted values too (torch leaves the
    order unspecified)."""
    flat = ops.reshape(self, (-1,))
    values, order = ops.sort(flat, stable=True)
    return _groups(values, _starts(values), order, return_inverse, return_counts, self._sizes)


@kernel("CompositeImplicitAutograd")
def unique_dim(self, dim, sorted=True, return_inverse=False, return_counts=False):  # noqa: A002
    """Unique slices along ``dim``, in lexicographic order."""
    d = wrap_dim(dim, self.dim())
    n = self._sizes[d]
    if self.numel() == 0:
        return ops.clone(self), _empty_long(self.device), _empty_long(self.device)
    rows = ops.reshape(ops.movedim(self, d, 0), (n, -1))
    order = ops.arange(0, n, 1, dtype=dt.int64, device=self.device)
    for col in range(rows._sizes[1] - 1, -1, -1):  # stable sorts, least significant column first
        _, perm = ops.sort(ops.index_select(ops.select(rows, 1, col), 0, order), stable=True)
        order = ops.index_select(order, 0, perm)
    srt = ops.index_select(rows, 0, order)
    uniq, inverse, counts = _groups(srt, _starts(srt), order, return_inverse, return_counts, (n,))
    shape = list(self._sizes)
    shape[d] = uniq._sizes[0]
    moved = [shape[d]] + [s for i, s in enumerate(shape) if i != d]
    return ops.movedim(ops.reshape(uniq, moved), 0, d), inverse, counts


@kernel("CompositeImplicitAutograd")
def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    """Collapse runs of equal consecutive elements (or slices along ``dim``) to one."""
    if dim is None:
        flat = ops.reshape(self, (-1,))
        return _groups(flat, _starts(flat), None, return_inverse, return_counts, self._sizes)
    d = wrap_dim(dim, self.dim())
    n = self._sizes[d]
    if self.numel() == 0:
        return ops.clone(self), _empty_long(self.device), _empty_long(self.device)
    rows = ops.reshape(ops.movedim(self, d, 0), (n, -1))
    uniq, inverse, counts = _groups(rows, _starts(rows), None, return_inverse, return_counts, (n,))
    moved = [uniq._sizes[0]] + [s for i, s in enumerate(self._sizes) if i != d]
    return ops.movedim(ops.reshape(uniq, moved), 0, d), inverse, counts
