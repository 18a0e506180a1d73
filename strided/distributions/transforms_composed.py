"""torch.distributions.transforms' transforms made of other transforms or of a distribution: the functors
``CatTransform`` / ``StackTransform`` (each transform of ``tseq`` applied to a slice of the input, as ``cat`` /
``stack``) and ``CumulativeDistributionTransform`` (a distribution's cdf). Re-exported by transforms.py.
"""

from __future__ import annotations

from ..ops import bound as ops
from . import constraints
from .transform import Transform
from .utils import sum_rightmost

__all__ = ["CatTransform", "StackTransform", "CumulativeDistributionTransform"]


def _check_dim(t, dim: int, length: int, what: str, name: str, bound: str) -> None:
    """torch's assertions of CatTransform / StackTransform: ``dim`` in range of ``t`` (called ``what``), and
    ``name.size(dim)`` equal to ``length`` (called ``bound``)."""
    if not (-t.dim() <= dim < t.dim()):
        raise AssertionError(f"dim {dim} out of range for {what} with {t.dim()} dimensions")
    if t.size(dim) != length:
        raise AssertionError(f"{name}.size({dim}) = {t.size(dim)} must equal {bound} {length}")


class _Functor(Transform):
    """A transform made of the transforms ``tseq``, each applied to a part of the input."""

    def __init__(self, tseq, cache_size: int = 0) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)

    @property
    def bijective(self) -> bool:
        return all(t.bijective for t in self.transforms)


class CatTransform(_Functor):
    """Transforms ``tseq`` applied to consecutive slices of lengths ``lengths`` along ``dim`` (as ``cat``)."""

    def __init__(self, tseq, dim: int = 0, lengths=None, cache_size: int = 0) -> None:
        super().__init__(tseq, cache_size=cache_size)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match transforms ({len(self.transforms)})")
        self.dim = dim

    @property
    def event_dim(self) -> int:
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self) -> int:
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _map(self, v, name, inverse):
        _check_dim(v, self.dim, self.length, "tensor", name, "length")
        out, start = [], 0
        for trans, length in zip(self.transforms, self.lengths):
            part = v.narrow(self.dim, start, length)
            out.append(trans.inv(part) if inverse else trans(part))
            start = start + length
        return ops.cat(out, self.dim)

    def _call(self, x):
        return self._map(x, "x", False)

    def _inverse(self, y):
        return self._map(y, "y", True)

    def log_abs_det_jacobian(self, x, y):
        _check_dim(x, self.dim, self.length, "x", "x", "length")
        _check_dim(y, self.dim, self.length, "y", "y", "length")
        logdetjacs, start = [], 0
        for trans, length in zip(self.transforms, self.lengths):
            logdetjac = trans.log_abs_det_jacobian(x.narrow(self.dim, start, length), y.narrow(self.dim, start, length))
            if trans.event_dim < self.event_dim:
                logdetjac = sum_rightmost(logdetjac, self.event_dim - trans.event_dim)
            logdetjacs.append(logdetjac)
            start = start + length
        # concatenate along dim when it is a batch dim of the Jacobian, else sum the parts
        dim = self.dim - x.dim() if self.dim >= 0 else self.dim
        dim = dim + self.event_dim
        return ops.cat(logdetjacs, dim) if dim < 0 else sum(logdetjacs)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(_Functor):
    """Transforms ``tseq`` applied to the successive slices along ``dim`` (as ``stack``)."""

    def __init__(self, tseq, dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(tseq, cache_size=cache_size)
        self.dim = dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slice(self, z, what, name):
        _check_dim(z, self.dim, len(self.transforms), what, name, "len(transforms)")
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _call(self, x):
        return ops.stack([t(v) for v, t in zip(self._slice(x, "tensor", "x"), self.transforms)], self.dim)

    def _inverse(self, y):
        return ops.stack([t.inv(v) for v, t in zip(self._slice(y, "tensor", "y"), self.transforms)], self.dim)

    def log_abs_det_jacobian(self, x, y):
        xs, ys = self._slice(x, "x", "x"), self._slice(y, "y", "y")
        return ops.stack([t.log_abs_det_jacobian(a, b) for a, b, t in zip(xs, ys, self.transforms)], self.dim)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CumulativeDistributionTransform(Transform):
    """``y = distribution.cdf(x)``: onto the unit interval (a copula's marginal map)."""

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)
