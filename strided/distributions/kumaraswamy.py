"""``Kumaraswamy``: ``(1 - U^(1 / concentration0))^(1 / concentration1)`` for ``U ~ Uniform(0, 1)``
(torch.distributions.Kumaraswamy).

Note [Kumaraswamy mode]
torch's ``mode`` evaluates ``log1p(-concentration0) / concentration0 - log1p(-concentration0 * concentration1)``,
which is NaN for every ``concentration0 > 1`` (torch 2.14); here it is the mode ``((a - 1) / (a b - 1))^(1 / a)``
(a = concentration1, b = concentration0), in log space, NaN where a concentration is below 1 as torch intends.
"""

from __future__ import annotations

import math

from ..factories import full_like
from ..ops import bound as ops
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform
from .transforms_more import PowerTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant

__all__ = ["Kumaraswamy"]


def _moments(a, b, n):
    """``E[X^n] = b B(1 + n / a, b)``, through ``lgamma``."""
    arg1 = 1 + n / a
    log_value = ops.lgamma(arg1) + ops.lgamma(b) - ops.lgamma(arg1 + b)
    return b * ops.exp(log_value)


class Kumaraswamy(TransformedDistribution):
    """The Kumaraswamy distribution on [0, 1]: density ``a b x^(a - 1) (1 - x^a)^(b - 1)`` with
    ``a = concentration1``, ``b = concentration0``."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base_dist = Uniform(full_like(self.concentration0, 0), full_like(self.concentration0, 1),
                            validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()), AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(tuple(batch_shape))
        new.concentration0 = self.concentration0.expand(tuple(batch_shape))
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        """``((a - 1) / (a b - 1))^(1 / a)``; NaN when either concentration is below 1 (Note [Kumaraswamy mode])."""
        a, b = self.concentration1, self.concentration0
        log_mode = ((a - 1).log() - (a * b - 1).log()) / a  # in log space, as torch's
        return ops.where((b < 1) | (a < 1), math.nan, log_mode).exp()

    @property
    def variance(self):
        return _moments(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self):
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        H0 = ops.digamma(self.concentration0 + 1) + euler_constant
        return t0 + t1 * H0 - ops.log(self.concentration1) - ops.log(self.concentration0)
