"""``Tensor``'s linear-algebra methods (``x.det()``, ``x.svd()``, ``x.inverse()``, ...): a mixin whose methods
call ``strided.linalg.legacy``, imported on first use so that ``import strided`` does not load linalg."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .tensor import Tensor

__all__ = ["TensorLinalg"]


def _legacy():
    from .linalg import legacy

    return legacy


class TensorLinalg:
    """Linear-algebra methods shared by ``Tensor`` (no state of its own)."""

    __slots__ = ()

    def norm(self, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
        """``strided.norm(self, p, dim, keepdim, dtype=dtype)``."""
        from .toplevel_functions import norm

        return norm(self, p, dim, keepdim, dtype=dtype)

    def det(self) -> Tensor:
        """``strided.det(self)``."""
        return _legacy().det(self)

    def logdet(self) -> Tensor:
        """``strided.logdet(self)``."""
        return _legacy().logdet(self)

    def slogdet(self):
        """``strided.slogdet(self)``."""
        return _legacy().slogdet(self)

    def inverse(self) -> Tensor:
        """``strided.inverse(self)``."""
        return _legacy().inverse(self)

    def svd(self, some: bool = True, compute_uv: bool = True):
        """``strided.svd(self, some, compute_uv)``."""
        return _legacy().svd(self, some, compute_uv)

    def cholesky_solve(self, input2: Tensor, upper: bool = False) -> Tensor:
        """``strided.cholesky_solve(self, input2, upper)``."""
        return _legacy().cholesky_solve(self, input2, upper)

    def cholesky_inverse(self, upper: bool = False) -> Tensor:
        """``strided.cholesky_inverse(self, upper)``."""
        return _legacy().cholesky_inverse(self, upper)

    def pinverse(self, rcond: float = 1e-15) -> Tensor:
        """``strided.pinverse(self, rcond)``."""
        return _legacy().pinverse(self, rcond)

    def matrix_power(self, n: int) -> Tensor:
        """``strided.matrix_power(self, n)``."""
        return _legacy().matrix_power(self, n)

    def matrix_exp(self) -> Tensor:
        """``strided.matrix_exp(self)``."""
        return _legacy().matrix_exp(self)

    def triangular_solve(self, A: Tensor, upper: bool = True, transpose: bool = False, unitriangular: bool = False):
        """``strided.triangular_solve(self, A, ...)`` (deprecated, as torch's)."""
        return _legacy().triangular_solve(self, A, upper, transpose, unitriangular)

    def qr(self, some: bool = True):
        """``strided.qr(self, some)``: removed, as torch 2.14's (raises its message)."""
        return _legacy().qr(self, some)

    def solve(self, other: Tensor):
        """``strided.solve(self, other)``: removed, as torch's (raises its message)."""
        return _legacy().solve(self, other)

    def lstsq(self, other: Tensor):
        """``strided.lstsq(self, other)``: removed, as torch's (raises its message)."""
        return _legacy().lstsq(self, other)

    def eig(self, eigenvectors: bool = False):
        """``strided.eig(self, eigenvectors)``: removed, as torch's (raises its message)."""
        return _legacy().eig(self, eigenvectors)

    def symeig(self, eigenvectors: bool = False):
        """``strided.symeig(self, eigenvectors)``: removed, as torch's (raises its message)."""
        return _legacy().symeig(self, eigenvectors)

    def cholesky(self, upper: bool = False) -> Tensor:
        """``strided.cholesky(self, upper)``: removed, as torch 2.14's (raises its message)."""
        return _legacy().cholesky(self, upper)

    def lu(self, pivot: bool = True, get_infos: bool = False):
        """``strided.lu(self, pivot, get_infos)`` (deprecated, as torch's)."""
        return _legacy().lu(self, pivot, get_infos)

    def lu_solve(self, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:  # noqa: N803 - torch's argument names
        """``strided.lu_solve(self, LU_data, LU_pivots)`` (deprecated, as torch's)."""
        return _legacy().lu_solve(self, LU_data, LU_pivots)

    def orgqr(self, input2: Tensor) -> Tensor:
        """``strided.orgqr(self, input2)``: the product of the Householder reflectors (self, tau = input2)."""
        return _legacy().orgqr(self, input2)

    def ormqr(self, input2: Tensor, input3: Tensor, left: bool = True, transpose: bool = False) -> Tensor:
        """``strided.ormqr(self, input2, input3, left, transpose)``: Q of the reflectors (self, tau = input2) times
        ``input3``."""
        return _legacy().ormqr(self, input2, input3, left, transpose)
