"""``StudentT`` (torch.distributions.StudentT)."""

from __future__ import annotations

import math

from ..ops import bound as ops
from ..tensor import Size
from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import broadcast_all, standard_normal

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t-distribution with ``df`` degrees of freedom, location ``loc`` and scale ``scale``."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def mean(self):
        return ops.where(self.df <= 1, math.nan, self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        big = self.df > 2
        df = ops.where(big, self.df, 3.0)  # (no 0 / 0 in the gradient at df = 2)
        return ops.where(big, self.scale.pow(2) * df / (df - 2), ops.where(self.df > 1, math.inf, math.nan))

    def __init__(self, df, loc=0.0, scale=1.0, validate_args: bool | None = None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        batch_shape = self.df.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = Size(batch_shape)
        new.df = self.df.expand(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new._chi2 = self._chi2.expand(batch_shape)
        super(StudentT, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        """``loc + scale * X / sqrt(Z / df)`` with ``X ~ Normal(0, 1)``, ``Z ~ Chi2(df)``."""
        shape = self._extended_shape(sample_shape)
        X = standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        Z = self._chi2.rsample(sample_shape)
        Y = X * ops.rsqrt(Z / self.df)
        return self.loc + self.scale * Y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        Z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi) + ops.lgamma(0.5 * self.df)
             - ops.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * ops.log1p(y**2.0 / self.df) - Z

    def entropy(self):
        lbeta = ops.lgamma(0.5 * self.df) + math.lgamma(0.5) - ops.lgamma(0.5 * (self.df + 1))
        return (self.scale.log() + 0.5 * (self.df + 1) * (ops.digamma(0.5 * (self.df + 1))
                                                          - ops.digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)
