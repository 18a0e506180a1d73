"""``Dirichlet`` (torch.distributions.Dirichlet).

Note [Dirichlet reparameterization]
As torch's, ``rsample`` is ``_sample_dirichlet`` (normalized gammas) wrapped in an autograd Function whose backward
is the implicit reparameterization gradient of each component's Beta marginal, ``_dirichlet_grad(x, alpha,
total)`` (Note [Implicit reparameterization] in backends/cpu/sampler_grads.py), projected onto the simplex:
``grad_alpha = _dirichlet_grad * (grad_x - sum(x * grad_x))``. The op ``_sample_dirichlet`` itself has no
derivative (torch's neither), so the gradient is torch's, sample for sample; composing the sample from
``_standard_gamma`` draws instead would give a different (also unbiased) estimator.
"""

from __future__ import annotations

from ..autograd import Function, once_differentiable
from ..nn.functional import one_hot
from ..ops import bound as ops
from ..tensor import Size
from . import constraints
from .exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


def _Dirichlet_backward(x, concentration, grad_output):
    total = concentration.sum(-1, True).expand_as(concentration)
    grad = ops._dirichlet_grad(x, concentration, total)
    return grad * (grad_output - (x * grad_output).sum(-1, True))


class _Dirichlet(Function):
    """``_sample_dirichlet`` with torch's reparameterized backward (Note [Dirichlet reparameterization])."""

    @staticmethod
    def forward(ctx, concentration):
        x = ops._sample_dirichlet(concentration)
        ctx.save_for_backward(x, concentration)
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        x, concentration = ctx.saved_tensors
        return _Dirichlet_backward(x, concentration, grad_output)


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution over the simplex of the last dim of ``concentration``."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(Size(batch_shape), Size(event_shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape + self.event_shape)
        super(Dirichlet, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return _Dirichlet.apply(self.concentration.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (ops.xlogy(self.concentration - 1.0, value).sum(-1) + ops.lgamma(self.concentration.sum(-1))
                - ops.lgamma(self.concentration).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        # where every concentration is below 1 the mode is a vertex: torch's one-hot of the argmax (of a NaN row:
        # the first vertex)
        vertex = one_hot(mode.argmax(dim=-1), concentrationm1.shape[-1]).to(mode)
        mask = (self.concentration < 1).all(dim=-1, keepdim=True)
        return ops.where(mask, vertex, mode)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (ops.lgamma(self.concentration).sum(-1) - ops.lgamma(a0) - (k - a0) * ops.digamma(a0)
                - ((self.concentration - 1.0) * ops.digamma(self.concentration)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - ops.lgamma(x.sum(-1))
