"""``strided.distributions``: torch.distributions' core, composed of strided's operators.

Distributions with torch's class names, constructor signatures, properties, argument validation and
error texts; sampling draws from strided's generators (``strided.manual_seed``) on the parameters' device
and dtype; ``rsample``, ``log_prob``, ``cdf``, ``entropy`` and ``kl_divergence`` are differentiable
w.r.t. the parameters, on every backend (CPU, CUDA, and Meta for shapes).

Every family of torch.distributions is here. Two deviate from torch on purpose: ``LKJCholesky`` samples with
the onion method's Beta parameters (torch's draws do not follow its own ``log_prob``: Note [Onion method]) and
``Wishart`` redraws only samples that really are singular (Note [Singular sample correction]).

``strided.distributions.transforms`` is torch's module of that name: transforms.py re-exports those of
transforms_more.py and transforms_composed.py; every transform is also exported from the package itself,
as torch's does.
"""

from __future__ import annotations

from . import constraints, kl_gamma_family, kl_more, transforms  # noqa: F401 - kl_* register KL pairs
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .constraint_registry import biject_to, transform_to
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .fishersnedecor import FisherSnedecor
from .gamma import Gamma
from .generalized_pareto import GeneralizedPareto
from .geometric import Geometric
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .inverse_gamma import InverseGamma
from .kl import kl_divergence, register_kl
from .kumaraswamy import Kumaraswamy
from .laplace import Laplace
from .lkj_cholesky import LKJCholesky
from .log_normal import LogNormal
from .logistic_normal import LogisticNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .pareto import Pareto
from .poisson import Poisson
from .relaxed_bernoulli import LogitRelaxedBernoulli, RelaxedBernoulli
from .relaxed_categorical import ExpRelaxedCategorical, RelaxedOneHotCategorical
from .studentT import StudentT
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
    identity_transform,
)
from .transforms_composed import CatTransform, CumulativeDistributionTransform, StackTransform
from .transforms_more import (
    AbsTransform,
    CorrCholeskyTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SoftmaxTransform,
    StickBreakingTransform,
)
from .uniform import Uniform
from .von_mises import VonMises
from .weibull import Weibull
from .wishart import Wishart

__all__ = [
    "Bernoulli", "Categorical", "Cauchy", "Distribution", "ExpRelaxedCategorical", "Exponential",
    "ExponentialFamily", "Geometric", "Gumbel", "Independent", "Laplace", "LogNormal", "LogitRelaxedBernoulli",
    "MultivariateNormal", "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough", "RelaxedBernoulli",
    "RelaxedOneHotCategorical", "TransformedDistribution", "Uniform", "constraints", "kl_divergence",
    "register_kl", "transforms", "AffineTransform", "ComposeTransform", "ExpTransform", "IndependentTransform",
    "SigmoidTransform", "SoftplusTransform", "TanhTransform", "Transform",
]
__all__ += [
    "AbsTransform", "CatTransform", "ContinuousBernoulli", "CorrCholeskyTransform", "CumulativeDistributionTransform",
    "HalfCauchy", "HalfNormal", "Kumaraswamy", "LogisticNormal", "LowRankMultivariateNormal", "LowerCholeskyTransform",
    "MixtureSameFamily", "Multinomial", "Pareto", "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform",
    "SoftmaxTransform", "StackTransform", "StickBreakingTransform", "VonMises", "Weibull", "biject_to", "transform_to",
]
__all__ += ["Beta", "Binomial", "Chi2", "Dirichlet", "FisherSnedecor", "Gamma", "InverseGamma", "NegativeBinomial",
            "Poisson", "StudentT"]
__all__ += ["GeneralizedPareto", "LKJCholesky", "Wishart", "identity_transform"]
