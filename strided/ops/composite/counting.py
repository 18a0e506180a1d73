"""Counting and order statistics as compositions: kthvalue (over sort), bincount and histc (an
accumulating index_put), histogram (searchsorted into the edges), isin (searchsorted into the sorted
test elements) and unravel_index.

Note [Histogram bins]
histc and histogram's integer-bins form place ``x`` in bin ``trunc((x - lo) * bins / (hi - lo))`` computed
in the input's dtype, the top edge closing the last bin (torch's LINEAR_INTERPOLATION); histogram then
corrects the guess against the edges (LINEAR_INTERPOLATION_WITH_LOCAL_SEARCH), which is exactly
``searchsorted(edges, x, right=True) - 1``, used here for both of its forms. Values outside
``[lo, hi]`` (and NaN) add weight 0 instead of being dropped, so shapes never depend on data.
bincount's length is ``max(self) + 1``: data, which meta tensors do not have.
"""

from __future__ import annotations

import operator
from itertools import accumulate

from ... import dtypes as dt
from ... import return_types
from ...backends.meta.common import wrap_dim
from ...backends.meta.pointwise import scalar_type_name
from ...dispatch.library import kernel
from .. import bound as ops

__all__ = []


@kernel("CompositeImplicitAutograd")
def kthvalue(self, k, dim=-1, keepdim=False):
    """``(values, indices)`` of the k-th smallest element along ``dim`` (NaN sorts last)."""
    from .order_statistics import refuse_bool

    refuse_bool(self, "kthvalue_")
    d = wrap_dim(dim, max(self.dim(), 1))
    x = self if self.dim() else ops.reshape(self, (1,))
    if not 1 <= k <= x._sizes[d]:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    values, indices = ops.sort(x, stable=True, dim=d)
    v, i = ops.select(values, d, k - 1), ops.select(indices, d, k - 1)
    if self.dim() == 0:
        v, i = ops.reshape(v, ()), ops.reshape(i, ())
    elif keepdim:
        v, i = ops.unsqueeze(v, d), ops.unsqueeze(i, d)
    return return_types.kthvalue((v, i))


def _no_values(name: str):
    return NotImplementedError(f"aten::{name}: the output size is data, which meta tensors (no data) cannot compute")


@kernel("CompositeImplicitAutograd")
def bincount(self, weights=None, minlength=0):
    """Counts (or summed ``weights``) of each non-negative integer value in a 1-D tensor."""
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if self.device.type == "meta":
        raise _no_values("bincount")
    if self.dim() == 1 and self.numel() == 0:
        out_dtype = dt.int64 if weights is None else (dt.float32 if weights.dtype is dt.float32 else dt.float64)
        return ops.zeros((minlength,), dtype=out_dtype, device=self.device)
    if self.dtype.is_floating_point or self.dtype is dt.bool:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{scalar_type_name(self.dtype)}'")
    if self.dim() != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if float(ops.amin(self, [])) < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.dim() != 1 or weights._sizes[0] != self._sizes[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    n = max(int(ops.amax(self, [])) + 1, minlength)
    if weights is None:
        acc, src = dt.int64, ops.ones((1,), dtype=dt.int64, device=self.device).expand(self._sizes)
    else:
        acc = dt.float32 if weights.dtype is dt.float32 else dt.float64
        src = weights.to(acc)
    return ops.index_put(ops.zeros((n,), dtype=acc, device=self.device), [self.to(dt.int64)], src, True)


def _bin_of(x, lo, hi, bins: int):
    """torch's linear bin guess (Note [Histogram bins]), as int64, clamped to the last bin."""
    pos = ops.trunc(ops.div(ops.mul(ops.sub(x, lo), bins), hi - lo)).to(dt.int64)
    return ops.clamp(pos, 0, bins - 1)


def _min_max(x) -> list:
    """The smallest and largest element of ``x``, read back in one copy (one synchronization on CUDA)."""
    return ops.stack(list(ops.aminmax(x))).tolist()


def _data_range(x, lo, hi, widen):
    """``(lo, hi)``, the data's range when they are equal (and ``widen`` apart when that is one point)."""
    if lo == hi and x.numel() and x.device.type != "meta":
        lo, hi = (float(v) for v in _min_max(x))
    if lo == hi:
        lo, hi = lo - widen, hi + widen
    return lo, hi


@kernel("CompositeImplicitAutograd")
def histc(self, bins=100, min=0, max=0):  # noqa: A002 - torch's argument names
    """A histogram of ``bins`` equal bins over ``[min, max]`` (the data's range when they are equal)."""
    if not self.dtype.is_floating_point:
        if self.device.type == "cuda" and self.dtype is not dt.bool:
            return _integral_histc(self, bins, min, max)
        name = "histc" if self.device.type == "cuda" else "histogram_cpu"
        raise NotImplementedError(f"\"{name}\" not implemented for '{scalar_type_name(self.dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = _data_range(self, float(min), float(max), 1.0)
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if lo in (float("inf"), float("-inf")) or hi in (float("inf"), float("-inf")) or lo != lo or hi != hi:
        raise RuntimeError(f"torch.histc: range of [{lo:g}, {hi:g}] is not finite")
    x = ops.reshape(self, (-1,))
    lo_t, hi_t = float(ops.full((), lo, dtype=self.dtype)), float(ops.full((), hi, dtype=self.dtype))
    inside = ops.logical_and(ops.ge(x, lo_t), ops.le(x, hi_t))
    pos = ops.where(inside, _bin_of(x, lo_t, hi_t, bins), 0)
    return ops.index_put(ops.zeros((bins,), dtype=self.dtype, device=self.device), [pos], inside.to(self.dtype),
                         True)


def _integral_histc(self, bins, lo, hi):
    """torch's CUDA histc of an integer tensor: the bounds truncated to int64, the bin ``(x - lo) * bins // (hi - lo)``
    in int64 arithmetic (Note [Integer histograms on CUDA])."""
    if bins <= 0:
        raise RuntimeError("bins must be > 0")
    lo, hi = int(lo), int(hi)
    if lo == hi and self.numel() > 0:
        lo, hi = (int(v) for v in _min_max(self))
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not lo < hi:
        raise RuntimeError("max must be larger than min")
    x = ops.reshape(self, (-1,)).to(dt.int64)
    inside = ops.logical_and(ops.ge(x, lo), ops.le(x, hi))
    pos = ops.clamp(ops.floor_divide(ops.mul(ops.sub(x, lo), bins), hi - lo), 0, bins - 1)
    return ops.index_put(ops.zeros((bins,), dtype=self.dtype, device=self.device), [pos], inside.to(self.dtype),
                         True)


# Note [Integer histograms on CUDA]
# torch's CUDA histc takes integer tensors (its CPU kernel refuses them): the counts come back in the input's
# dtype and the bins are integer divisions, so values of 0..9 in 3 bins over [0, 9] fall 0-2 / 3-5 / 6-9.
# Values outside [lo, hi] add 0 at bin 0, as the floating histc's do (Note [Histogram bins]).


def _histogram(x, edges, weight, density):
    flat = ops.reshape(x, (-1,))
    nb = edges._sizes[0] - 1
    pos = ops.sub(ops.searchsorted(edges, flat, right=True), 1)
    at_top = ops.eq(flat, edges[-1])
    pos = ops.where(at_top, nb - 1, pos)
    inside = ops.logical_and(ops.ge(pos, 0), ops.lt(pos, nb))
    w = inside.to(x.dtype) if weight is None else ops.where(inside, ops.reshape(weight, (-1,)), 0)
    hist = ops.index_put(ops.zeros((nb,), dtype=x.dtype, device=x.device), [ops.clamp(pos, 0, nb - 1)], w, True)
    if density:
        widths = ops.sub(edges[1:], edges[:-1])
        hist = ops.div(hist, ops.mul(ops.sum(hist), widths))
    return return_types.histogram((hist, edges))


def _check_histogram(self, weight, tensor_bins: bool = False):
    """torch's dtypes: a count of bins goes through histogramdd (float32 / float64), given edges through the
    histogram kernel (every floating dtype)."""
    d = self.dtype
    if tensor_bins and not d.is_floating_point:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{scalar_type_name(d)}'")
    if not tensor_bins and d not in (dt.float32, dt.float64):
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{scalar_type_name(d)}'")
    if weight is not None and weight._sizes != self._sizes:
        raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                           "input tensor excluding its innermost dimension")


@kernel("CompositeImplicitAutograd")
def histogram_bins_tensor(self, bins, *, weight=None, density=False):
    """A histogram over the bin edges ``bins``; ``(hist, bin_edges)``."""
    _check_histogram(self, weight, tensor_bins=True)
    if bins.dim() != 1 or bins.numel() == 0:
        raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but got {bins.dim()} "
                           "dimensions in the bins tensor for dimension 0")
    return _histogram(self, ops.clone(bins), weight, density)


@kernel("CompositeImplicitAutograd")
def histogram_bin_ct(self, bins=100, *, range=None, weight=None, density=False):  # noqa: A002
    """A histogram of ``bins`` equal bins over ``range`` (default: the data's); ``(hist, bin_edges)``."""
    _check_histogram(self, weight)
    return _histogram(self, even_edges(self, bins, range, 0), weight, density)


def even_edges(x, bins: int, span, dim: int):
    """``bins + 1`` evenly spaced edges over ``span`` (``(min, max)``; None: ``x``'s range, widened by 0.5 each
    way when that is one point), in ``x``'s dtype; ``dim`` names the histogram dimension in errors."""
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension {dim}")
    lo, hi = (0.0, 0.0) if span is None else (float(span[0]), float(span[1]))
    if span is None:
        lo, hi = _data_range(x, lo, hi, 0.5)
    elif lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    if lo > hi:
        raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {lo:g} max {hi:g} for "
                           f"dimension {dim}")
    return ops.linspace(lo, hi, bins + 1, dtype=x.dtype, device=x.device)


def _isin(elements, test, invert):
    """torch's two algorithms: compare against every test element when there are few of them, else a
    binary search in the sorted test elements (NaN, sorted last, cut off: it is never ``in``)."""
    common = dt.promote_types(elements.dtype, test.dtype)
    x, t = elements.to(common), ops.reshape(test.to(common), (-1,))
    if t.numel() < 10.0 * max(elements.numel(), 1) ** 0.145:
        found = ops.any(ops.eq(ops.unsqueeze(x, -1), t), -1) if t.numel() else None
    else:
        t = ops.sort(t)[0]
        if common.is_floating_point and t.device.type != "meta":
            t = t[:int(ops.sum(ops.logical_not(ops.isnan(t))))]
        found = None
        if t.numel():
            pos = ops.clamp(ops.searchsorted(t, x), 0, t._sizes[0] - 1)
            found = ops.eq(ops.reshape(ops.index(t, [ops.reshape(pos, (-1,))]), x._sizes), x)
    if found is None:
        return ops.full(elements._sizes, invert, dtype=dt.bool, device=elements.device)
    return ops.logical_not(found) if invert else found


@kernel("CompositeImplicitAutograd")
def isin_tensor_tensor(elements, test_elements, *, assume_unique=False, invert=False):
    """True where an element of ``elements`` is in ``test_elements``."""
    _check_isin_dtype(elements)
    _check_isin_dtype(test_elements)
    return _isin(elements, test_elements, invert)


def _check_isin_dtype(t) -> None:
    if t.dtype is dt.bool:  # torch's isin sorts, and has no bool loop (complex: Note [Complex operators])
        raise RuntimeError("Unsupported input type encountered for isin(): Bool")


@kernel("CompositeImplicitAutograd")
def isin_tensor_scalar(elements, test_element, *, assume_unique=False, invert=False):
    """True where an element of ``elements`` equals ``test_element``."""
    _check_isin_dtype(elements)
    return ops.ne(elements, test_element) if invert else ops.eq(elements, test_element)


@kernel("CompositeImplicitAutograd")
def isin_scalar_tensor(element, test_elements, *, assume_unique=False, invert=False):
    """A 0-dim bool: is ``element`` in ``test_elements``."""
    _check_isin_dtype(test_elements)
    e = ops.full((), element, device=test_elements.device,
                 dtype=dt.float32 if isinstance(element, float) else (dt.bool if isinstance(element, bool)
                                                                      else dt.int64))
    if isinstance(element, float) and test_elements.dtype.is_floating_point:
        e = e.to(test_elements.dtype)
    return _isin(e, test_elements, invert)


@kernel("CompositeImplicitAutograd")
def unravel_index(indices, shape):
    """The coordinates of flat ``indices`` in a tensor of ``shape``: one int64 tensor per dim."""
    if indices.dtype.is_floating_point or indices.dtype is dt.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = [shape] if isinstance(shape, int) else list(shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {tuple(shape)}")
    coefs = list(reversed(list(accumulate(reversed(shape[1:] + [1]), func=operator.mul))))
    idx = ops.unsqueeze(indices, -1)
    res = ops.remainder(ops.floor_divide(idx, _long_vector(coefs, indices.device)), _long_vector(shape, indices.device))
    return tuple(ops.unbind(res, -1))


def _long_vector(values, device):
    from ...factories import tensor

    return tensor(values, dtype=dt.int64, device=device)


