"""The polar decomposition (linalg.polar) over the SVD, with its own gradient (Note [Polar decomposition])."""

from __future__ import annotations

from ..autograd.function import Function
from ..return_types import structseq
from ..tensor import Tensor
from ._common import COMPLEX_DEVICES, arg_tensor, check_matrix, type_name
from .svd import _needs_grad, svd_kernel

__all__ = ["polar"]

linalg_polar = structseq("linalg_polar", ("U", "H"))


# Note [Polar decomposition]
# A = U H (A (*, m, n), m >= n): from the thin SVD A = W S V^H, U = W V^H (orthonormal columns) and H = V S V^H
# (Hermitian positive-semidefinite), as torch's CPU path. The gradient is not svd's composed (it divides by
# s_i^2 - s_j^2 and fails at repeated singular values, an orthogonal A among them) but that of H = sqrt(A^H A) and
# U = A H^-1, defined wherever A has full column rank: with gH' = gH - U^H gU H^-1, the Sylvester equation of the
# square root gives gM = V ((V^H gH' V) / (s_i + s_j)) V^H, and gA = gU H^-1 + A (gM + gM^H). (Real: every ^H a ^T;
# complex on the CPU, Note [Complex linear algebra on the CPU].)
class _Polar(Function):
    @staticmethod
    def forward(ctx, A):
        W, S, Vh = svd_kernel(A, False)
        U = W @ Vh
        H = (Vh.mH * S.unsqueeze(-2)) @ Vh
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(A, U, S, Vh)
        return U, H

    @staticmethod
    def backward(ctx, gU, gH):
        A, U, S, Vh = ctx.saved_tensors
        V = Vh.mH
        h_inv = (V / S.unsqueeze(-2)) @ Vh
        gA = gU @ h_inv if gU is not None else None
        g = gH if gU is None else (-(U.mH @ gU @ h_inv) if gH is None else gH - U.mH @ gU @ h_inv)
        if g is None:
            return gA
        gM = V @ ((Vh @ g @ V) / (S.unsqueeze(-1) + S.unsqueeze(-2))) @ Vh
        gA_h = A @ (gM + gM.mH)
        return gA_h if gA is None else gA + gA_h


def polar(A: Tensor):
    """``linalg_polar(U, H)`` with ``A = U H``: U (*, m, n) with orthonormal columns, H (*, n, n) symmetric
    positive-semidefinite, for ``m >= n`` (Note [Polar decomposition])."""
    arg_tensor("linalg_polar", "A", 1, A)
    if A.dim() < 2:
        raise RuntimeError("linalg.polar: The input tensor A must have at least 2 dimensions.")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"linalg.polar: Expected a floating point or complex tensor as input. Got "
                           f"{type_name(A.dtype)}")
    if A.shape[-2] < A.shape[-1]:
        raise RuntimeError(f"linalg.polar: input must have at least as many rows as columns, but got "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    check_matrix("linalg.polar", A, "linalg_svd", complex_devices=COMPLEX_DEVICES)
    if _needs_grad(A):
        return linalg_polar(_Polar.apply(A))
    W, S, Vh = svd_kernel(A, False)
    return linalg_polar((W @ Vh, (Vh.mH * S.unsqueeze(-2)) @ Vh))
