"""``Exponential`` (torch.distributions.Exponential)."""

from __future__ import annotations

from ..factories import rand, zeros_like
from ..ops import bound as ops
from ..tensor import Size
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all, is_number

__all__ = ["Exponential"]


class Exponential(ExponentialFamily):
    """The exponential distribution of rate ``rate`` (mean ``1 / rate``)."""

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        batch_shape = Size() if is_number(rate) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Exponential, _instance)
        batch_shape = Size(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        super(Exponential, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()):
        # the standard exponential by inversion, -log(1 - u) with u in [0, 1): finite, as torch's exponential_
        shape = self._extended_shape(sample_shape)
        u = rand(tuple(shape), dtype=self.rate.dtype, device=self.rate.device)
        return -ops.log1p(-u) / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - ops.exp(-self.rate * value)

    def icdf(self, value):
        return -ops.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - ops.log(self.rate)

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -ops.log(-x)
