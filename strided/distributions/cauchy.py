"""``Cauchy`` (torch.distributions.Cauchy)."""

from __future__ import annotations

import math

from ..factories import full, rand
from ..ops import bound as ops
from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, is_number

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    """The Cauchy (Lorentz) distribution of median ``loc`` and half width ``scale``: the ratio of two
    independent standard normals, shifted and scaled. Its mean is undefined (nan), its variance infinite."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        batch_shape = Size() if is_number(loc) and is_number(scale) else self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Cauchy, _instance)
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        super(Cauchy, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return full(tuple(self._extended_shape()), math.nan, dtype=self.loc.dtype, device=self.loc.device)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return full(tuple(self._extended_shape()), math.inf, dtype=self.loc.dtype, device=self.loc.device)

    def rsample(self, sample_shape=()):
        # the standard Cauchy by inversion, torch's cauchy_: tan(pi * (u - 1/2))
        shape = self._extended_shape(sample_shape)
        u = rand(tuple(shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + ops.tan(math.pi * (u - 0.5)) * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ops.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return ops.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
