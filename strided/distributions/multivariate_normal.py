"""``MultivariateNormal`` (torch.distributions.MultivariateNormal).

Note [Scale-tril parameterization]
Whichever of ``covariance_matrix`` (Sigma), ``precision_matrix`` (Sigma^-1) or ``scale_tril`` (L, with
Sigma = L L^T) is given, the distribution keeps the unbroadcast lower Cholesky factor L and derives the
rest from it, lazily (Note [Lazy parameters]): ``log_prob`` needs the Mahalanobis term ||L^-1 (x - mu)||^2
(one triangular solve) and ``log det Sigma = 2 sum log diag L``; ``rsample`` is ``mu + L eps``. From a
precision matrix P, L comes from the Cholesky factor of P with rows and columns reversed (torch's trick:
flip(chol(flip(P)))^-T is lower triangular with L L^T = P^-1), which avoids inverting P first.
"""

from __future__ import annotations

import math

from ..backends.meta.common import broadcast_shapes
from ..factories import eye
from ..linalg import cholesky, solve_triangular
from ..ops import bound as ops
from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import lazy_property, standard_normal

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat, bvec):
    """Matrix-vector products broadcast over the batch dims."""
    return ops.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """``x^T (L L^T)^-1 x`` for a batch of lower factors ``bL`` (batch dims broadcast into ``bx``'s).

    As torch's: ``bx``'s batch dims are regrouped so that one triangular solve against the flattened
    factors, with many right-hand sides each, covers every vector."""
    n = bx.size(-1)
    bx_batch_shape = tuple(bx.shape[:-1])
    bx_batch_dims = len(bx_batch_shape)
    bL_batch_dims = bL.dim() - 2
    outer_batch_dims = bx_batch_dims - bL_batch_dims
    old_batch_dims = outer_batch_dims + bL_batch_dims
    new_batch_dims = outer_batch_dims + 2 * bL_batch_dims
    # reshape bx to (..., 1, j, i, 1, n) with bL's batch (j, i)
    bx_new_shape = tuple(bx.shape[:outer_batch_dims])
    for s_l, s_x in zip(bL.shape[:-2], bx.shape[outer_batch_dims:-1]):
        bx_new_shape += (s_x // s_l, s_l)
    bx = bx.reshape(bx_new_shape + (n,))
    permute_dims = (list(range(outer_batch_dims)) + list(range(outer_batch_dims, new_batch_dims, 2))
                    + list(range(outer_batch_dims + 1, new_batch_dims, 2)) + [new_batch_dims])
    bx = bx.permute(permute_dims)

    flat_L = bL.reshape(-1, n, n)  # (b, n, n)
    flat_x = bx.reshape(-1, flat_L.size(0), n)  # (c, b, n)
    flat_x_swap = flat_x.permute(1, 2, 0)  # (b, n, c)
    M_swap = solve_triangular(flat_L, flat_x_swap, upper=False).pow(2).sum(-2)  # (b, c)
    M = M_swap.t()  # (c, b)

    permuted_M = M.reshape(tuple(bx.shape[:-1]))
    permute_inv_dims = list(range(outer_batch_dims))
    for i in range(bL_batch_dims):
        permute_inv_dims += [outer_batch_dims + i, old_batch_dims + i]
    return permuted_M.permute(permute_inv_dims).reshape(bx_batch_shape)


def _precision_to_scale_tril(P):
    """Note [Scale-tril parameterization]."""
    Lf = cholesky(ops.flip(P, (-2, -1)))
    L_inv = ops.transpose(ops.flip(Lf, (-2, -1)), -2, -1)
    Id = eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return solve_triangular(L_inv, Id, upper=False)


class MultivariateNormal(Distribution):
    """The multivariate normal of mean ``loc`` and one of ``covariance_matrix``, ``precision_matrix`` or
    ``scale_tril`` (Note [Scale-tril parameterization]); batch dims broadcast."""

    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        for name, matrix in (("scale_tril matrix", scale_tril), ("covariance_matrix", covariance_matrix),
                             ("precision_matrix", precision_matrix)):
            if matrix is None:
                continue
            if matrix.dim() < 2:
                raise ValueError(f"{name} must be at least two-dimensional, with optional leading batch dimensions")
            batch_shape = Size(broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1])))
            setattr(self, name.split()[0], matrix.expand(tuple(batch_shape) + (-1, -1)))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        super().__init__(batch_shape, Size(self.loc.shape[-1:]), validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        cov_shape = loc_shape + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        super(MultivariateNormal, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) + tuple(self._event_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return ops.matmul(L, L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        from ..linalg.legacy import cholesky_inverse

        return cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(tuple(self._batch_shape) + tuple(self._event_shape))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(0, -2, -1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - self._half_log_det()

    def entropy(self):
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        if len(self._batch_shape) == 0:
            return H
        return H.expand(tuple(self._batch_shape))
