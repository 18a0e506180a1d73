"""``Gumbel`` (torch.distributions.Gumbel)."""

from __future__ import annotations

import math

from ..factories import full_like, ones_like
from ..type_info import finfo
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant, is_number

__all__ = ["Gumbel"]


class Gumbel(TransformedDistribution):
    """The Gumbel (type-I extreme value) distribution of location ``loc`` and scale ``scale``.

    As torch's: ``loc - scale * log(-log(U))`` with ``U`` uniform on ``[tiny, 1 - eps]``, written as
    transforms of a ``Uniform``; ``log_prob`` is the closed form.
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        fi = finfo(self.loc.dtype)
        if is_number(loc) and is_number(scale):
            base_dist = Uniform(fi.tiny, 1 - fi.eps, validate_args=validate_args)
        else:
            base_dist = Uniform(full_like(self.loc, fi.tiny), full_like(self.loc, 1 - fi.eps),
                                validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-ones_like(self.scale)),
                      ExpTransform().inv, AffineTransform(loc=loc, scale=-self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return y - y.exp() - self.scale.log()

    @property
    def mean(self):
        return self.loc + self.scale * euler_constant

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return math.pi / math.sqrt(6) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def entropy(self):
        return self.scale.log() + (1 + euler_constant)
