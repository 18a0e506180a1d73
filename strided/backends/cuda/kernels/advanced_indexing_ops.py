"""CUDA kernels for advanced indexing: ``index.Tensor``, ``index_put`` and the direct ``index_put_``.

The preparation (checks, mask expansion, bounds, result layout) is the Meta module's (Note [Index
preparation]); this module supplies its data-dependent steps on the device and launches the
offset-indexing kernels (Note [Offset indexing], Note [CUDA index bounds] in ``index_launch``).
Results and errors match the CPU kernels in ``backends/cpu/advanced_indexing.py``.
"""

from __future__ import annotations

import numpy as np

from .... import dtypes as dt
from ....device import CPU
from ....dispatch import library
from ....dispatch.library import kernel
from ....tensor import Tensor, contiguous_strides
from ...meta import advanced_indexing as ameta
from ...meta.common import new_output, new_output_like
from ..copies import broadcast_strides
from ..copies import copy_ as copy_impl
from . import copy_kernel
from .complex_ops import as_real, from_pairs
from .index_launch import (
    Target,
    copy_into,
    deferred_checks,
    deterministic_check,
    first_bad,
    index_run,
    scalar_tensor,
    stream,
    to_cuda_i64,
    to_host,
)

__all__ = []


def _nonzero(self: Tensor, mask: Tensor) -> list:
    """A mask's nonzero() index arrays, found on the host and uploaded to self's device."""
    return [_upload(a, self.device) for a in np.nonzero(to_host(mask))]


def _as_index(self: Tensor, e: Tensor) -> Tensor:
    return to_cuda_i64(e, self.device)


def _first_bad(self: Tensor, checks) -> list:
    """Per ``(entry, int64 CUDA array, size)``: the first index outside ``[-size, size)``, or None.

    A CPU-resident index is checked on the host. A CUDA one is checked by the indexing kernel
    itself, which reports a bad value without a device sync (``_deferred``, Note [Deferred index
    errors]): None here.
    """
    out = []
    for e, _idx, size in checks:
        if e.device is CPU:
            a = to_host(e)
            bad = a[(a < -size) | (a >= size)]
            out.append(int(bad.flat[0]) if bad.size else None)
        else:
            out.append(None)
    return out


def _first_bad_now(self: Tensor, checks) -> list:
    """``_first_bad`` with CUDA indices checked now, in one batched device check (a sync)."""
    out, on_device, slots = [], [], []
    for e, idx, size in checks:
        if e.device is CPU:
            out.extend(_first_bad(self, [(e, idx, size)]))
        else:
            slots.append(len(out))
            out.append(None)
            on_device.append((idx, -size, size))
    for slot, bad in zip(slots, first_bad(self.device, on_device)):
        out[slot] = bad
    return out


_BACKEND = ameta.IndexBackend(_nonzero, _as_index, _first_bad)
_BACKEND_NOW = ameta.IndexBackend(_nonzero, _as_index, _first_bad_now)  # no launch to report from


def _deferred(self_sizes, device, arrays, dims, op: str) -> tuple[int, int]:
    """``index_run``'s ``err`` for the index arrays in ``_plan``'s order, each with the message
    ``expand_indices`` would raise: torch numbers an index tensor among the given ones."""
    checks = []
    for d, a in enumerate(arrays):
        if a is not None:
            number = sum(x is not None for x in dims[:d])
            size = self_sizes[d]
            checks.append((a, -size, size, f"index {{index}} is out of bounds for dimension {number} "
                                            f"with size {size}"))
    return deferred_checks(device, checks, IndexError, op)


def _upload(a: np.ndarray, device) -> Tensor:
    out = new_output(a.shape, dt.int64, device)
    if a.size:
        from ....factories import from_numpy

        copy_impl(out, from_numpy(np.ascontiguousarray(a, dtype=np.int64)))
    return out


def _plan(self_sizes, self_strides, arrays, dims):
    """Iteration (= result) shape, b-strides over it and the index list (Note [Offset indexing])."""
    positions, shape, adjacent = ameta.index_layout(self_sizes, dims)
    nb = len(shape)
    start = positions[0] if adjacent else 0  # where the broadcast index dims begin in the result
    sizes = ameta.place_indexed(self_sizes, positions, adjacent, shape)
    b_strides = ameta.place_indexed(self_strides, positions, adjacent, (0,) * nb)
    idxs = []
    for d in positions:
        a = arrays[d]
        sh, cs = a._sizes, contiguous_strides(a._sizes)
        st = [0] * len(sizes)
        for i in range(nb):
            j = i - (nb - len(sh))
            if j >= 0 and sh[j] != 1:
                st[start + i] = cs[j]
        idxs.append((a, tuple(st), self_strides[d], self_sizes[d]))
    return sizes, b_strides, idxs


@kernel("CUDA")
def index(self, indices):
    if self.dtype.is_complex:  # Note [Complex gathers]: the pair dim last, never indexed
        r = index(as_real(self), indices)
        return from_pairs(r, self.dtype, r._sizes[:-1])
    arrays, dims, out = ameta.prepare_index(self, indices, _BACKEND)
    if not out.numel():
        ameta.prepare_index(self, indices, _BACKEND_NOW)  # no launch to report a bad index: check now
        return out
    if all(a is None for a in arrays):
        copy_into(out, self)
        return out
    sizes, bst, idxs = _plan(self._sizes, self._strides, arrays, dims)
    err = _deferred(self._sizes, self.device, arrays, dims, "index")
    index_run("index_gather", self, out, sizes, out._strides, bst, idxs, wrap=1, err=err)
    return out


def _put(target: Tensor, arrays, dims, values: Tensor, accumulate: bool) -> None:
    """``target[arrays] (+)= values``; bad indices are reported by the kernel (``_deferred``)."""
    if values.device is not target.device:  # a one-element CPU value (the masked_fill case): cast like the CPU
        values = scalar_tensor(values.item(), target)
    elif values._storage is target._storage:
        copy = new_output(values._sizes, values.dtype, values.device)
        copy_into(copy, values)
        values = copy
    if all(a is None for a in arrays):
        if accumulate:
            raise RuntimeError("index_put with accumulate=True needs at least one index tensor on CUDA")
        copy_kernel(target.device.index, target.dtype, values.dtype, target.data_ptr(), values.data_ptr(),
                    target._sizes, target._strides, broadcast_strides(values, target._sizes), stream(target))
        return
    sizes, bst, idxs = _plan(target._sizes, target._strides, arrays, dims)
    vst = (0,) * len(sizes) if values.numel() == 1 else broadcast_strides(values, sizes)
    if accumulate:
        deterministic_check("index_put_cuda_accumulate", target.dtype)
    t = Target(target, accumulate)
    if t.acc is not None:
        _, bst, idxs = _plan(t.acc._sizes, t.acc._strides, arrays, dims)
    err = _deferred(target._sizes, target.device, arrays, dims, "index_put")
    index_run("index_scatter_add" if accumulate else "index_scatter", t.b, values, sizes, vst, bst, idxs,
              wrap=1, err=err)
    t.finish()


def _complex_values(self, values):
    """``values`` as ``self``'s complex dtype on its device (for the pairs' view, Note [Complex gathers])."""
    if values.dtype is not self.dtype:
        values = values.to(self.dtype)
    return values if values.device is self.device else values.to(self.device)


@kernel("CUDA")
def index_put(self, indices, values, accumulate=False):
    if self.dtype.is_complex:  # Note [Complex gathers]: the pairs' scatter (atomics add the parts apart)
        r = index_put(as_real(self), indices, as_real(_complex_values(self, values)), accumulate)
        return from_pairs(r, self.dtype, self._sizes)
    arrays, dims = ameta.prepare_index_put(self, indices, values, accumulate, _BACKEND)
    out = new_output_like(self)
    copy_into(out, self)
    if out.numel():
        _put(out, arrays, dims, values, accumulate)
    else:
        ameta.prepare_index_put(self, indices, values, accumulate, _BACKEND_NOW)
    return out


def index_put_(self, indices, values, accumulate=False):
    """The in-place form, registered directly as on the CPU: ``x[i] = v`` writes without copying x."""
    if self.dtype.is_complex:  # Note [Complex gathers]: in place through the pairs' view
        index_put_(as_real(self), indices, as_real(_complex_values(self, values)), accumulate)
        return self
    ameta.check_no_internal_overlap(self)
    arrays, dims = ameta.prepare_index_put(self, indices, values, accumulate, _BACKEND)
    if self.numel():
        _put(self, arrays, dims, values, accumulate)
    else:
        ameta.prepare_index_put(self, indices, values, accumulate, _BACKEND_NOW)
    return self


library.impl("aten::index_put_", "CUDA")(index_put_)


@kernel("CUDA")
def nonzero(self):
    """As on the CPU; the count is data, so this synchronizes with the device (torch's does too)."""
    return _upload(np.argwhere(to_host(self)), self.device)
