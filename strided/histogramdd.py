"""``strided.histogramdd``: the histogram of points in D dimensions, as torch.histogramdd.

Note [D-dimensional histograms]
The input's innermost dim holds each point's D coordinates. Per dim, a point's bin is found by binary search
in that dim's edges (the last edge closes the last bin, as ``histogram``); a point outside any dim's edges
is not counted. The D bin numbers make one row-major index into a flat histogram, and the points' weights
(1 without ``weight``) are added there in one accumulating ``index_put``; ``density`` divides by the total
and by each bin's volume (the outer product of the dims' widths).
"""

from __future__ import annotations

import math

from . import return_types
from .backends.meta.pointwise import scalar_type_name
from .ops import bound as _ops
from .ops.composite.counting import even_edges
from .tensor import Tensor

__all__ = ["histogramdd"]


def histogramdd(input: Tensor, bins, *, range=None, weight=None, density: bool = False):  # noqa: A002
    """``(hist, bin_edges)`` of the points ``input`` (..., D): ``bins`` is one count for every dim, a count per
    dim, or a 1-D tensor of edges per dim; ``range`` (counts only) is ``[min0, max0, min1, max1, ...]``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"histogramdd(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if not (isinstance(bins, int) and not isinstance(bins, bool)) and not (
            isinstance(bins, (list, tuple)) and all(isinstance(b, (int, Tensor)) and not isinstance(b, bool)
                                                    for b in bins)):
        raise TypeError(f"histogramdd(): argument 'bins' must be an int, a sequence of ints or a sequence of "
                        f"tensors, not {bins!r}")
    if input.dtype.name not in ("float32", "float64"):  # torch's histogramdd kernel: float and double
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{scalar_type_name(input.dtype)}'")
    if input.dim() < 1:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 1 dimension, but got 0")
    n_dims = input.shape[-1]
    points = input.reshape(-1, n_dims)
    if weight is not None and tuple(weight.shape) != tuple(input.shape[:-1]):
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                           f"input tensor excluding its innermost dimension, but got input with shape "
                           f"{list(input.shape)} and weight with shape {list(weight.shape)}")
    if weight is not None and weight.dtype is not input.dtype:
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided, input tensor and weight tensor should "
                           f"have the same dtype, but got input({_word(input.dtype)}), and "
                           f"weight({_word(weight.dtype)})")
    if isinstance(bins, int):
        bins = [bins] * n_dims
    bins = list(bins)
    if len(bins) != n_dims:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
    if range is not None and len(range) != 2 * n_dims:
        raise RuntimeError(f"torch.histogramdd: for a {n_dims}-dimensional histogram range should have "
                           f"{2 * n_dims} elements, but got {len(range)}")
    edges = [_edges(points[:, d], b, d, None if range is None else range[2 * d:2 * d + 2])
             for d, b in enumerate(bins)]
    counts = [e.shape[0] - 1 for e in edges]
    flat_index = None
    inside = None
    for d, e in enumerate(edges):
        column = points[:, d]
        pos = _ops.sub(_ops.searchsorted(e, column, right=True), 1)
        pos = _ops.where(_ops.eq(column, e[-1]), counts[d] - 1, pos)
        ok = _ops.logical_and(_ops.ge(pos, 0), _ops.lt(pos, counts[d]))
        inside = ok if inside is None else _ops.logical_and(inside, ok)
        pos = _ops.clamp(pos, 0, counts[d] - 1)
        flat_index = pos if flat_index is None else flat_index * counts[d] + pos
    w = inside.to(input.dtype) if weight is None else _ops.where(inside, weight.reshape(-1), 0)
    hist = _ops.zeros((math.prod(counts),), dtype=input.dtype, device=input.device)
    hist = _ops.index_put(hist, [flat_index], w, True).reshape(counts)
    if density:
        volume = None
        for d, e in enumerate(edges):
            shape = [1] * n_dims
            shape[d] = -1
            width = (e[1:] - e[:-1]).reshape(shape)
            volume = width if volume is None else volume * width
        hist = hist / (hist.sum() * volume)
    return return_types.histogramdd((hist, tuple(edges)))


def _edges(column: Tensor, bins, d: int, span) -> Tensor:
    """Dim ``d``'s bin edges: the given 1-D tensor, or ``bins + 1`` even edges over ``span`` (the data's)."""
    if isinstance(bins, Tensor):
        if bins.dim() != 1 or bins.numel() == 0:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but got {bins.dim()} "
                               f"dimensions in the bins tensor for dimension {d}")
        if bins.dtype is not column.dtype:
            raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have the same dtype, but got "
                               f"input with dtype {_word(column.dtype)} and bins for dimension {d} with dtype "
                               f"{_word(bins.dtype)}")
        return _ops.clone(bins)
    return even_edges(column, bins, span, d)


def _word(d) -> str:
    """c10's lower-case dtype word (``double``, ``float``) of torch's histogram messages."""
    return {"float64": "double", "float32": "float", "float16": "half"}.get(d.name, d.name)
