"""LU with partial pivoting and what builds on it: lu_factor(_ex), lu, lu_solve, solve(_ex), inv(_ex), det,
slogdet and matrix_power, with torch's signatures, results, errors and gradients. The factorization is
Note [Recursive LU] (``ops/composite/linalg_solvers.py``), the gradients Note [Solver gradients] (``_solve_grad.py``).

Note [LU without pivoting]
torch's CPU backend (LAPACK) has no LU without pivoting and raises; CUDA (MAGMA / cuSOLVER) has one.
Here ``pivot=False`` raises torch's message on the CPU and runs the same column loop without the
pivot search elsewhere (pivots 1..k, P empty in ``lu``). It is stable only for matrices that need
no pivoting (diagonally dominant, positive-definite).

Note [solve's vector case]
As torch (``linalg_solve_is_vector_rhs``): B is a batch of vectors when it is 1-D, or when its shape
is A's shape without the last dim; otherwise it is a batch of matrices. Vectors are solved as
one-column matrices and squeezed back; for ``left=False`` they are refused, as torch does.
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..ops import bound as ops
from ..ops.composite.linalg_solvers import lu_solve_perm, perm_from_pivots
from ..return_types import structseq
from ..tensor import Tensor
from . import _solve_grad as G
from ._common import (
    COMPLEX_DEVICES,
    LinAlgError,
    arg_bool,
    arg_tensor,
    batch_of,
    check_errors,
    floating,
    kernel_dtype,
    solver_shapes,
    square,
)

__all__ = ["lu_factor", "lu_factor_ex", "lu", "lu_solve", "solve", "solve_ex", "inv", "inv_ex", "det", "slogdet",
           "matrix_power", "LinAlgError"]

linalg_lu_factor = structseq("linalg_lu_factor", ("LU", "pivots"))
linalg_lu_factor_ex = structseq("linalg_lu_factor_ex", ("LU", "pivots", "info"))
linalg_lu = structseq("linalg_lu", ("P", "L", "U"))
linalg_solve_ex = structseq("linalg_solve_ex", ("result", "info"))
linalg_inv_ex = structseq("linalg_inv_ex", ("inverse", "info"))
linalg_slogdet = structseq("linalg_slogdet", ("sign", "logabsdet"))


def _raise(info: Tensor, api: str, A: Tensor) -> None:
    check_errors(info, api, A.dim() == 2)


# -- LU ---------------------------------------------------------------------------------------------
def _lu_checks(fn: str, op: str, A, pivot) -> None:
    arg_tensor(fn, "A", 1, A)
    arg_bool(fn, "pivot", pivot)
    if A.dim() < 2:
        raise RuntimeError(f"{op}: Expected tensor with 2 or more dimensions. Got size: {list(A.shape)} instead")
    kernel_dtype("lu", A)
    if not pivot and A.device.type == "cpu":  # Note [LU without pivoting]
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False):
    """``(LU, pivots, info)``: the packed LU factorization of A (*, m, n) with partial pivoting (LAPACK's
    getrf: ``pivots`` int32, 1-based row swaps; ``info`` int32, the first zero of U's diagonal, 1-based,
    or 0). No host sync unless ``check_errors``."""
    _lu_checks("linalg_lu_factor_ex", "torch.lu_factor", A, pivot)
    arg_bool("linalg_lu_factor_ex", "check_errors", check_errors)
    LU, pivots, _, info = G.lu_factor_fn(A, pivot)
    if check_errors:
        _raise(info, "torch.linalg.lu_factor_ex", A)
    return linalg_lu_factor_ex((LU, pivots, info))


def lu_factor(A: Tensor, *, pivot: bool = True):
    """``(LU, pivots)`` as ``lu_factor_ex``; raises if U has a zero on its diagonal (a host sync, as torch)."""
    _lu_checks("linalg_lu_factor", "torch.lu_factor", A, pivot)
    LU, pivots, _, info = G.lu_factor_fn(A, pivot)
    _raise(info, "torch.linalg.lu_factor", A)
    return linalg_lu_factor((LU, pivots))


def lu(A: Tensor, *, pivot: bool = True):
    """``(P, L, U)`` with ``A = P L U``: P a permutation matrix (empty without pivoting), L (*, m, k) unit lower
    triangular, U (*, k, n) upper triangular, k = min(m, n). Singular A is fine (no error)."""
    _lu_checks("linalg_lu", "linalg.lu", A, pivot)
    LU, _, perm, _ = G.lu_factor_fn(A, pivot)
    L, U = G.unpack(LU)
    m = A.shape[-2]
    if pivot:
        rows = ops.arange(0, m, dtype=_dt.int64, device=A.device).unsqueeze(-1)
        P = (rows == perm.unsqueeze(-2)).to(A.dtype)  # P[perm[i], i] = 1
    else:
        P = ops.empty((0,), dtype=A.dtype, device=A.device)
    return linalg_lu((P, L, U))


def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True, adjoint: bool = False) -> Tensor:
    """The solution X of ``A X = B`` from ``lu_factor(A)``; ``A^H X = B`` with ``adjoint``, ``X A = B`` (or
    ``X A^H = B``) when not ``left``. Differentiable in LU and B."""
    fn = "linalg_lu_solve"
    arg_tensor(fn, "LU", 1, LU)
    arg_tensor(fn, "pivots", 2, pivots)
    arg_tensor(fn, "B", 3, B)
    arg_bool(fn, "left", left)
    arg_bool(fn, "adjoint", adjoint)
    if LU.dim() >= 2:
        floating("torch.linalg.lu_solve", LU, COMPLEX_DEVICES)
    if LU.dtype != B.dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type "
                           f"{_name(LU)} and B of type {_name(B)} instead")
    if pivots.dtype is not _dt.int32:
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32")
    square("torch.linalg.lu_solve", LU)
    solver_shapes("linalg.lu_solve", LU, B, left)
    if pivots.dim() == 0 or LU.shape[-1] != pivots.shape[-1]:
        raise RuntimeError("linalg.lu_solve: Number of pivots per batch should be same as the dimension of the matrix")
    if tuple(LU.shape[:-1]) != tuple(pivots.shape):
        raise RuntimeError(f"linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be the same, but got pivots "
                           f"with shape {list(pivots.shape)} instead")
    batch_of(B, LU)
    kernel_dtype("lu_solve", LU)
    perm = perm_from_pivots(pivots, LU.shape[-1])
    return lu_solve_perm(LU, perm, B, left, adjoint, _tri)


def _tri(A, B, upper, unit):
    return G.solve_triangular_fn(A, B, upper, True, unit)


def _name(t: Tensor) -> str:
    from ..backends.meta.reductions import type_name

    return type_name(t.dtype)


# -- solve ------------------------------------------------------------------------------------------
def _solve(fn: str, A, B, left: bool):
    arg_tensor(fn, "A", 1, A)
    arg_tensor(fn, "B", 2, B)
    arg_bool(fn, "left", left)
    if A.dim() >= 2:
        floating("linalg.solve", A, COMPLEX_DEVICES)
    if A.dtype != B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type {_name(A)} and "
                           f"B of type {_name(B)} instead")
    vector = B.dim() == 1 or (A.dim() - 1 == B.dim() and tuple(B.shape) == tuple(A.shape[:-1]))
    B_ = B.unsqueeze(-1) if vector else B
    solver_shapes("linalg.solve", A, B_, left)
    batch_of(B_, A)
    if not left and vector:
        raise RuntimeError("linalg.solve: Vector broadcasting of the left hand side is not supported for left=False. "
                           "In this case linalg.solve is equivalent to B / A.squeeze(-1)")
    kernel_dtype("linalg_solve", A)
    X, info = G.solve_fn(A, B_, left)
    return (X.squeeze(-1) if vector else X), info


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False):
    """``(result, info)``: X with ``A X = B`` (``X A = B`` when not ``left``) and the LU ``info`` of A (0, or
    the first zero pivot, 1-based). B is a batch of vectors or of matrices (Note [solve's vector case])."""
    X, info = _solve("linalg_solve_ex", A, B, left)
    arg_bool("linalg_solve_ex", "check_errors", check_errors)
    if check_errors:
        _raise(info, "torch.linalg.solve_ex", A)
    return linalg_solve_ex((X, info))


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """X with ``A X = B`` (``X A = B`` when not ``left``); raises ``LinAlgError`` for singular A (a host
    sync, as torch)."""
    X, info = _solve("linalg_solve", A, B, left)
    _raise(info, "torch.linalg.solve", A)
    return X


# -- inv, det, slogdet, matrix_power ---------------------------------------------------------------
def _square_float(fn: str, op: str, A, kernel: str, low_precision_check: bool = False) -> None:
    arg_tensor(fn, "A", 1, A)
    square(op, A)
    floating(op, A, COMPLEX_DEVICES)
    if low_precision_check:  # torch's linalg_inv / slogdet refuse half types before dispatching
        low_precision(op, A)
    kernel_dtype(kernel, A)


def low_precision(op: str, A) -> None:
    """torch's ``checkNotLowPrecision`` words for float16 / bfloat16."""
    if A.dtype.is_floating_point and A.dtype.itemsize == 2:
        raise RuntimeError(f"{op}: Low precision dtypes not supported. Got {_name(A)}")


def inv_ex(A: Tensor, *, check_errors: bool = False):
    """``(inverse, info)``: A^-1 and the LU ``info`` of A (0, or the first zero pivot, 1-based)."""
    _square_float("linalg_inv_ex", "linalg.inv", A, "linalg_inv", True)
    arg_bool("linalg_inv_ex", "check_errors", check_errors)
    X, info = G.inv_fn(A)
    if check_errors:
        _raise(info, "linalg.inv_ex", A)
    return linalg_inv_ex((X, info))


def inv(A: Tensor) -> Tensor:
    """A^-1; raises ``LinAlgError`` for singular A (a host sync, as torch)."""
    _square_float("linalg_inv", "linalg.inv", A, "linalg_inv", True)
    X, info = G.inv_fn(A)
    _raise(info, "linalg.inv", A)
    return X


def det(A: Tensor) -> Tensor:
    """The determinant of each square matrix: the product of U's diagonal times the sign of the row
    permutation (0, possibly -0, for singular A)."""
    _square_float("linalg_det", "linalg.det", A, "lu")
    return G.det_fn(A)


def slogdet(A: Tensor):
    """``(sign, logabsdet)`` with ``det = sign * exp(logabsdet)``; (0, -inf) for singular A."""
    _square_float("linalg_slogdet", "linalg.slogdet", A, "lu", True)
    return linalg_slogdet(G.slogdet_fn(A))


def matrix_power(A: Tensor, n: int) -> Tensor:
    """A^n for an integer n: repeated squaring; A^0 is the identity, a negative n inverts A first."""
    arg_tensor("linalg_matrix_power", "input", 1, A)
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"linalg_matrix_power(): argument 'n' (position 2) must be int, not {type(n).__name__}")
    square("linalg.matrix_power", A)
    if n == 0:
        eye = ops.eye(A.shape[-1], A.shape[-1], dtype=A.dtype, device=A.device)
        return A.clone().copy_(eye.expand(A.shape))  # as torch: differentiable, with a zero gradient
    if n < 0:
        A, n = inv(A), -n
    if n == 1:
        return A.clone()
    if n == 2:
        return A @ A
    if n == 3:
        return (A @ A) @ A
    z = result = None
    while n > 0:  # binary decomposition, least significant bit first (as torch)
        bit, n = n % 2, n // 2
        z = A if z is None else z @ z
        if bit:
            result = z if result is None else result @ z
    return result
