"""``ExponentialFamily``: distributions whose density is ``exp(<t(x), theta> - F(theta) + k(x))``.

Note [Bregman entropy]
A subclass that gives its natural parameters ``theta``, log normalizer ``F`` and mean carrier measure
``E[k(x)]`` gets its entropy, and its same-family KL divergence (kl.py), from autograd:
``H = F(theta) - <theta, grad F(theta)> - E[k(x)]`` (Nielsen & Nock, "Entropies and cross-entropies of
exponential families"). As torch's, it detaches the natural parameters first, so the result carries no
gradient back to the distribution's parameters. The distributions here all override ``entropy`` with the closed form;
this is the fallback for user subclasses and the cross-check of the closed forms in the tests.
"""

from __future__ import annotations

from ..autograd import enable_grad, grad
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Base class of exponential-family distributions; Note [Bregman entropy]."""

    @property
    def _natural_params(self) -> tuple:
        """The natural parameters, a tuple of tensors."""
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        """The log normalizer ``F`` at the given natural parameters."""
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> float:
        """``E[k(x)]``."""
        raise NotImplementedError

    def entropy(self):
        """The entropy from the log normalizer's gradient (Note [Bregman entropy])."""
        result = -self._mean_carrier_measure
        with enable_grad():
            nparams = [p.detach().requires_grad_() for p in self._natural_params]
            lg_normal = self._log_normalizer(*nparams)
            gradients = grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for nparam, g in zip(nparams, gradients):
            result = result - (nparam * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
