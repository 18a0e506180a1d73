"""``Geometric`` (torch.distributions.Geometric)."""

from __future__ import annotations

from ..autograd import no_grad
from ..factories import rand, zeros_like
from ..nn.functional import binary_cross_entropy_with_logits
from ..ops import bound as ops
from ..tensor import Size
from ..type_info import finfo
from . import constraints
from .distribution import Distribution
from .utils import all_true, broadcast_all, is_number, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Geometric"]


class Geometric(Distribution):
    """The number of failures before the first success of Bernoulli trials of success probability
    ``probs`` (or log-odds ``logits``; exactly one of them), on ``{0, 1, 2, ...}``."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        probs_or_logits = probs if probs is not None else logits
        batch_shape = Size() if is_number(probs_or_logits) else probs_or_logits.size()
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            # torch's extra check: p = 0 lies in unit_interval but has no geometric distribution
            value = self.probs
            valid = value > 0
            if not all_true(valid):
                raise ValueError(
                    f"Expected parameter probs ({type(value).__name__} of shape {tuple(value.shape)}) "
                    f"of distribution {self!r} to be positive but found invalid values:\n"
                    f"{value.detach()[ops.logical_not(valid)]}"
                )

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Geometric, _instance)
        batch_shape = Size(batch_shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(batch_shape)
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(batch_shape)
        super(Geometric, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    def sample(self, sample_shape=()):
        # floor(log(u) / log(1 - p)) with u uniform on [tiny, 1), torch's inversion
        shape = self._extended_shape(sample_shape)
        tiny = finfo(self.probs.dtype).tiny
        with no_grad():
            u = rand(tuple(shape), dtype=self.probs.dtype, device=self.probs.device) * (1 - tiny) + tiny
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # p = 1 at value 0: 0 * log(0) would be nan; torch zeroes p there (the term is 0)
        probs = ops.where((probs == 1) & (value == 0), 0.0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs
