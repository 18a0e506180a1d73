"""``InverseGamma``: ``1 / X`` for ``X ~ Gamma(concentration, rate)`` (torch.distributions.InverseGamma)."""

from __future__ import annotations

import math

from ..ops import bound as ops
from . import constraints
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms_more import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    """The inverse gamma distribution: the reciprocal of a Gamma(concentration, rate) variable."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args: bool | None = None) -> None:
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -base_dist.rate.new_ones(())
        super().__init__(base_dist, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def concentration(self):
        return self.base_dist.concentration

    @property
    def rate(self):
        return self.base_dist.rate

    @property
    def mean(self):
        return ops.where(self.concentration > 1, self.rate / (self.concentration - 1), math.inf)

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        c = self.concentration
        return ops.where(c > 2, self.rate.square() / ((c - 1).square() * (c - 2)), math.inf)

    def entropy(self):
        c = self.concentration
        return c + self.rate.log() + ops.lgamma(c) - (1 + c) * ops.digamma(c)
