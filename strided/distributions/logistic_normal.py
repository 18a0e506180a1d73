"""``LogisticNormal``: a normal vector pushed onto the simplex by stick breaking
(torch.distributions.LogisticNormal)."""

from __future__ import annotations

from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms_more import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    """``Y = StickBreakingTransform()(X)`` with ``X ~ Normal(loc, scale)`` (independent coordinates, the last
    dim the event): ``log(Y / (1 - Y.cumsum(-1)))[..., :-1] ~ Normal(loc, scale)``; Y has one more coordinate
    than ``loc``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale
