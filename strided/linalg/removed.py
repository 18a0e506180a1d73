"""torch.*'s linear-algebra functions that torch has removed (deprecated since 1.9): each raises torch's RuntimeError
naming its torch.linalg replacement (Note [Removed linear-algebra functions]); bound on ``strided`` with the rest of
``legacy.py`` and as Tensor methods where torch keeps them (``tensor_linalg.py``)."""

from __future__ import annotations

from ..tensor import Tensor

__all__ = ["qr", "cholesky", "solve", "lstsq", "eig", "symeig", "matrix_rank"]

_REMOVED = "This function was deprecated since version 1.9 and is now removed. "


# Note [Removed linear-algebra functions]
# torch removed these (deprecated since 1.9; torch.qr and torch.cholesky in 2.14): calling one raises a RuntimeError
# that names the torch.linalg replacement, in torch's words (torch/_linalg_utils.py). strided follows the current
# torch: code that still calls them gets those words rather than an AttributeError.
def qr(input: Tensor, some: bool = True, *, out=None):  # noqa: A002 - torch's argument name
    """Removed, as in torch 2.14: raises torch's RuntimeError naming ``strided.linalg.qr``."""
    raise RuntimeError(
        "This function was deprecated since version 1.9 and is now removed. `torch.qr` is deprecated in favor of "
        "`torch.linalg.qr` and the boolean parameter `some` has been replaced with a string parameter `mode`.\n\n"
        "Q, R = torch.qr(A) should be replaced with:\nQ, R = torch.linalg.qr(A, mode='reduced')\n\nand\n\n"
        "Q, R = torch.qr(A, some=False) should be replaced with:\nQ, R = torch.linalg.qr(A, mode='complete')\n\n"
        f"Since `some` was set to {bool(some)}, use mode='{'reduced' if some else 'complete'}'.")


def cholesky(input: Tensor, upper: bool = False, *, out=None) -> Tensor:  # noqa: A002
    """Removed, as in torch 2.14: raises torch's RuntimeError naming ``strided.linalg.cholesky``."""
    raise RuntimeError(
        "This function was deprecated since version 1.9 and is now removed. `torch.cholesky` is deprecated in favor "
        "of `torch.linalg.cholesky`.\nL = torch.cholesky(A) should be replaced with:\nL = torch.linalg.cholesky(A)\n"
        "U = torch.cholesky(A, upper=True) should be replaced with:\nU = torch.linalg.cholesky(A).mH")


def solve(input: Tensor, A: Tensor, *, out=None):  # noqa: A002
    """Removed, as in torch: raises torch's RuntimeError naming ``strided.linalg.solve``."""
    raise RuntimeError(
        _REMOVED + "`torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has its "
        "arguments reversed and does not return the LU factorization.\n\nTo get the LU factorization see `torch.lu`, "
        "which can be used with `torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, A).solution should be "
        "replaced with:\nX = torch.linalg.solve(A, B)")


def lstsq(input: Tensor, A: Tensor, *, out=None):  # noqa: A002
    """Removed, as in torch: raises torch's RuntimeError naming ``strided.linalg.lstsq``."""
    raise RuntimeError(
        _REMOVED + "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` has reversed "
        "arguments and does not return the QR decomposition in the returned tuple (although it returns other "
        "information about the problem).\n\nTo get the QR decomposition consider using `torch.linalg.qr`.\n\nThe "
        "returned solution in `torch.lstsq` stored the residuals of the solution in the last m - n columns of the "
        "returned value whenever m > n. In torch.linalg.lstsq, the residuals are in the field 'residuals' of the "
        "returned named tuple.\n\nThe unpacking of the solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]\n"
        "should be replaced with:\nX = torch.linalg.lstsq(A, B).solution")


def eig(input: Tensor, eigenvectors: bool = False, *, e=None, v=None):  # noqa: A002
    """Removed, as in torch: raises torch's RuntimeError naming ``strided.linalg.eig``."""
    raise RuntimeError(
        _REMOVED + "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than real tensors "
        "mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:\nL_complex = "
        "torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) should be replaced with:\n"
        "L_complex, V_complex = torch.linalg.eig(A)")


def symeig(input: Tensor, eigenvectors: bool = False, upper: bool = True, *, out=None):  # noqa: A002
    """Removed, as in torch: raises torch's RuntimeError naming ``strided.linalg.eigh``."""
    raise RuntimeError(
        _REMOVED + "The default behavior has changed from using the upper triangular portion of the matrix by default "
        "to using the lower triangular portion.\n\nL, _ = torch.symeig(A, upper=upper) should be replaced with:\n"
        "L = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\nL, V = torch.symeig(A, "
        "eigenvectors=True) should be replaced with:\nL, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')")


def matrix_rank(input: Tensor, tol=None, symmetric: bool = False, *, out=None):  # noqa: A002
    """Removed, as in torch: raises torch's RuntimeError naming ``strided.linalg.matrix_rank``."""
    raise RuntimeError(
        _REMOVED.rstrip() + "\nPlease use the `torch.linalg.matrix_rank` function instead. The parameter 'symmetric' "
        "was renamed in `torch.linalg.matrix_rank()` to 'hermitian'.")
