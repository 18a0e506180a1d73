"""``F.embedding_bag``: sums, means or maxima of bags of embedding rows, composed of ``embedding``,
``searchsorted`` and ``index_add`` (or a padded max).

Note [Bags without a loop]
A 2-D input (B, L) is B bags of L indices: look the rows up as (B, L, D) and reduce over L. A 1-D input with
``offsets`` is one flat list; position i belongs to bag ``searchsorted(offsets, i, right=True) - 1``, so sum
and mean are one ``index_add`` of the (weighted) rows into (B, D), and the mean divides by an ``index_add`` of
the counts; no host read, no Python loop. Rows equal to ``padding_idx`` count for nothing, and so do the
positions at or after the last offset when ``include_last_offset``. An empty bag is 0, as in torch. The max
of a 1-D input needs the longest bag (a shape), so it reads the offsets on the host once and reduces a
padded (B, longest, D) gather; its gradient goes to one maximum per feature, as torch's. ``index_add``
passes the gradient back to each row, and ``embedding`` then scales it by ``scale_grad_by_freq``.

On the CPU the indices and offsets are checked on the host as torch does (it is free there); on other devices
the embedding lookup's own device-side index check applies and offsets are not re-read.
"""

from __future__ import annotations

from .. import dtypes as _dt
from .. import factories
from ..backends.meta.reductions import type_name
from ..dispatch.argument_checks import check_args
from ..ops import bound as ops
from ..tensor import Tensor

__all__ = ["embedding_bag"]

_MODES = {"sum": 0, "mean": 1, "max": 2}


def _check(input: Tensor, weight: Tensor, offsets, per_sample_weights, mode: str, scale_grad_by_freq: bool,
           sparse: bool) -> None:
    for name, value in (("input", input), ("weight", weight), ("offsets", offsets),
                        ("per_sample_weights", per_sample_weights)):
        if value is not None and not isinstance(value, Tensor):
            raise TypeError(f"embedding_bag(): argument '{name}' must be Tensor, not {type(value).__name__}")
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it "
                         f"must have the same shape as the input ({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2 and offsets is not None:
        raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed "
                         f"length sequences. However, found offsets of type {type(offsets)}")
    if input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    elif input.dim() != 2:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    for name, t in (("indices", input), ("offsets", offsets)):
        if t is not None and t.dtype not in (_dt.int64, _dt.int32):
            raise RuntimeError(f"Expected tensor for argument #{1 if name == 'indices' else 2} '{name}' to have one "
                               f"of the following scalar types: Long, Int; but got {type_name(t.dtype)} instead "
                               "(while checking arguments for embedding_bag)")
    if not weight.dtype.is_floating_point:
        if weight.device.type == "cuda":  # torch's CUDA kernel dispatches before any type check
            raise NotImplementedError(f"\"embedding_bag_cuda\" not implemented for '{type_name(weight.dtype)}'")
        raise RuntimeError("Expected tensor for argument #1 'weight' to have one of the following scalar types: Half, "
                           f"BFloat16, Float, Double; but got {_legacy_type(weight)} instead (while checking arguments "
                           "for embedding_bag)")


def _legacy_type(t: Tensor) -> str:
    """torch's name of a tensor type in checkScalarTypes' message: ``strided.IntTensor`` (``strided.cuda.IntTensor``)
    where a legacy class exists, else the backend and scalar type (``CPUBoolType``, ``CPUComplexFloatType``)."""
    cuda = t.device.type == "cuda"
    if t.dtype.name == "bool" or t.dtype.is_complex:
        return f"{'CUDA' if cuda else 'CPU'}{type_name(t.dtype)}Type"
    return f"strided.{'cuda.' if cuda else ''}{type_name(t.dtype)}Tensor"


def _check_on_host(flat: Tensor, offsets: Tensor, rows: int) -> None:
    """torch's CPU argument checks of the index values (Note [Bags without a loop])."""
    idx, off = flat.numpy(), offsets.numpy()
    if off.size and off[0] != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {off[0]}")
    if off.size and off[-1] > idx.size:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {idx.size} but got offsets[-1] of "
                           f"{off[-1]}")
    bad = (off[1:] < off[:-1]).nonzero()[0]
    if bad.size:
        i = int(bad[0])
        raise RuntimeError(f"embedding_bag: offsets must be non-decreasing, but got offsets[{i}]={off[i]} and "
                           f"offsets[{i + 1}]={off[i + 1]}")
    bad = ((idx < 0) | (idx >= rows)).nonzero()[0]
    if bad.size:
        i = int(bad[0])
        raise RuntimeError(f"Index {i} of input takes value {idx[i]} which is not in the valid range [0, {rows})")


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None, max_norm: float | None = None,
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """Reduce bags of rows of ``weight`` (``mode`` "sum", "mean" or "max") without materializing each bag's
    lookup separately: (B, L) input -> (B, D); 1-D input with ``offsets`` (bag starts) -> (len(offsets), D),
    or len(offsets) - 1 bags with ``include_last_offset``."""
    check_args("embedding_bag", ("input", 1, input, "Tensor"),
               ("weight", 2, weight, "Tensor"),
               ("offsets", 3, offsets, "Tensor?"),
               ("per_sample_weights", 9, per_sample_weights, "Tensor?"))
    _check(input, weight, offsets, per_sample_weights, mode, scale_grad_by_freq, sparse)
    rows = weight.shape[0]
    if padding_idx is not None:
        if not -rows <= padding_idx < rows:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{rows} through {rows - 1}, but "
                               f"got {padding_idx}")
        padding_idx %= rows
    from .functional import _embedding_renorm_  # functional imports this module

    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    if input.dim() == 2:
        if input.device.type == "cpu":
            _check_on_host(ops.reshape(input, (-1,)), ops.zeros(0, dtype=_dt.int64), rows)
        return _dense_bags(input, weight, per_sample_weights, mode, scale_grad_by_freq, padding_idx)
    bags = offsets.shape[0] - (1 if include_last_offset else 0)
    if input.device.type == "cpu":
        _check_on_host(input, offsets, rows)
    flat = input.to(_dt.int64)
    starts = offsets.to(_dt.int64)
    positions = factories.arange(flat.shape[0], dtype=_dt.int64, device=input.device)
    bag = ops.sub(ops.searchsorted(starts, positions, right=True), 1)
    valid = ops.lt(bag, bags)
    if padding_idx is not None:
        valid = ops.logical_and(valid, ops.ne(flat, padding_idx))
    if mode == "max" and input.device.type != "meta":
        return _padded_max(flat, weight, starts, bags, valid)
    # on meta the longest bag is unknown, and the max's (bags, D) shape and graph are the sum's
    bag = ops.where(valid, bag, 0)
    emb = ops.embedding(weight, flat, -1, scale_grad_by_freq, sparse)
    keep = valid.to(weight.dtype)
    if per_sample_weights is not None:
        keep = keep * per_sample_weights
    out = ops.index_add(ops.zeros((bags, weight.shape[1]), dtype=weight.dtype, device=weight.device), 0, bag,
                        emb * ops.unsqueeze(keep, 1))
    if mode != "mean":
        return out
    counts = ops.index_add(ops.zeros(bags, dtype=weight.dtype, device=weight.device), 0, bag,
                           valid.to(weight.dtype))
    return out / ops.unsqueeze(ops.clamp_min(counts, 1), 1)


def _dense_bags(input: Tensor, weight: Tensor, per_sample_weights, mode: str, scale_grad_by_freq: bool,
                padding_idx) -> Tensor:
    """Bags as the rows of a (B, L) input (Note [Bags without a loop])."""
    emb = ops.embedding(weight, input, -1, scale_grad_by_freq)
    valid = ops.ones_like(input, dtype=_dt.bool) if padding_idx is None else ops.ne(input, padding_idx)
    return _reduce(emb, valid, per_sample_weights, mode)


def _reduce(emb: Tensor, valid: Tensor, per_sample_weights, mode: str) -> Tensor:
    """Reduce (B, L, D) rows over L where ``valid`` (B, L); an empty bag gives zeros."""
    count = ops.sum(valid.to(emb.dtype), [1], True)
    if mode == "max":
        masked = ops.where(ops.unsqueeze(valid, 2), emb, float("-inf"))
        values = ops.max(masked, 1).values
        return ops.where(ops.gt(count, 0), values, 0.0)
    keep = valid.to(emb.dtype)
    if per_sample_weights is not None:
        keep = keep * per_sample_weights
    total = ops.sum(emb * ops.unsqueeze(keep, 2), [1])
    return total if mode == "sum" else total / ops.clamp_min(count, 1)


def _padded_max(flat: Tensor, weight: Tensor, starts: Tensor, bags: int, valid: Tensor) -> Tensor:
    """The max of each bag of a 1-D input, through a padded (B, longest, D) gather (one host read)."""
    n = flat.shape[0]
    if bags == 0 or n == 0:  # all bags empty: zeros, still connected to weight as torch's are
        none = factories.zeros(0, dtype=_dt.int64, device=flat.device)
        return ops.index_add(ops.zeros((bags, weight.shape[1]), dtype=weight.dtype, device=weight.device), 0, none,
                             ops.embedding(weight, none))
    rest = ops.narrow(starts, 0, 1, starts.shape[0] - 1)
    ends = ops.cat([rest, ops.full((1,), n, dtype=_dt.int64, device=flat.device)])
    ends = ops.narrow(ends, 0, 0, bags)
    first = ops.narrow(starts, 0, 0, bags)
    longest = int(ops.amax(ops.sub(ends, first)).item()) if bags else 0  # a shape: the one host read
    j = factories.arange(max(longest, 1), dtype=_dt.int64, device=flat.device)
    pos = ops.add(ops.unsqueeze(first, 1), j)  # (B, longest)
    inside = ops.lt(pos, ops.unsqueeze(ends, 1))
    pos = ops.clamp(ops.where(inside, pos, 0), 0, n - 1)
    emb = ops.embedding(weight, ops.index_select(flat, 0, ops.reshape(pos, (-1,))))
    emb = ops.reshape(emb, (bags, -1, weight.shape[1]))
    ok = ops.logical_and(inside, ops.reshape(ops.index_select(valid, 0, ops.reshape(pos, (-1,))), tuple(pos.shape)))
    return _reduce(emb, ok, None, "max")
