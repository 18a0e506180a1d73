"""``FisherSnedecor`` (torch.distributions.FisherSnedecor): the F-distribution."""

from __future__ import annotations

import math

from ..ops import bound as ops
from ..tensor import Size
from ..type_info import finfo
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all, is_number

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """The F-distribution with ``df1`` and ``df2`` degrees of freedom."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args: bool | None = None) -> None:
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        batch_shape = Size() if is_number(df1) and is_number(df2) else self.df1.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(FisherSnedecor, _instance)
        batch_shape = Size(batch_shape)
        new.df1 = self.df1.expand(batch_shape)
        new.df2 = self.df2.expand(batch_shape)
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        super(FisherSnedecor, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        df2 = ops.where(self.df2 <= 2, math.nan, self.df2)
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return ops.where(self.df1 <= 2, math.nan, mode)

    @property
    def variance(self):
        df2 = ops.where(self.df2 <= 4, math.nan, self.df2)
        return 2 * df2.pow(2) * (self.df1 + df2 - 2) / (self.df1 * (df2 - 2).pow(2) * (df2 - 4))

    def rsample(self, sample_shape=()):
        """``X1 / X2`` with ``X1 ~ Gamma(df1 / 2, df1)``, ``X2 ~ Gamma(df2 / 2, df2)`` (both clamped to tiny, as
        torch's in-place clamps: the gradient stops where they bite)."""
        shape = self._extended_shape(sample_shape)
        X1 = self._gamma1.rsample(sample_shape).view(shape)
        X2 = self._gamma2.rsample(sample_shape).view(shape)
        tiny = finfo(X2.dtype).tiny
        Y = X1 / X2.clamp(min=tiny)
        return Y.clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1 = self.df1 * 0.5
        ct2 = self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * ops.log(value)
        t3 = (ct1 + ct2) * ops.log1p(ct3 * value)
        return t1 + t2 - t3
