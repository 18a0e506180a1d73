"""``ContinuousBernoulli`` (torch.distributions.ContinuousBernoulli; Loaiza-Ganem & Cunningham, "The continuous
Bernoulli: fixing a pervasive error in variational autoencoders", NeurIPS 2019).

Note [Unstable region]
The density is ``C(p) p^x (1 - p)^(1 - x)`` on [0, 1] with ``C(p) = 2 atanh(1 - 2p) / (1 - 2p)``, which is
0/0 at ``p = 1/2``. As torch's: within ``lims`` (default (0.499, 0.501)) the closed forms are evaluated at a
``cut`` probability outside the region (so neither they nor their gradients see the 0/0) and the result is
replaced by a Taylor expansion around 1/2; the ``cdf`` / ``icdf`` become the uniform's there.
"""

from __future__ import annotations

import math

from ..factories import ones_like, rand, zeros_like
from ..nn.functional import binary_cross_entropy_with_logits
from ..ops import bound as ops
from ..tensor import Size
from . import constraints
from .exp_family import ExponentialFamily
from .utils import all_true, broadcast_all, clamp_probs, is_number, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """The continuous Bernoulli distribution on [0, 1], of ``probs`` in (0, 1) or real ``logits`` (not a
    probability nor log-odds: the names follow the Bernoulli's); Note [Unstable region]."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims: tuple = (0.499, 0.501),
                 validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = is_number(probs)
            (self.probs,) = broadcast_all(probs)
            # validated here, if asked, because the clamp below would hide values outside [0, 1]
            if validate_args is not None and not all_true(self.arg_constraints["probs"].check(self.probs)):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            is_scalar = is_number(logits)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = Size() if is_scalar else self._param.size()
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        batch_shape = Size(batch_shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(tuple(batch_shape))
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(tuple(batch_shape))
            new._param = new.logits
        super(ContinuousBernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _outside_unstable_region(self):
        return ops.le(self.probs, self._lims[0]) | ops.gt(self.probs, self._lims[1])

    def _cut_probs(self):
        return ops.where(self._outside_unstable_region(), self.probs, self._lims[0] * ones_like(self.probs))

    def _cont_bern_log_norm(self):
        """``log C(p)``, Note [Unstable region]."""
        cut_probs = self._cut_probs()
        below_half = ops.le(cut_probs, 0.5)
        cut_probs_below_half = ops.where(below_half, cut_probs, zeros_like(cut_probs))
        cut_probs_above_half = ops.where(ops.ge(cut_probs, 0.5), cut_probs, ones_like(cut_probs))
        log_norm = ops.log(ops.abs(ops.log1p(-cut_probs) - ops.log(cut_probs))) - ops.where(
            below_half, ops.log1p(-2.0 * cut_probs_below_half), ops.log(2.0 * cut_probs_above_half - 1.0))
        x = ops.pow(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return ops.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut_probs = self._cut_probs()
        mus = cut_probs / (2.0 * cut_probs - 1.0) + 1.0 / (ops.log1p(-cut_probs) - ops.log(cut_probs))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * ops.pow(x, 2)) * x
        return ops.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return ops.sqrt(self.variance)

    @property
    def variance(self):
        cut_probs = self._cut_probs()
        variances = (cut_probs * (cut_probs - 1.0) / ops.pow(1.0 - 2.0 * cut_probs, 2)
                     + 1.0 / ops.pow(ops.log1p(-cut_probs) - ops.log(cut_probs), 2))
        x = ops.pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return ops.where(self._outside_unstable_region(), variances, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = rand(tuple(shape), dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none") + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut_probs = self._cut_probs()
        cdfs = ((ops.pow(cut_probs, value) * ops.pow(1.0 - cut_probs, 1.0 - value) + cut_probs - 1.0)
                / (2.0 * cut_probs - 1.0))
        unbounded_cdfs = ops.where(self._outside_unstable_region(), cdfs, value)
        return ops.where(ops.le(value, 0.0), zeros_like(value),
                         ops.where(ops.ge(value, 1.0), ones_like(value), unbounded_cdfs))

    def icdf(self, value):
        cut_probs = self._cut_probs()
        return ops.where(
            self._outside_unstable_region(),
            (ops.log1p(-cut_probs + value * (2.0 * cut_probs - 1.0)) - ops.log1p(-cut_probs))
            / (ops.log(cut_probs) - ops.log1p(-cut_probs)),
            value)

    def entropy(self):
        log_probs0 = ops.log1p(-self.probs)
        log_probs1 = ops.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """The log normalizer as a function of the natural parameter (Note [Unstable region])."""
        out_unst_reg = ops.le(x, self._lims[0] - 0.5) | ops.gt(x, self._lims[1] - 0.5)
        cut_nat_params = ops.where(out_unst_reg, x, (self._lims[0] - 0.5) * ones_like(x))
        log_norm = ops.log(ops.abs(ops.expm1(cut_nat_params))) - ops.log(ops.abs(cut_nat_params))
        taylor = 0.5 * x + ops.pow(x, 2) / 24.0 - ops.pow(x, 4) / 2880.0
        return ops.where(out_unst_reg, log_norm, taylor)
