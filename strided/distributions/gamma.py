"""``Gamma`` (torch.distributions.Gamma).

``cdf`` is ``igamma(concentration, rate * value)`` (``special.gammainc``), as torch's: differentiable in ``value``;
a gradient in the concentration raises torch's NotImplementedError (the ``igamma`` op's formula).
"""

from __future__ import annotations

from ..autograd import no_grad
from ..factories import as_tensor
from ..ops import bound as ops
from ..tensor import Size
from ..type_info import finfo
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all, is_number

__all__ = ["Gamma"]


def _standard_gamma(concentration, generator=None):
    return ops._standard_gamma(concentration, generator=generator)


class Gamma(ExponentialFamily):
    """The gamma distribution of shape ``concentration`` and ``rate`` (inverse scale)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def __init__(self, concentration, rate, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        batch_shape = Size() if is_number(concentration) and is_number(rate) else self.concentration.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gamma, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        super(Gamma, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=(), *, generator=None):
        with no_grad():
            return self.rsample(sample_shape, generator=generator)

    def rsample(self, sample_shape=(), generator=None):
        """A reparameterized sample: ``_standard_gamma``'s implicit gradient flows to the concentration."""
        shape = self._extended_shape(sample_shape)
        value = _standard_gamma(self.concentration.expand(shape), generator=generator) / self.rate.expand(shape)
        value.detach().clamp_(min=finfo(value.dtype).tiny)  # not recorded by autograd
        return value

    def log_prob(self, value):
        value = as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (ops.xlogy(self.concentration, self.rate) + ops.xlogy(self.concentration - 1, value)
                - self.rate * value - ops.lgamma(self.concentration))

    def entropy(self):
        return (self.concentration - ops.log(self.rate) + ops.lgamma(self.concentration)
                + (1.0 - self.concentration) * ops.digamma(self.concentration))

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return ops.lgamma(x + 1) + (x + 1) * ops.log(-y.reciprocal())

    def cdf(self, value):
        """``P(concentration, rate * value)``: the regularized lower incomplete gamma function."""
        if self._validate_args:
            self._validate_sample(value)
        a, x = broadcast_all(self.concentration, self.rate * value)
        return ops.igamma(a, x)
