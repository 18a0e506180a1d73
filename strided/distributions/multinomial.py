"""``Multinomial`` (torch.distributions.Multinomial): counts of ``total_count`` categorical draws.

Note [Multinomial entropy]
``H = n H_cat - log n! + sum_j E[log X_j!]`` with each count ``X_j ~ Binomial(n, p_j)``; the expectations
sum ``P(X_j = k) log k!`` over k = 1..n, torch's formula. The binomial log-probabilities are written here
from the logits, as torch's ``Binomial.log_prob`` computes them (so the values agree to rounding), rather
than through a Binomial distribution object. One deviation: torch takes ``lgamma(n + 1)`` of an integer
tensor, which computes in float32 (a relative difference of about 2e-8 in the entropy); here it is in the
probabilities' dtype.
"""

from __future__ import annotations

from ..factories import arange, ones_like, zeros
from ..ops import bound as ops
from ..tensor import Size
from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .utils import broadcast_all, probs_to_logits

__all__ = ["Multinomial"]


def _binomial_log_prob(total_count: int, logits, value):
    """``log P(X = value)`` for ``X ~ Binomial(total_count, sigmoid(logits))`` (torch's stable form)."""
    log_factorial_n = ops.lgamma(value.new_full((), total_count + 1.0))
    log_factorial_k = ops.lgamma(value + 1)
    log_factorial_nmk = ops.lgamma(total_count - value + 1)
    # total_count * log(1 + exp(logits)) = total_count * (max(logits, 0) + log1p(exp(-|logits|)))
    clamped = (logits.clamp(min=0) + logits - logits.clamp(max=0)) / 2
    normalize_term = total_count * clamped + total_count * ops.log1p(ops.exp(-ops.abs(logits))) - log_factorial_n
    return value * logits - log_factorial_k - log_factorial_nmk - normalize_term


class Multinomial(Distribution):
    """The counts of each of K categories in ``total_count`` independent draws with ``probs`` (normalized
    along the last dim) or unnormalized log-probabilities ``logits``. ``sample`` needs the one integer
    ``total_count``; ``log_prob`` accepts any counts (their sum is the number of trials)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count: int = 1, probs=None, logits=None, validate_args: bool | None = None) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        batch_shape = self._categorical.batch_shape
        event_shape = Size(self._categorical.param_shape[-1:])
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        super(Multinomial, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        """Counts from ``total_count`` categorical draws per event, scattered into K bins."""
        sample_shape = Size(sample_shape)
        samples = self._categorical.sample(Size((self.total_count,) + tuple(sample_shape)))
        # (total_count, sample_shape, batch_shape) -> (sample_shape, batch_shape, total_count)
        samples = samples.permute(list(range(1, samples.dim())) + [0])
        counts = zeros(tuple(self._extended_shape(sample_shape)), dtype=samples.dtype, device=samples.device)
        counts = ops.scatter_add(counts, -1, samples, ones_like(samples))
        return counts.type_as(self.probs)

    def entropy(self):
        """Note [Multinomial entropy]."""
        n = self.total_count
        probs = self.probs
        term1 = n * self._categorical.entropy() - ops.lgamma(probs.new_full((), n + 1.0))
        support = arange(1, n + 1, dtype=probs.dtype, device=probs.device).view((-1,) + (1,) * probs.dim())
        binomial_logits = probs_to_logits(probs, is_binary=True)
        binomial_probs = ops.exp(_binomial_log_prob(n, binomial_logits, support))
        term2 = (binomial_probs * ops.lgamma(support + 1)).sum([0, -1])
        return term1 + term2

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = ops.lgamma(value.sum(-1) + 1)
        log_factorial_xs = ops.lgamma(value + 1).sum(-1)
        # a zero count of an impossible category contributes 0, not 0 * -inf
        logits = ops.where((value == 0) & (logits == -float("inf")), 0.0, logits)
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers
