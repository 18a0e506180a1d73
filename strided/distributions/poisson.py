"""``Poisson`` (torch.distributions.Poisson)."""

from __future__ import annotations

from ..autograd import no_grad
from ..ops import bound as ops
from ..tensor import Size
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all, is_number

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    """The Poisson distribution of mean ``rate``: ``P(k) = rate^k e^-rate / k!`` on the non-negative integers."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def __init__(self, rate, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        batch_shape = Size() if is_number(rate) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Poisson, _instance)
        batch_shape = Size(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        super(Poisson, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return ops.poisson(self.rate.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self):
        return (ops.log(self.rate),)

    def _log_normalizer(self, x):
        return ops.exp(x)
