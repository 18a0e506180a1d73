"""The matrix constraints: lower triangular, lower Cholesky, correlation Cholesky, square, symmetric, positive
semidefinite and positive definite (re-exported by ``constraints``).

Note [Early return of the matrix checks]
Every ``check`` is composed of strided ops, so it runs on any device. As torch's, ``symmetric``,
``positive_semidefinite`` and ``positive_definite`` return the weaker check's result when it already
fails somewhere (one host read), before the costlier test (an eigendecomposition, a Cholesky factorization
that would fail on non-symmetric input); on meta nothing can be read and the full check runs for its shape.
"""

from __future__ import annotations

from ..factories import full
from ..ops import bound as ops
from ..type_info import finfo
from .constraint_base import Constraint
from .utils import all_true as _all_true

__all__ = ["_LowerTriangular", "_LowerCholesky", "_CorrCholesky", "_Square", "_Symmetric", "_PositiveSemidefinite",
           "_PositiveDefinite"]


def _is_lower_triangular(value):
    return (value.tril() == value).reshape(tuple(value.shape[:-2]) + (-1,)).all(-1)


class _LowerTriangular(Constraint):
    """Lower-triangular square matrices."""

    event_dim = 2

    def check(self, value):
        return _is_lower_triangular(value)


class _LowerCholesky(Constraint):
    """Lower-triangular square matrices with a positive diagonal."""

    event_dim = 2

    def check(self, value):
        positive_diagonal = (value.diagonal(0, -2, -1) > 0).all(-1)
        return _is_lower_triangular(value) & positive_diagonal


class _CorrCholesky(Constraint):
    """Lower Cholesky factors of correlation matrices: rows of unit length."""

    event_dim = 2

    def check(self, value):
        tol = finfo(value.dtype).eps * value.size(-1) * 10  # 10 is torch's adjustable fudge factor
        row_norm = ops.sqrt((value.detach() * value.detach()).sum(-1))
        unit_row_norm = (row_norm - 1.0).abs().le(tol).all(-1)
        return _LowerCholesky().check(value) & unit_row_norm


class _Square(Constraint):
    """Square matrices."""

    event_dim = 2

    def check(self, value):
        return full(tuple(value.shape[:-2]), value.shape[-2] == value.shape[-1], device=value.device)


class _Symmetric(_Square):
    """Symmetric square matrices (to atol 1e-6); Note [Early return of the matrix checks]."""

    def check(self, value):
        square_check = super().check(value)
        if not _all_true(square_check):
            return square_check
        return value.isclose(value.mT, atol=1e-6).all(-2).all(-1)


class _PositiveSemidefinite(_Symmetric):
    """Symmetric matrices with nonnegative eigenvalues."""

    def check(self, value):
        sym_check = super().check(value)
        if not _all_true(sym_check):
            return sym_check
        from ..linalg import eigvalsh

        return eigvalsh(value).ge(0).all(-1)


class _PositiveDefinite(_Symmetric):
    """Symmetric matrices with a Cholesky factorization."""

    def check(self, value):
        sym_check = super().check(value)
        if not _all_true(sym_check):
            return sym_check
        from ..linalg import cholesky_ex

        return cholesky_ex(value).info.eq(0)
