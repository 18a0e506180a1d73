"""``MixtureSameFamily`` (torch.distributions.MixtureSameFamily) and its support constraint.

Note [Mixture layout]
The component distribution's rightmost batch dim indexes the k components; the mixture's batch shape is the
rest. ``log_prob(x)`` inserts a singleton dim for k in front of ``x``'s event dims, evaluates every
component there and reduces ``logsumexp(log p_k(x) + log w_k)`` over k. ``sample`` draws a component index
and a sample of every component, then gathers the chosen component's (not reparameterizable: no
``rsample``, as in torch).
"""

from __future__ import annotations

from ..autograd import no_grad
from ..ops import bound as ops
from ..tensor import Size
from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["MixtureSameFamily", "MixtureSameFamilyConstraint"]


class MixtureSameFamilyConstraint(constraints.Constraint):
    """The component distribution's support checked with the component dim added back (torch's
    ``constraints.MixtureSameFamilyConstraint``)."""

    def __init__(self, base_constraint) -> None:
        if not isinstance(base_constraint, constraints.Constraint):
            raise AssertionError(f"base_constraint must be a Constraint, got {type(base_constraint).__name__}")
        self.base_constraint = base_constraint
        super().__init__()

    @property
    def is_discrete(self) -> bool:
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:
        return self.base_constraint.event_dim

    def check(self, value):
        """Whether ``value`` is a possible sample: valid for every component."""
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        if value.dim() < self.event_dim:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.dim()}")
        num_dim_to_keep = value.dim() - self.event_dim
        return result.reshape(tuple(result.shape[:num_dim_to_keep]) + (-1,)).all(-1)

    def __repr__(self):
        return f"{self.__class__.__name__}({self.base_constraint!r})"


class MixtureSameFamily(Distribution):
    """A (batch of) mixture(s) of components of one family: ``mixture_distribution`` is a ``Categorical``
    over k components, ``component_distribution`` any distribution whose rightmost batch dim is k (Note
    [Mixture layout]).

    Example: ``MixtureSameFamily(Categorical(torch.ones(5)), Normal(torch.randn(5), torch.rand(5)))`` is a
    one-dimensional mixture of five equally weighted normals.
    """

    arg_constraints: dict = {}
    has_rsample = False

    def __init__(self, mixture_distribution: Categorical, component_distribution: Distribution,
                 validate_args: bool | None = None) -> None:
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(self._mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of strided.distributions.Categorical")
        if not isinstance(self._component_distribution, Distribution):
            raise ValueError("The Component distribution needs to be an instance of strided.distributions.Distribution")
        mdbs = self._mixture_distribution.batch_shape
        cdbs = Size(self._component_distribution.batch_shape[:-1])
        for size1, size2 in zip(reversed(mdbs), reversed(cdbs)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mdbs}) is not compatible with "
                                 f"`component_distribution.batch_shape`({cdbs})")
        km = self._mixture_distribution.logits.shape[-1]
        kc = self._component_distribution.batch_shape[-1]
        if km is not None and kc is not None and km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        event_shape = self._component_distribution.event_shape
        self._event_ndims = len(event_shape)
        super().__init__(batch_shape=cdbs, event_shape=event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = Size(batch_shape)
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution = self._component_distribution.expand(tuple(batch_shape) + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        event_shape = new._component_distribution.event_shape
        super(MixtureSameFamily, new).__init__(batch_shape=batch_shape, event_shape=event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self):
        return MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self) -> Categorical:
        return self._mixture_distribution

    @property
    def component_distribution(self) -> Distribution:
        return self._component_distribution

    @property
    def mean(self):
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        return ops.sum(probs * self.component_distribution.mean, -1 - self._event_ndims)

    @property
    def variance(self):
        # the law of total variance: Var(Y) = E[Var(Y | X)] + Var(E[Y | X])
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        mean_cond_var = ops.sum(probs * self.component_distribution.variance, -1 - self._event_ndims)
        var_cond_mean = ops.sum(probs * (self.component_distribution.mean - self._pad(self.mean)).pow(2.0),
                                -1 - self._event_ndims)
        return mean_cond_var + var_cond_mean

    def cdf(self, x):
        cdf_x = self.component_distribution.cdf(self._pad(x))
        return ops.sum(cdf_x * self.mixture_distribution.probs, -1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self.component_distribution.log_prob(self._pad(x))  # [S, B, k]
        log_mix_prob = ops.log_softmax(self.mixture_distribution.logits, -1)  # [B, k]
        return ops.logsumexp(log_prob_x + log_mix_prob, -1)  # [S, B]

    def sample(self, sample_shape=()):
        with no_grad():
            sample_len = len(sample_shape)
            batch_len = len(self.batch_shape)
            gather_dim = sample_len + batch_len
            es = tuple(self.event_shape)
            mix_sample = self.mixture_distribution.sample(sample_shape)  # [n, B]
            mix_shape = tuple(mix_sample.shape)
            comp_samples = self.component_distribution.sample(sample_shape)  # [n, B, k, E]
            # the chosen component's index, repeated over the event dims, gathered along k
            mix_sample_r = mix_sample.reshape(mix_shape + (1,) * (len(es) + 1))
            mix_sample_r = mix_sample_r.repeat((1,) * len(mix_shape) + (1,) + es)
            return ops.gather(comp_samples, gather_dim, mix_sample_r).squeeze(gather_dim)

    def _pad(self, x):
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x):
        dist_batch_ndims = len(self.batch_shape)
        cat_batch_ndims = len(self.mixture_distribution.batch_shape)
        pad_ndims = 0 if cat_batch_ndims == 1 else dist_batch_ndims - cat_batch_ndims
        xs = tuple(x.shape)
        return x.reshape(xs[:-1] + (1,) * pad_ndims + xs[-1:] + (1,) * self._event_ndims)

    def __repr__(self):
        return f"MixtureSameFamily(\n  {self.mixture_distribution},\n  {self.component_distribution})"
