"""``Laplace`` (torch.distributions.Laplace)."""

from __future__ import annotations

from ..factories import rand
from ..ops import bound as ops
from ..tensor import Size
from ..type_info import finfo
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, is_number

__all__ = ["Laplace"]


class Laplace(Distribution):
    """The Laplace (double exponential) distribution of location ``loc`` and scale ``scale``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        batch_shape = Size() if is_number(loc) and is_number(scale) else self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Laplace, _instance)
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        super(Laplace, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return (2**0.5) * self.scale

    def rsample(self, sample_shape=()):
        # u uniform on [eps - 1, 1), torch's range: |u| < 1, so log1p(-|u|) stays finite
        shape = self._extended_shape(sample_shape)
        eps = finfo(self.loc.dtype).eps
        u = rand(tuple(shape), dtype=self.loc.dtype, device=self.loc.device) * (2 - eps) + (eps - 1)
        return self.loc - self.scale * u.sign() * ops.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -ops.log(2 * self.scale) - ops.abs(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * ops.expm1(-(value - self.loc).abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * ops.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + ops.log(2 * self.scale)

