"""Reductions composed of others: nansum, nanmean (NaN treated as absent), std_mean / var_mean (one call, two
results), aminmax, all / any over a list of dims. Autograd goes through the ops they call."""

from __future__ import annotations

from ... import return_types
from ...backends.meta.common import wrap_dim
from ...dispatch.library import kernel
from .. import bound as ops

__all__ = []


def _dims(dim, op: str = "nansum"):
    if dim is None:
        return []
    dims = [dim] if isinstance(dim, int) else list(dim) if isinstance(dim, (list, tuple)) else None
    if dims is None or any(d.__class__ is not int for d in dims):
        raise TypeError(f"{op}(): argument 'dim' must be int or tuple of ints, not {dim!r}")
    return dims


@kernel("CompositeImplicitAutograd")
def nansum(self, dim=None, keepdim=False, *, dtype=None):
    """``sum`` with NaN counted as zero (integers and bool have no NaN)."""
    x = ops.where(ops.isnan(self), 0, self) if self.dtype.is_floating_point else self
    return ops.sum(x, _dims(dim), keepdim, dtype=dtype)


@kernel("CompositeImplicitAutograd")
def nanmean(self, dim=None, keepdim=False, *, dtype=None):
    """The mean of the non-NaN elements (NaN where there are none)."""
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{_type_name(self.dtype)}")
    if dtype is not None:
        from ... import dtypes as dt

        d = dt.to_dtype(dtype)
        if not (d.is_floating_point or d.is_complex):
            raise RuntimeError("nanmean(): could not infer output dtype. Optional dtype must be either a floating "
                               f"point or complex dtype. Got: {_type_name(d)}")
    count = ops.sum(ops.logical_not(ops.isnan(self)), _dims(dim, "nanmean"), keepdim)
    return ops.div(nansum(self, dim, keepdim, dtype=dtype), count)


def _check_floating(self, name: str) -> None:
    """torch's std_mean / var_mean check, in their own words (std / var say "std and var")."""
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError(f"{name} only support floating point and complex dtypes")


@kernel("CompositeImplicitAutograd")
def std_mean(self, dim=None, *, correction=None, keepdim=False):
    _check_floating(self, "std_mean")
    return ops.std(self, dim, correction=correction, keepdim=keepdim), ops.mean(self, _dims(dim), keepdim)


@kernel("CompositeImplicitAutograd")
def var_mean(self, dim=None, *, correction=None, keepdim=False):
    _check_floating(self, "var_mean")
    return ops.var(self, dim, correction=correction, keepdim=keepdim), ops.mean(self, _dims(dim), keepdim)


@kernel("CompositeImplicitAutograd")
def std_mean_unbiased(self, dim, unbiased=True, keepdim=False):
    return std_mean(self, dim, correction=1 if unbiased else 0, keepdim=keepdim)


@kernel("CompositeImplicitAutograd")
def var_mean_unbiased(self, dim, unbiased=True, keepdim=False):
    return var_mean(self, dim, correction=1 if unbiased else 0, keepdim=keepdim)


@kernel("CompositeImplicitAutograd")
def std_mean_all_unbiased(self, unbiased=True):
    return std_mean(self, None, correction=1 if unbiased else 0)


@kernel("CompositeImplicitAutograd")
def var_mean_all_unbiased(self, unbiased=True):
    return var_mean(self, None, correction=1 if unbiased else 0)


@kernel("CompositeImplicitAutograd")
def aminmax(self, *, dim=None, keepdim=False):
    """``(amin, amax)`` over ``dim`` (all elements when None) as ``return_types.aminmax(min, max)``."""
    if self.numel() == 0 and dim is None:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                           "identity.")
    if dim is not None and self.numel() == 0 and self.dim() and self.shape[dim] == 0:
        raise IndexError(f"aminmax: Expected reduction dim {wrap_dim(dim, self.dim())} to have non-zero size.")
    dims = _dims(dim)
    return return_types.aminmax((ops.amin(self, dims, keepdim), ops.amax(self, dims, keepdim)))


def _type_name(d) -> str:
    from ...backends.meta.pointwise import scalar_type_name

    return scalar_type_name(d)


def _truth_over_dims(self, dim, keepdim: bool, fn):
    """all / any over ``dim`` (None: every element; (): none, each element's truth), one dim at a time."""
    from ... import dtypes as dt
    from ...backends.meta.common import reduction_dims

    if dim is None:
        r = fn(self)
        return r.reshape([1] * self.dim()) if keepdim else r
    if len(dim) == 0:  # nothing reduced: each element's truth, in the dtype all / any give (uint8 stays uint8)
        r = ops.ne(self, 0)
        return r.to(dt.uint8) if self.dtype is dt.uint8 else r
    dims = reduction_dims(tuple(dim), self.dim())  # torch's range and repeated-dim errors
    r = self
    for d in reversed(dims):
        r = fn(r, d, True)
    return r if keepdim else r.squeeze(dims)


@kernel("CompositeExplicitAutograd")
def all_dims(self, dim=None, keepdim=False):
    """``all`` over a list of dims (torch's ``all.dims``)."""
    return _truth_over_dims(self, dim, keepdim, ops.all)


@kernel("CompositeExplicitAutograd")
def any_dims(self, dim=None, keepdim=False):
    """``any`` over a list of dims (torch's ``any.dims``)."""
    return _truth_over_dims(self, dim, keepdim, ops.any)
