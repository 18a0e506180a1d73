"""CompositeImplicitAutograd order statistics over ``sort``: median (the lower median, as torch) and
quantile with torch's five interpolations.

Note [NaN in order statistics]
``sort`` puts NaN last and keeps equal values in index order, so a row with NaN has them at the
end, the first of them in original order first. torch's median and quantile propagate NaN: a row
holding one gives NaN, and median's index is that first NaN's. Checking ``q``'s values when it is a
tensor reads them on the host (a synchronization on CUDA; meta tensors have no values to check).
"""

from __future__ import annotations

import math

from ... import dtypes as dt
from ... import return_types
from ...backends.meta.common import wrap_dim
from ...dispatch.library import kernel
from .. import bound as ops

__all__ = []

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _nan_aware_pick(self, d: int, k: int, keepdim: bool):
    """Values and indices at sorted position ``k`` of dim ``d``, or at the first NaN of rows with NaN."""
    values, indices = ops.sort(self, d)
    pos = ops.full([1] * self.dim(), k, dtype=dt.int64, device=self.device)
    if self.dtype.is_floating_point:
        nans = ops.sum(ops.isnan(self), [d], True)
        pos = ops.where(ops.gt(nans, 0), self._sizes[d] - nans, pos)
    shape = list(self._sizes)
    shape[d] = 1
    pos = ops.expand(pos, shape)
    v, i = ops.gather(values, d, pos), ops.gather(indices, d, pos)
    return (v, i) if keepdim else (ops.squeeze(v, [d]), ops.squeeze(i, [d]))


def refuse_bool(self, kernel_name: str) -> None:
    """torch's order statistics take no bool tensors (AT_DISPATCH without bool): its error, with the device's
    kernel name where torch has one ("median_cpu" / "median_cuda")."""
    if self.dtype is dt.bool:
        if kernel_name.endswith("_"):
            kernel_name += "cuda" if self.device.type == "cuda" else "cpu"
        raise NotImplementedError(f'"{kernel_name}" not implemented for \'Bool\'')


@kernel("CompositeExplicitAutograd")  # its gradient is shared among ties (derivatives.yaml), as torch's
def median(self):
    """The lower median of all elements (NaN if there is one; NaN for an empty float tensor)."""
    refuse_bool(self, "median_")
    if self.numel() == 0:
        return ops.full((), float("nan"), dtype=self.dtype, device=self.device)
    flat = ops.reshape(self, (-1,))
    return _nan_aware_pick(flat, 0, (flat._sizes[0] - 1) // 2, False)[0]


@kernel("CompositeImplicitAutograd")
def median_dim(self, dim, keepdim=False):
    """``(values, indices)`` of the lower median along ``dim`` (Note [NaN in order statistics])."""
    refuse_bool(self, "median_out")
    d = wrap_dim(dim, max(self.dim(), 1))
    x = self if self.dim() else ops.reshape(self, (1,))
    n = x._sizes[d]
    if n == 0:
        raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
    v, i = _nan_aware_pick(x, d, (n - 1) // 2, keepdim or self.dim() == 0)
    if self.dim() == 0:
        v, i = ops.reshape(v, ()), ops.reshape(i, ())
    return return_types.median((v, i))


def _check(self, interpolation):
    if self.dtype not in (dt.float32, dt.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if self.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")


def _blend(read, pos, frac_shape, interpolation):
    """The quantile values at fractional sorted positions ``pos``: ``read(index tensor)`` reads sorted
    values, the ``interpolation`` rule combines the ones below and above."""
    if interpolation == "nearest":
        return read(ops.round(pos).to(dt.int64))  # half to even, as torch's round
    below = ops.floor(pos)
    v_lo = read(below.to(dt.int64))
    if interpolation == "lower":
        return v_lo
    v_hi = read(ops.ceil(pos).to(dt.int64))
    if interpolation == "higher":
        return v_hi
    if interpolation == "midpoint":
        return ops.div(ops.add(v_lo, v_hi), 2)
    return ops.lerp(v_lo, v_hi, ops.reshape(ops.sub(pos, below), frac_shape))


def _quantile_args(self, q, dim, interpolation):
    """Checked ``(q values as 1-D, q was a scalar, input lines, their dim)`` of quantile / nanquantile."""
    _check(self, interpolation)
    scalar_q = not hasattr(q, "dim")
    if scalar_q:
        if not 0 <= q <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
        qs = ops.full((1,), float(q), dtype=self.dtype, device=self.device)
    else:
        if q.dim() > 1:
            raise RuntimeError("quantile() q must be a scalar or 1D tensor")
        if q.dtype is not self.dtype:
            raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
        if q.numel() and q.device.type != "meta" and not (0 <= float(ops.amin(q, [])) <= float(ops.amax(q, [])) <= 1):
            raise RuntimeError("quantile() q values must be in the range [0, 1]")
        qs = ops.reshape(q, (-1,))
    x = ops.reshape(self, (-1,)) if dim is None else self
    d = 0 if dim is None else wrap_dim(dim, max(self.dim(), 1))
    if x.dim() == 0:
        x = ops.reshape(x, (1,))
    return qs, scalar_q, x, d


def _quantile_result(out, self, dim, d, keepdim, scalar_q):
    """(nq, ...) quantiles, the reduced dim gone, shaped as torch returns them."""
    if dim is None:
        out = ops.reshape(out, (out._sizes[0],) + ((1,) * self.dim() if keepdim else ()))
    elif keepdim and self.dim():  # a 0-dim input keeps no dim (torch)
        out = ops.unsqueeze(out, d + 1)
    return ops.reshape(out, out._sizes[1:]) if scalar_q else out


@kernel("CompositeImplicitAutograd")
def quantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The ``q``-quantiles along ``dim`` (all elements when None); a 1-D ``q`` adds a leading dim."""
    qs, scalar_q, x, d = _quantile_args(self, q, dim, interpolation)
    sorted_ = ops.sort(x, d)[0]
    out = _blend(lambda idx: ops.index_select(sorted_, d, idx), ops.mul(qs, x._sizes[d] - 1),
                 [-1 if i == d else 1 for i in range(x.dim())], interpolation)  # the quantiles along dim d
    out = ops.where(ops.gt(ops.sum(ops.isnan(x), [d], True), 0), math.nan, out)
    return _quantile_result(ops.movedim(out, d, 0), self, dim, d, keepdim, scalar_q)


# Note [NaN-ignoring order statistics]
# nanmedian and nanquantile rank only the non-NaN values of each line: sort puts NaN last, so with
# k = the count of non-NaN values per line, the wanted sorted positions are per-line tensors
# (q * (k - 1), or (k - 1) // 2) read with ``gather``. A line of NaN only gives NaN (its median
# index is that of the line's lower middle element: torch leaves it unspecified).
def _valid_counts(x, d):
    return ops.sub(ops.full((), x._sizes[d], dtype=dt.int64, device=x.device), ops.sum(ops.isnan(x), [d], True))


@kernel("CompositeExplicitAutograd")  # its gradient is shared among ties (derivatives.yaml), as torch's
def nanmedian(self):
    """The lower median of the non-NaN elements (NaN when there are none)."""
    refuse_bool(self, "median_")
    if self.numel() == 0:
        return ops.full((), float("nan"), dtype=self.dtype, device=self.device)
    return nanmedian_dim(ops.reshape(self, (-1,)), 0)[0]


@kernel("CompositeImplicitAutograd")
def nanmedian_dim(self, dim, keepdim=False):
    """``(values, indices)`` of the lower median of the non-NaN values along ``dim``."""
    refuse_bool(self, "median_out")
    d = wrap_dim(dim, max(self.dim(), 1))
    x = self if self.dim() else ops.reshape(self, (1,))
    n = x._sizes[d]
    if n == 0:
        raise IndexError(f"nanmedian(): Expected reduction dim {d} to have non-zero size.")
    values, indices = ops.sort(x, d)  # stable (Note [Sort order])
    if x.dtype.is_floating_point:
        valid = _valid_counts(x, d)
        k = ops.where(ops.gt(valid, 0), ops.floor_divide(ops.sub(valid, 1), 2), (n - 1) // 2)
    else:
        shape = [1 if i == d else s for i, s in enumerate(x._sizes)]
        k = ops.full(shape, (n - 1) // 2, dtype=dt.int64, device=x.device)
    v, i = ops.gather(values, d, k), ops.gather(indices, d, k)
    if not (keepdim or self.dim() == 0):
        v, i = ops.squeeze(v, [d]), ops.squeeze(i, [d])
    if self.dim() == 0:
        v, i = ops.reshape(v, ()), ops.reshape(i, ())
    return return_types.nanmedian((v, i))


@kernel("CompositeImplicitAutograd")
def nanquantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
    """``quantile`` of the non-NaN values (Note [NaN-ignoring order statistics])."""
    qs, scalar_q, x, d = _quantile_args(self, q, dim, interpolation)
    valid = _valid_counts(x, d)  # the line's shape with dim d of size 1
    nq = qs._sizes[0]
    pos = ops.mul(ops.reshape(qs, (nq,) + (1,) * x.dim()), ops.unsqueeze(ops.sub(valid, 1), 0).to(x.dtype))
    pos = ops.clamp(pos, 0, x._sizes[d] - 1)  # per line and q: (nq, ...) with dim d + 1 of size 1
    sorted_ = ops.expand(ops.unsqueeze(ops.sort(x, d)[0], 0), (nq,) + tuple(x._sizes))
    out = _blend(lambda idx: ops.gather(sorted_, d + 1, idx), pos, pos._sizes, interpolation)
    out = ops.where(ops.unsqueeze(ops.eq(valid, 0), 0), math.nan, out)
    return _quantile_result(ops.squeeze(out, [d + 1]), self, dim, d, keepdim, scalar_q)


# Note [mode as run lengths]
# In a sorted line each run of equal values gets a number (cumsum of the run starts); a position's
# run spans searchsorted(run, left) .. searchsorted(run, right) of those numbers, so every position
# knows its run's length; the first longest run is the mode (the smallest of the
# most frequent values, as torch) and its last element in the stable order is the input's last
# occurrence, the index torch returns. The value is read back at that index, so the gradient goes
# where torch sends it. NaNs never equal each other, so they form no run.
@kernel("CompositeImplicitAutograd")
def mode(self, dim=-1, keepdim=False):
    """``(values, indices)``: the most frequent value along ``dim`` (the smallest on ties) and the index
    of its last occurrence (Note [mode as run lengths])."""
    d = wrap_dim(dim, max(self.dim(), 1))
    x = self if self.dim() else ops.reshape(self, (1,))
    n = x._sizes[d]
    if n == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    rows = ops.movedim(x, d, -1)
    sorted_, order = ops.sort(rows, -1)
    head = ops.ones(sorted_._sizes[:-1] + (1,), dtype=dt.bool, device=x.device)
    starts = ops.cat([head, ops.ne(ops.narrow(sorted_, -1, 1, n - 1), ops.narrow(sorted_, -1, 0, n - 1))], -1)
    run = ops.cumsum(starts, -1)  # the run number of each position: sorted, and never NaN
    start = ops.searchsorted(run, run)
    end = ops.searchsorted(run, run, right=True)
    pos = ops.argmax(ops.sub(end, start), -1, True)
    index = ops.gather(order, -1, ops.sub(ops.gather(end, -1, pos), 1))
    value = ops.gather(rows, -1, index)
    if keepdim and self.dim():
        value, index = ops.movedim(value, -1, d), ops.movedim(index, -1, d)
    else:
        value, index = ops.squeeze(value, [-1]), ops.squeeze(index, [-1])
    return return_types.mode((value, index))


@kernel("CompositeImplicitAutograd")
def searchsorted_scalar(sorted_sequence, self, *, out_int32=False, right=False, side=None, sorter=None):
    """``searchsorted`` of one number: a 0-dim index."""
    if sorted_sequence.dim() != 1:
        raise RuntimeError(f"torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension "
                           f"is 1, but we got boundaries tensor dim({sorted_sequence.dim()}) and input value's dim(0) "
                           "numel(1)")
    value = ops.full((), self, dtype=dt.scalar_dtype(self), device=sorted_sequence.device)
    return ops.searchsorted(sorted_sequence, value, out_int32=out_int32, right=right, side=side, sorter=sorter)


@kernel("CompositeImplicitAutograd")
def bucketize(self, boundaries, *, out_int32=False, right=False):
    """The bucket of each value: ``searchsorted(boundaries, self)`` over 1-D ``boundaries``."""
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})")
    return ops.searchsorted(boundaries, self, out_int32=out_int32, right=right)


@kernel("CompositeImplicitAutograd")
def bucketize_scalar(self, boundaries, *, out_int32=False, right=False):
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})")
    return searchsorted_scalar(boundaries, self, out_int32=out_int32, right=right)
