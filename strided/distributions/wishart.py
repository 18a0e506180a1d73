"""``Wishart`` (torch.distributions.Wishart).

Note [Bartlett decomposition]
A Wishart(df, Sigma = L L^T) draw is ``(L A)(L A)^T`` with ``A`` lower triangular, ``A_ii = sqrt(c_i)`` for
``c_i ~ Chi2(df - i)`` and ``A_ij ~ Normal(0, 1)`` below the diagonal (Bartlett 1933; Odell & Feiveson 1966).
The chi-squared draws are reparameterized (implicit gamma gradients), so ``rsample`` is differentiable in
``df`` as well as in ``L``. As in MultivariateNormal (Note [Scale-tril parameterization]), whichever matrix
parameter is given, the unbroadcast ``L`` is kept and the others derived lazily.

Note [Singular sample correction]
For ``df`` close to ``dim - 1`` a draw can be numerically singular. As torch's, ``rsample`` then warns and
redraws, up to ``max_try_correction`` times (10 by default), every sample index whose batch holds a draw
outside ``positive_definite``. torch forgets to negate the support check (pytorch/pytorch#122021), so it
warns "Singular sample detected." and redraws on every call; strided does what torch means to do: warn and
redraw only when a draw is singular. A redraw is a whole new batch of samples kept where needed
(``where``: the same distribution as torch's gather of the singular indices, and no data-dependent shapes).
Meta tensors hold no values: there nothing is checked.
"""

from __future__ import annotations

import math
import warnings

from ..backends.meta.common import broadcast_shapes
from ..factories import arange, eye, tensor
from ..linalg import cholesky, slogdet
from ..linalg._common import diag_embed
from ..linalg.legacy import cholesky_solve
from ..ops import bound as ops
from ..tensor import Size
from ..type_info import finfo
from . import constraints
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import _precision_to_scale_tril
from .utils import is_number, lazy_property, standard_normal

__all__ = ["Wishart"]

_log_2 = math.log(2)


def _any(mask) -> bool:
    """Whether any element of a bool tensor is True (one host read); False on meta, which holds no values."""
    return mask.device.type != "meta" and bool(mask.any())


def _mvdigamma(x, p: int):
    """The multivariate digamma ``sum_i digamma(x - i / 2)``, ``i < p``."""
    if _any(~x.gt((p - 1) / 2)):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    return ops.digamma(x.unsqueeze(-1) - arange(p, dtype=x.dtype, device=x.device).div(2)).sum(-1)


def _clamp_above_eps(x):
    return x.clamp(min=finfo(x.dtype).eps)


class Wishart(ExponentialFamily):
    """The Wishart distribution of ``df`` degrees of freedom over ``p x p`` positive-definite matrices, with
    scale given by one of ``covariance_matrix``, ``precision_matrix`` or ``scale_tril`` (Note [Bartlett
    decomposition]); ``df > p - 1``; batch dims of ``df`` and the matrix broadcast."""

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite, "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky, "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args: bool | None = None) -> None:
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None)
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if is_number(df):
            batch_shape = Size(param.shape[:-2])
            self.df = tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = Size(broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape)))
            self.df = df.expand(tuple(batch_shape))
        event_shape = Size(param.shape[-2:])
        p = event_shape[-1]
        if _any(self.df.le(p - 1)):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        name = "scale_tril" if scale_tril is not None else (
            "covariance_matrix" if covariance_matrix is not None else "precision_matrix")
        setattr(self, name, param.expand(tuple(batch_shape) + (-1, -1)))
        if _any(self.df.lt(p)):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for "
                          "ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._bartlett_chi2(batch_shape)

    def _bartlett_chi2(self, batch_shape):
        """The Chi2(df - i) of the Bartlett diagonal (Note [Bartlett decomposition])."""
        L = self._unbroadcasted_scale_tril
        i = arange(self._event_shape[-1], dtype=L.dtype, device=L.device).expand(tuple(batch_shape) + (-1,))
        return Chi2(df=self.df.unsqueeze(-1) - i)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = tuple(batch_shape) + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(tuple(batch_shape))
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        new._event_shape = self._event_shape
        new._dist_chi2 = new._bartlett_chi2(batch_shape)
        super(Wishart, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return ops.matmul(L, L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        identity = eye(self._event_shape[-1], dtype=L.dtype, device=L.device)
        return cholesky_solve(identity, L).expand(self._matrix_shape())

    def _df_matrix(self):
        """``df`` shaped ``batch_shape + (1, 1)``, to scale matrices."""
        return self.df.reshape(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self):
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = ops.where(factor <= 0, math.nan, factor)
        return factor.reshape(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag_V = V.diagonal(0, -2, -1)
        return self._df_matrix() * (V.pow(2) + diag_V.unsqueeze(-1) * diag_V.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=()):
        """Note [Bartlett decomposition]."""
        diag = diag_embed(_clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt()))
        below = standard_normal(tuple(sample_shape) + self._matrix_shape(), dtype=diag.dtype, device=diag.device)
        noise = diag + below.tril(-1)
        chol = ops.matmul(self._unbroadcasted_scale_tril, noise)
        return ops.matmul(chol, chol.mT)

    def _singular(self, sample):
        """Per sample index: whether any batch member's draw is singular (Note [Singular sample correction])."""
        is_singular = ~self.support.check(sample)
        if self._batch_shape:  # (torch: amax over self._batch_dims)
            is_singular = is_singular.reshape(tuple(is_singular.shape[:is_singular.dim() - len(self._batch_shape)])
                                              + (-1,)).any(-1)
        return is_singular

    def rsample(self, sample_shape=(), max_try_correction=None):
        """A reparameterized draw by the Bartlett decomposition (Note [Bartlett decomposition]); numerically
        singular draws are redrawn up to ``max_try_correction`` times (Note [Singular sample correction]),
        and may remain singular (then ``log_prob`` may be ``-inf``)."""
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        if sample.device.type == "meta":
            return sample
        is_singular = self._singular(sample)
        if bool(is_singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            event_dims = (1,) * (len(self._batch_shape) + 2)
            for _ in range(max_try_correction):
                sample_new = self._bartlett_sampling(sample_shape)
                sample = ops.where(is_singular.reshape(tuple(is_singular.shape) + event_dims), sample_new, sample)
                is_singular = self._singular(sample)
                if not bool(is_singular.any()):
                    break
        return sample

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(0, -2, -1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        trace = cholesky_solve(value, self._unbroadcasted_scale_tril).diagonal(0, -2, -1).sum(-1)
        return (-nu * (p * _log_2 / 2 + self._half_log_det()) - ops.mvlgamma(nu / 2, p)
                + (nu - p - 1) / 2 * slogdet(value).logabsdet - trace / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        return ((p + 1) * (p * _log_2 / 2 + self._half_log_det()) + ops.mvlgamma(nu / 2, p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return (y + (p + 1) / 2) * (-slogdet(-2 * x).logabsdet + _log_2 * p) + ops.mvlgamma(y + (p + 1) / 2, p)
