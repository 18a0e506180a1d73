"""``strided.distributions``: torch.distributions' core, composed of strided's operators.

Distributions with torch's class names, constructor signatures, properties, argument validation and
error texts; sampling draws from strided's generators (``strided.manual_seed``) on the parameters' device
and dtype; ``rsample``, ``log_prob``, ``cdf``, ``entropy`` and ``kl_divergence`` are differentiable
w.r.t. the parameters, on every backend (CPU, CUDA, and Meta for shapes).

Not here: the families that need ``lgamma`` / ``digamma`` (Gamma, Chi2, Beta, Dirichlet, Poisson,
Binomial, Multinomial, NegativeBinomial, StudentT, ...) and the KL pairs that use them (Note [KL without
lgamma] in kl.py); torch's other families (HalfNormal, Pareto, Weibull, LowRankMultivariateNormal,
MixtureSameFamily, ...), ``biject_to`` / ``transform_to`` and the transforms beyond those in transforms.py.
"""

from __future__ import annotations

from . import constraints, transforms
from .bernoulli import Bernoulli
from .categorical import Categorical
from .cauchy import Cauchy
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .geometric import Geometric
from .gumbel import Gumbel
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .relaxed_bernoulli import LogitRelaxedBernoulli, RelaxedBernoulli
from .relaxed_categorical import ExpRelaxedCategorical, RelaxedOneHotCategorical
from .transformed_distribution import TransformedDistribution
from .transforms import (
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    IndependentTransform,
    SigmoidTransform,
    SoftplusTransform,
    TanhTransform,
    Transform,
)
from .uniform import Uniform

__all__ = [
    "Bernoulli", "Categorical", "Cauchy", "Distribution", "ExpRelaxedCategorical", "Exponential",
    "ExponentialFamily", "Geometric", "Gumbel", "Independent", "Laplace", "LogNormal", "LogitRelaxedBernoulli",
    "MultivariateNormal", "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough", "RelaxedBernoulli",
    "RelaxedOneHotCategorical", "TransformedDistribution", "Uniform", "constraints", "kl_divergence",
    "register_kl", "transforms", "AffineTransform", "ComposeTransform", "ExpTransform", "IndependentTransform",
    "SigmoidTransform", "SoftplusTransform", "TanhTransform", "Transform",
]
