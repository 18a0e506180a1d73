"""``GeneralizedPareto`` (torch.distributions.GeneralizedPareto).

Note [Concentration near zero]
With ``z = (x - loc) / scale`` and concentration ``k``, the survival function is ``(1 + k z)^(-1/k)``, whose
``k -> 0`` limit is ``exp(-z)`` (the exponential). As torch's (after TensorFlow Probability), every formula
takes the limit form where ``k`` is ``isclose`` to 0 (rtol 1e-5, atol 1e-8) and evaluates the general form at
``k = 1`` there (``safe_conc``), so that neither branch of the ``where`` divides by zero and gradients stay
finite. The support is ``[loc, inf)`` for ``k >= 0`` and ``[loc, loc - scale / k]`` for ``k < 0``; special cases
are the exponential (``loc = 0, k = 0``), Pareto (``k > 0, loc = scale / k``) and uniform (``k = -1``).
"""

from __future__ import annotations

import math

from ..factories import rand
from ..ops import bound as ops
from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, is_number

__all__ = ["GeneralizedPareto"]


def _eq_zero(concentration):
    """Where the concentration takes the ``k -> 0`` limit forms (Note [Concentration near zero])."""
    return concentration.isclose(ops.zeros_like(concentration))


class GeneralizedPareto(Distribution):
    """The generalized Pareto distribution of location ``loc``, scale ``scale`` and shape ``concentration``
    (Note [Concentration near zero]); ``rsample`` inverts the CDF of a uniform draw."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args: bool | None = None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        if is_number(loc) and is_number(scale) and is_number(concentration):
            batch_shape = Size()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(tuple(batch_shape))
        new.scale = self.scale.expand(tuple(batch_shape))
        new.concentration = self.concentration.expand(tuple(batch_shape))
        super(GeneralizedPareto, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        u = rand(tuple(self._extended_shape(sample_shape)), dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def _z(self, x):
        return (x - self.loc) / self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero = _eq_zero(self.concentration)
        safe_conc = ops.where(eq_zero, ops.ones_like(self.concentration), self.concentration)
        y = 1 / safe_conc + ops.ones_like(z)
        where_nonzero = ops.where(y == 0, y, y * ops.log1p(safe_conc * z))
        return -self.scale.log() - ops.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value):
        """``log P(X > value)``."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero = _eq_zero(self.concentration)
        safe_conc = ops.where(eq_zero, ops.ones_like(self.concentration), self.concentration)
        where_nonzero = -ops.log1p(safe_conc * z) / safe_conc
        return ops.where(eq_zero, -z, where_nonzero)

    def log_cdf(self, value):
        """``log P(X <= value)``."""
        return ops.log1p(-ops.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return ops.exp(self.log_cdf(value))

    def icdf(self, value):
        loc, scale, concentration = self.loc, self.scale, self.concentration
        eq_zero = _eq_zero(concentration)
        safe_conc = ops.where(eq_zero, ops.ones_like(concentration), concentration)
        logu = ops.log1p(-value)
        where_nonzero = loc + scale / safe_conc * ops.expm1(-safe_conc * logu)
        where_zero = loc - scale * logu
        return ops.where(eq_zero, where_zero, where_nonzero)

    @property
    def mean(self):
        valid = self.concentration < 1
        safe_conc = ops.where(valid, self.concentration, 0.5)
        return ops.where(valid, self.loc + self.scale / (1 - safe_conc), math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        safe_conc = ops.where(valid, self.concentration, 0.25)
        result = self.scale**2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc))
        return ops.where(valid, result, math.nan)

    def entropy(self):
        ans = self.scale.log() + self.concentration + 1
        return ops.broadcast_to(ans, tuple(self._batch_shape))

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = ops.where(self.concentration < 0, lower - self.scale / self.concentration, math.inf)
        return constraints.interval(lower, upper)
