"""LDL with Bunch-Kaufman pivoting: ``ldl_factor(_ex)`` and ``ldl_solve``, with torch's signatures, results and
errors (Note [Bunch-Kaufman LDL] in backends/cpu/linalg_ldl.py), real and complex (symmetric, or Hermitian with
``hermitian=True``). As torch's, they have no derivative: an output that needs one raises when the backward reaches
it."""

from __future__ import annotations

from ..ops import bound as ops
from ..return_types import structseq
from ..tensor import Tensor
from ._common import arg_bool, arg_tensor, check_errors

__all__ = ["ldl_factor", "ldl_factor_ex", "ldl_solve"]

linalg_ldl_factor = structseq("linalg_ldl_factor", ("LD", "pivots"))
linalg_ldl_factor_ex = structseq("linalg_ldl_factor_ex", ("LD", "pivots", "info"))


def _raise(info: Tensor, api: str, A: Tensor) -> None:
    check_errors(info, api, A.dim() == 2)


def ldl_factor_ex(A: Tensor, *, hermitian: bool = False, check_errors: bool = False):
    """``(LD, pivots, info)``: the compact LDL factorization of the symmetric (``hermitian``: Hermitian) (*, n, n)
    A, read from its lower triangle (LAPACK's sytrf / hetrf: ``pivots`` int32, 1-based, negative for 2x2 blocks;
    ``info`` int32, the 1-based index of the first zero block of D, or 0). No host sync unless ``check_errors``."""
    arg_tensor("linalg_ldl_factor_ex", "A", 1, A)
    arg_bool("linalg_ldl_factor_ex", "hermitian", hermitian)
    arg_bool("linalg_ldl_factor_ex", "check_errors", check_errors)
    LD, pivots, info = ops.linalg_ldl_factor_ex(A, hermitian=hermitian, check_errors=check_errors)
    if check_errors:
        _raise(info, "torch.linalg.ldl_factor_ex", A)
    return linalg_ldl_factor_ex((LD, pivots, info))


def ldl_factor(A: Tensor, *, hermitian: bool = False):
    """``(LD, pivots)`` as ``ldl_factor_ex``; raises if D has a zero block (a host sync)."""
    arg_tensor("linalg_ldl_factor", "A", 1, A)
    arg_bool("linalg_ldl_factor", "hermitian", hermitian)
    LD, pivots, info = ops.linalg_ldl_factor_ex(A, hermitian=hermitian, check_errors=False)
    _raise(info, "torch.linalg.ldl_factor", A)
    return linalg_ldl_factor((LD, pivots))


def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False) -> Tensor:
    """The solution X of ``A X = B`` from ``ldl_factor(A)``'s LD and pivots; batch dimensions broadcast."""
    arg_tensor("linalg_ldl_solve", "LD", 1, LD)
    arg_tensor("linalg_ldl_solve", "pivots", 2, pivots)
    arg_tensor("linalg_ldl_solve", "B", 3, B)
    arg_bool("linalg_ldl_solve", "hermitian", hermitian)
    return ops.linalg_ldl_solve(LD, pivots, B, hermitian=hermitian)
