"""Triangular solves and the Cholesky factorization (solve_triangular, cholesky, cholesky_ex), with torch's
signatures, results, errors and gradients. The algorithms are in ``ops/composite/linalg_solvers.py`` (Note [Blocked
triangular solve], Note [Recursive Cholesky]), the gradients in ``_solve_grad.py`` (Note [Solver
gradients]) and the host read of ``info`` in ``_common.py`` (Note [Host reads of info])."""

from __future__ import annotations

from ..return_types import structseq
from ..tensor import Tensor
from ._common import (
    COMPLEX_DEVICES,
    arg_bool,
    arg_tensor,
    batch_of,
    check_errors,
    floating,
    kernel_dtype,
    solver_shapes,
    square,
)
from ._solve_grad import cholesky_fn, solve_triangular_fn

__all__ = ["solve_triangular", "cholesky", "cholesky_ex"]

linalg_cholesky_ex = structseq("linalg_cholesky_ex", ("L", "info"))


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True, unitriangular: bool = False) -> Tensor:
    """The solution X of ``A X = B`` (``X A = B`` when not ``left``) for triangular A: only A's upper
    (``upper``) or lower triangle is read, and not its diagonal when ``unitriangular`` (taken as ones).
    Batch dims broadcast; the result has A's dtype."""
    fn = "linalg_solve_triangular"
    arg_tensor(fn, "input", 1, A)
    arg_tensor(fn, "B", 2, B)
    for name, value in (("upper", upper), ("left", left), ("unitriangular", unitriangular)):
        arg_bool(fn, name, value)
    solver_shapes("linalg.solve_triangular", A, B, left)
    batch_of(B, A)  # torch's broadcast error (B first, as _linalg_broadcast_batch_dims)
    kernel_dtype("triangular_solve", A)
    if B.dtype != A.dtype:
        B = B.to(A.dtype)
    return solve_triangular_fn(A, B, upper, left, unitriangular)


def _cholesky_checks(fn: str, A, upper) -> None:
    arg_tensor(fn, "input", 1, A)
    arg_bool(fn, "upper", upper)
    square("linalg.cholesky", A)
    floating("linalg.cholesky", A, COMPLEX_DEVICES)
    kernel_dtype("cholesky", A)


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False):
    """``(L, info)``: the Cholesky factor of the Hermitian positive-definite A (``A = L L^T``; ``U`` with
    ``A = U^T U`` when ``upper``, read from A's upper triangle), and ``info`` (int32, per matrix): 0, or
    the order of the first leading minor that is not positive-definite. No host sync unless
    ``check_errors``."""
    _cholesky_checks("linalg_cholesky_ex", A, upper)
    arg_bool("linalg_cholesky_ex", "check_errors", check_errors)
    L, info = cholesky_fn(A, upper)
    if check_errors:
        _raise(info, "linalg.cholesky_ex", A)
    return linalg_cholesky_ex((L, info))


def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """The Cholesky factor L (``A = L L^T``; U with ``A = U^T U`` when ``upper``); raises
    ``LinAlgError`` if A is not positive-definite (a host sync, as torch)."""
    _cholesky_checks("linalg_cholesky", A, upper)
    L, info = cholesky_fn(A, upper)
    _raise(info, "linalg.cholesky", A)
    return L


def _raise(info: Tensor, api: str, A: Tensor) -> None:
    check_errors(info, api, A.dim() == 2)
