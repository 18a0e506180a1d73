"""Symmetric eigendecomposition (eigh, eigvalsh) through the op ``_linalg_symmetric_jacobi`` (LAPACK's syevd on the
CPU, parallel cyclic Jacobi elsewhere: fused on CUDA, composed of ops on Meta), with torch's gradient.

Note [eigh on the device]
The triangle named by UPLO is mirrored into a symmetric matrix (the other triangle is never read, as LAPACK's
syevd), diagonalized by ``_linalg_symmetric_jacobi`` (off the CPU the round-robin Jacobi of
ops/composite/linalg_jacobi.py, Notes [Parallel Jacobi ordering], [Jacobi convergence check]), and the
eigenvalues are sorted ascending with the eigenvectors gathered to match. The matrix is divided by its largest
|entry| first (the eigenvalues are scaled back), so that no square of an entry over- or underflows, as LAPACK
scales. Eigenvector signs are LAPACK's on the CPU and whatever the rotations produce elsewhere (both are
valid). A matrix with a NaN or inf in the triangle read gives all-NaN eigenvalues and eigenvectors, as torch's
CPU eigh does (no error): the Jacobi loop stops at once, since NaN fails the convergence comparison, and a
``where`` masks those matrices.

Note [eigh gradient]
torch's ``linalg_eig_backward`` for the Hermitian case (FunctionsManual.cpp): with E_ij = w_j - w_i (1 on
the diagonal), gA = V ((skew(V^T gV) / 2) / E + diag(gw)) V^T, and gA = V diag(gw) V^T when only the
eigenvalues are used (eigvalsh). Like torch the result is the full symmetric matrix (not projected onto the
triangle that was read), and repeated eigenvalues with a loss that depends on the eigenvectors give
inf / NaN. The formula is built from ops, so it is differentiable again.
"""

from __future__ import annotations

import math

from .. import dtypes as _dt
from ..autograd.function import Function
from ..backends.meta.reductions import type_name
from ..dispatch.dispatcher import grad_mode
from ..ops import bound as ops
from ..return_types import structseq
from ..tensor import Tensor
from ._common import COMPLEX_DEVICES, all_finite, arg_tensor, check_matrix, diag_embed, max_abs

__all__ = ["eigh", "eigvalsh", "matrix_sqrth"]

linalg_eigh = structseq("linalg_eigh", ("eigenvalues", "eigenvectors"))


def _uplo(UPLO) -> bool:
    """True for 'U'; torch accepts either case."""
    if not isinstance(UPLO, str) or len(UPLO) != 1 or UPLO.upper() not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO.upper() == "U"


# -- the kernel ---------------------------------------------------------------------------------------
def symmetrize(A: Tensor, upper: bool) -> Tensor:
    """The symmetric (complex: Hermitian) matrix whose lower (upper) triangle is A's; a complex diagonal is read by
    its real part, as LAPACK's zheevd."""
    if A.dtype.is_complex:
        part = ops.triu(A, 1) if upper else ops.tril(A, -1)
        return part + part.mH + diag_embed(ops.real(ops.diagonal(A, 0, -2, -1))).to(A.dtype)
    return ops.triu(A) + ops.triu(A, 1).mT if upper else ops.tril(A) + ops.tril(A, -1).mT


def eigh_kernel(A: Tensor, upper: bool = False):
    """``(w, V)``, w ascending, for the symmetric matrix read from one triangle of ``A`` (Note [eigh on the
    device]); runs no autograd."""
    n = A.shape[-1]
    batch = tuple(A.shape[:-2])
    S = symmetrize(A, upper)
    if n <= 1 or A.numel() == 0:
        w = S.diagonal(0, -2, -1)
        w = ops.real(w).clone() if w.dtype.is_complex else w.clone()
        return w, ops.ones((*batch, n, n), dtype=A.dtype, device=A.device) if n else S.clone()
    scale = max_abs(S)
    w, V = ops._linalg_symmetric_jacobi(S / scale)
    w = w * scale[..., 0]
    w, order = ops.sort(w, -1)
    V = V.gather(-1, order.unsqueeze(-2).expand(V.shape))
    finite = all_finite(S)
    return ops.where(finite.unsqueeze(-1), w, math.nan), ops.where(finite.unsqueeze(-1).unsqueeze(-1), V, math.nan)


def eigh_backward(gw, gV, w: Tensor, V: Tensor):
    """torch's Hermitian ``linalg_eig_backward`` (Note [eigh gradient]); gw / gV may be None."""
    if gw is None and gV is None:
        return None
    if gV is None:
        return (V * gw.unsqueeze(-2)) @ V.mH
    VhgV = V.mH @ gV
    if VhgV.dtype.is_complex:  # torch's check: a loss that sees the eigenvectors' phases is ill-defined
        phases = ops.imag(ops.diagonal(VhgV, 0, -2, -1))
        if not bool(ops.all(ops.abs(phases) <= 1e-2).item()):
            raise RuntimeError("linalg_eigh_backward: The eigenvectors in the complex case are specified up to "
                               "multiplication by e^{i phi}. The specified loss function depends on this quantity, so "
                               "it is ill-defined.")
    VhgV = 0.5 * (VhgV - VhgV.mH)
    E = w.unsqueeze(-2) - w.unsqueeze(-1) + ops.eye(w.shape[-1], w.shape[-1], dtype=w.dtype, device=w.device)
    inner = VhgV / E
    if gw is not None:  # torch's: the diagonal becomes gw (a real skew-symmetric part has none to replace)
        if inner.dtype.is_complex:
            inner = inner - diag_embed(ops.diagonal(inner, 0, -2, -1))
        inner = inner + diag_embed(gw)
    return V @ (inner @ V.mH)


class _Eigh(Function):
    @staticmethod
    def forward(ctx, A, upper):
        w, V = eigh_kernel(A, upper)
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(w, V)
        return w, V

    @staticmethod
    def backward(ctx, gw, gV):
        w, V = ctx.saved_tensors
        return eigh_backward(gw, gV, w, V), None


def _needs_grad(A: Tensor) -> bool:
    return grad_mode.enabled and A._requires_grad


# -- public functions ---------------------------------------------------------------------------------
def eigh(A: Tensor, UPLO: str = "L"):
    """The eigenvalues (ascending) and orthonormal eigenvectors of the symmetric matrices in ``A`` (the
    lower triangle is read, or the upper with ``UPLO='U'``), as ``linalg_eigh(eigenvalues, eigenvectors)``
    with ``A = V diag(w) V^T``."""
    arg_tensor("linalg_eigh", "input", 1, A)
    check_matrix("linalg.eigh", A, "linalg_eigh", square=True, integer_error=False, complex_devices=COMPLEX_DEVICES)
    upper = _uplo(UPLO)
    w, V = _Eigh.apply(A, upper) if _needs_grad(A) else eigh_kernel(A, upper)
    return linalg_eigh((w, V))


def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """The eigenvalues (ascending) of the symmetric matrices in ``A`` (one triangle read, as ``eigh``)."""
    arg_tensor("linalg_eigvalsh", "input", 1, A)
    check_matrix("linalg.eigh", A, "linalg_eigh", square=True, integer_error=False, complex_devices=COMPLEX_DEVICES)
    upper = _uplo(UPLO)
    if _needs_grad(A):
        return _Eigh.apply(A, upper)[0]
    return eigh_kernel(A, upper)[0]


# Note [matrix_sqrth]
# The principal square root X = V sqrt(w) V^T of a symmetric positive-(semi)definite A from eigh (the lower
# triangle read; negative eigenvalues, which rounding gives a semidefinite A, clamped at 0 as torch's). Its gradient
# is not eigh's composed with the square root, which divides by w_i - w_j and fails at repeated eigenvalues (the
# identity, any scaled orthogonal projector): X X = A gives X dX + dX X = dA, a Sylvester equation that is diagonal
# in the eigenbasis, so gA = V ((V^T gX V) / (s_i + s_j)) V^T, defined wherever A is definite, then symmetrized as
# torch's. Half types get torch's "Low precision dtypes not supported".
class _MatrixSqrth(Function):
    @staticmethod
    def forward(ctx, A):
        w, V = eigh_kernel(A, False)
        s = w.clamp(min=0).sqrt()
        ctx.save_for_backward(s, V)
        return (V * s.unsqueeze(-2)) @ V.mH

    @staticmethod
    def backward(ctx, gX):
        s, V = ctx.saved_tensors
        gA = V @ ((V.mH @ gX @ V) / (s.unsqueeze(-1) + s.unsqueeze(-2))) @ V.mH
        return (gA + gA.mH) * 0.5  # Hermitian, as torch's (and eigh's) gradient of a Hermitian input


def matrix_sqrth(A: Tensor) -> Tensor:
    """The principal square root of the symmetric positive-definite matrices in ``A`` (the lower triangle is
    read): the symmetric positive-definite X with ``X X = A`` (Note [matrix_sqrth])."""
    arg_tensor("linalg_matrix_sqrth", "A", 1, A)
    if A.dim() >= 2 and A.shape[-1] == A.shape[-2] and A.dtype in (_dt.float16, _dt.bfloat16):
        raise RuntimeError(f"linalg.matrix_sqrth: Low precision dtypes not supported. Got {type_name(A.dtype)}")
    check_matrix("linalg.matrix_sqrth", A, "linalg_eigh", square=True, complex_devices=COMPLEX_DEVICES)
    if _needs_grad(A):
        return _MatrixSqrth.apply(A)
    w, V = eigh_kernel(A, False)
    return (V * w.clamp(min=0).sqrt().unsqueeze(-2).to(V.dtype)) @ V.mH
