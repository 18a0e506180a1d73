"""torch.segment_reduce: reductions over consecutive segments of one dim, given by their lengths or offsets.

Note [Segments as a scatter]
Each position along ``axis`` gets the number of the segment it falls in (a ``searchsorted`` of the positions in the
segments' offsets), and one ``scatter_reduce`` into a tensor of the segments' empty values -- 0, 1, -inf, inf, or
``initial`` -- reduces them all, on every device and with scatter_reduce's gradients. Tied maxima (minima) share
their segment's gradient equally; torch's segment backward divides it only where it is positive (a sign-dependent
rule of SegmentReduce.cpp that strided does not copy: a negative gradient reaches each tied element whole there),
and gives NaNs a max's gradient, where scatter_reduce's rule gives them none. Positions outside every segment
(before the first offset, past the last) go to one extra segment that is dropped. ``mean`` is a sum over the
segment's length (with ``initial`` added to the sum, not counted as an element: torch's rule), ``initial`` or NaN
for an empty segment.

torch leaves some bad segments to its kernel's memory reads (offsets past the data, lengths that overrun it with
``unsafe=True``); strided reads the offsets (or lengths) once on the host -- for these checks and torch's -- and
refuses them, and offsets that go backwards, in torch's words.
"""

from __future__ import annotations

import math

import numpy as np

from . import dtypes as _dt
from .backends.meta.common import wrap_dim
from .backends.meta.reductions import type_name
from .dispatch.argument_checks import arg_tensor, check_args
from .ops import bound as ops
from .tensor import Tensor

__all__ = ["segment_reduce"]

_KINDS = {"sum": "sum", "prod": "prod", "mean": "mean", "max": "amax", "amax": "amax", "min": "amin", "amin": "amin"}
_EMPTY = {"sum": 0.0, "prod": 1.0, "amax": -math.inf, "amin": math.inf}
_FLOATING = (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64)
_IMPROVE = "  (Could this error message be improved?  If so, please report an enhancement request to PyTorch.)"


def _expected(condition: str) -> RuntimeError:
    """torch's bare ``TORCH_CHECK(condition)`` message."""
    return RuntimeError(f"Expected {condition} to be true, but got false.{_IMPROVE}")


def segment_reduce(data: Tensor, reduce: str, *, lengths: Tensor | None = None, indices: Tensor | None = None,
                   offsets: Tensor | None = None, axis: int = 0, unsafe: bool = False, initial=None) -> Tensor:
    """``reduce`` ("sum", "mean", "prod", "max"/"amax", "min"/"amin") over the segments of ``data`` along ``axis``,
    given by ``lengths`` (of shape ``data.shape[:axis] + (segments,)``, summing to ``data.size(axis)`` unless
    ``unsafe``) or ``offsets`` (one more than the segments). An empty segment gives ``initial`` when given, else the
    reduction's identity (NaN for mean). Result: ``data.shape[:axis] + (segments,) + data.shape[axis + 1:]``."""
    arg_tensor("segment_reduce", "data", 1, data)
    if not isinstance(reduce, str):
        raise TypeError(f"segment_reduce(): argument 'reduce' (position 2) must be str, not {type(reduce).__name__}")
    for name, value in (("lengths", lengths), ("indices", indices), ("offsets", offsets)):
        if value is not None:
            arg_tensor("segment_reduce", name, None, value)
    check_args("segment_reduce", ("axis", None, axis, "int"), ("unsafe", None, unsafe, "bool"),
               ("initial", None, initial, "Number?"))
    axis = wrap_dim(axis, data.dim())
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    kind = _KINDS.get(reduce)
    if kind is None:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    given, word = (offsets, "offsets") if offsets is not None else (lengths, "lengths")
    if given.device != data.device:
        raise _expected(f"data.get_device() == {word}_value.get_device()")
    if data.dim() < given.dim():
        raise _expected(f"data.dim() >= {word}_value.dim()")
    if axis != given.dim() - 1:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of {word} but got {axis}.")
    n = data._sizes[axis]
    # one host read of the segments for every value check (none on meta: the shape alone, as torch's meta function)
    host = None if data.device.type == "meta" or given.numel() == 0 else given.cpu().numpy()
    if word == "lengths" and not unsafe and host is not None:
        if host.min() < 0:
            raise RuntimeError("lengths contains negative value!")
        if not (host.sum(axis=-1) == n).all():
            raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum to "
                               "data.size(lengths.dim()-1) when !unsafe.")
    if given.dtype not in (_dt.int32, _dt.int64):
        raise NotImplementedError(f"\"_segment_reduce_{word}_cpu_kernel1\" not implemented for "
                                  f"'{type_name(given.dtype)}'")
    if data.dtype not in _FLOATING:
        raise NotImplementedError(f"\"_segment_reduce_cpu\" not implemented for '{type_name(data.dtype)}'")
    if tuple(given._sizes[:-1]) != tuple(data._sizes[:axis]):
        raise RuntimeError(f"segment_reduce(): Expected {word} of shape {list(data._sizes[:axis])} + [segments] "
                           f"(the data's dims before axis {axis}), got {list(given._sizes)}")
    if host is not None:
        _check_offsets(host.astype(np.int64), n, word)
    return _reduce(data, kind, _offsets(given, word), axis, initial)


def _offsets(given: Tensor, word: str) -> Tensor:
    """The segments' offsets (int64, one more than the segments along the last dim)."""
    given = given.to(_dt.int64)
    if word == "offsets":
        return given
    zero = ops.zeros((*given._sizes[:-1], 1), dtype=_dt.int64, device=given.device)
    return ops.cat([zero, ops.cumsum(given, -1)], -1)


def _check_offsets(given: np.ndarray, n: int, word: str) -> None:
    """Segments that go backwards (torch's check) or past the data (torch reads past it; Note [Segments as a
    scatter]), from the host copy of the offsets or lengths."""
    if word == "lengths":
        host = np.concatenate([np.zeros(given.shape[:-1] + (1,), np.int64), np.cumsum(given, axis=-1)], axis=-1)
    else:
        host = given
    if (host[..., 1:] < host[..., :-1]).any():
        raise _expected("segment_length >= 0")
    low, high = int(host.min()), int(host.max())
    if low < 0 or high > n:
        what = "offsets" if word == "offsets" else "the lengths' running sums"
        raise RuntimeError(f"segment_reduce(): {what} must lie in [0, {n}] (data.size(axis)), got values from "
                           f"{low} to {high}")


def _reduce(data: Tensor, kind: str, bounds: Tensor, axis: int, initial) -> Tensor:
    """Note [Segments as a scatter]."""
    lead, n, trail = data._sizes[:axis], data._sizes[axis], data._sizes[axis + 1:]
    segments = bounds._sizes[-1] - 1
    positions = ops.expand(ops.arange(0, n, device=data.device), (*lead, n))
    seg = ops.sub(ops.searchsorted(ops.contiguous(bounds), ops.contiguous(positions), right=True), 1)
    seg = ops.where(ops.logical_or(ops.lt(seg, 0), ops.ge(seg, segments)), segments, seg)  # outside: the extra one
    index = ops.expand(ops.reshape(seg, (*lead, n) + (1,) * len(trail)), data._sizes)
    out_shape = (*lead, segments + 1, *trail)
    if kind == "mean":
        total = ops.scatter_add(ops.zeros(out_shape, dtype=data.dtype, device=data.device), axis, index, data)
        total = ops.narrow(total, axis, 0, segments)
        if initial is not None:
            total = ops.add(total, initial)
        count = ops.sub(ops.narrow(bounds, -1, 1, segments), ops.narrow(bounds, -1, 0, segments))
        count = ops.reshape(count, (*lead, segments) + (1,) * len(trail)).to(data.dtype)
        mean = ops.div(total, ops.clamp_min(count, 1))
        empty = math.nan if initial is None else initial
        return ops.where(ops.gt(count, 0), mean, ops.full((), empty, dtype=data.dtype, device=data.device))
    start = _EMPTY[kind] if initial is None else initial
    base = ops.full(out_shape, start, dtype=data.dtype, device=data.device)
    result = ops.scatter_reduce(base, axis, index, data, kind, include_self=initial is not None)
    return ops.narrow(result, axis, 0, segments)
