"""The differentiable factorizations and solves of strided.linalg: one ``autograd.Function`` each, whose
forward is a kernel op of ``ops/composite/linalg_solvers.py`` and whose backward is torch's formula
(torch/csrc/autograd/FunctionsManual.cpp), written with ops so it runs on every backend.

Note [Solver gradients]
* solve_triangular (``linalg_solve_triangular_backward``): G_B = A^-H G_X solved with A^H; G_A = -G_B X^H
  (left) or -X^H G_B, projected on A's triangle (strictly, when unitriangular).
* cholesky (``cholesky_backward``, Murray 2016): G_A = L^-H Phi(L^H G_L) L^-1 with Phi taking the lower
  triangle and halving the diagonal, symmetrized -- two triangular solves.
* lu_factor (``lu_factor_ex_backward`` -> ``linalg_lu_backward``): the square, wide and tall cases of
  torch, with P applied as a row gather.
* solve (``linalg_solve_backward``): G_B = A^-H G_X from the saved LU (adjoint lu_solve), G_A = -G_B X^H
  (left) or -X^H G_B.
* inv: G_A = -A^-H G A^-H.
* det (``linalg_det_backward``): G_A = g det A^-H, solved with the saved LU. Where a pivot is exactly
  zero (A exactly singular) torch's first-order formula moves that pivot to eps before solving but keeps
  det = 0, so its G_A is 0 there -- not the derivative, which is the cofactor matrix (nonzero at rank
  n - 1). Here det is recomputed from the same nudged pivots, so det A^-H is the nudged matrix's
  cofactor matrix: the true derivative to O(eps) (and ~0 at rank < n - 1, as it should be). Whether a
  pivot comes out exactly zero depends on rounding (LAPACK on the CPU and strided on CUDA differ for
  the same singular matrix), so this keeps the gradient right either way. Double backward is not
  supported.
* slogdet (``slogdet_backward``): G_A = g_logabsdet A^-H; the sign has no gradient for real inputs (complex:
  g = g_logabsdet - i Im(conj(g_sign) sign)), and a singular A (not differentiable) gives inf / nan.
* Complex matrices (the CPU, Note [Complex linear algebra on the CPU]): every transpose above is the conjugate
  transpose (``mH``, the same view as ``mT`` for real ones), and det's G_A = g conj(det) A^-H.
Backward calls the differentiable functions, so gradients are themselves built from recorded ops.
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..autograd.function import Function
from ..ops import bound as ops
from ..ops.composite import linalg_solvers as K
from ..tensor import Tensor
from ._common import eps

__all__ = ["solve_triangular_fn", "cholesky_fn", "lu_factor_fn", "solve_fn", "inv_fn", "det_fn", "slogdet_fn"]


def _eye_like(A: Tensor, n: int) -> Tensor:
    return ops.eye(n, n, dtype=A.dtype, device=A.device)


def _diag_matrix(values: Tensor, n: int) -> Tensor:
    """``values (*,)`` times the n x n identity: (*, n, n)."""
    return values.unsqueeze(-1).unsqueeze(-1) * _eye_like(values, n)


class _SolveTriangular(Function):
    @staticmethod
    def forward(ctx, A, B, upper, left, unitriangular):
        X = K.tri_solve_any(A, B, upper, left, unitriangular)
        ctx.flags = (upper, left, unitriangular)
        ctx.save_for_backward(A, X)
        return X

    @staticmethod
    def backward(ctx, gX):
        A, X = ctx.saved_tensors
        upper, left, unit = ctx.flags
        gB = solve_triangular_fn(A.mH, gX, not upper, left, unit)
        gA = None
        if ctx.needs_input_grad[0]:
            gA = ops.neg(gB @ X.mH) if left else ops.neg(X.mH @ gB)
            gA = ops.triu(gA, int(unit)) if upper else ops.tril(gA, -int(unit))
        return gA, (gB if ctx.needs_input_grad[1] else None), None, None, None


def solve_triangular_fn(A: Tensor, B: Tensor, upper: bool, left: bool, unitriangular: bool) -> Tensor:
    """The differentiable triangular solve (no argument checks)."""
    return _SolveTriangular.apply(A, B, upper, left, unitriangular)


def _tri(A, B, upper, unit):
    return _SolveTriangular.apply(A, B, upper, True, unit)


class _Cholesky(Function):
    @staticmethod
    def forward(ctx, A, upper):
        L, info = ops._linalg_cholesky_lower(A.mH if upper else A)
        out = L.mH.contiguous() if upper else L
        ctx.upper = upper
        ctx.save_for_backward(out)
        ctx.mark_non_differentiable(info)
        return out, info

    @staticmethod
    def backward(ctx, gL, _ginfo):
        (L,) = ctx.saved_tensors
        if ctx.upper:
            L, gL = L.mH, gL.mH
        gA = ops.tril(L.mH @ gL)
        gA = 0.5 * (gA + ops.tril(gA, -1).mH)
        gA = solve_triangular_fn(L.mH, gA, True, True, False)
        return solve_triangular_fn(L, gA, False, False, False), None


def cholesky_fn(A: Tensor, upper: bool) -> tuple:
    return _Cholesky.apply(A, upper)


def _apply_P(G: Tensor, perm: Tensor) -> Tensor:
    """``P G`` for ``A = P L U``, ``A[perm] = L U``: row ``perm[i]`` of the result is row i of G."""
    return K.gather_rows(G, K.inverse_perm(perm))


def lu_backward(gL: Tensor, gU: Tensor, perm: Tensor | None, L: Tensor, U: Tensor) -> Tensor:
    """torch's ``linalg_lu_backward`` (square, wide m < n and tall m > n); ``perm`` None without pivoting."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if m == n:
        gA = ops.tril(L.mH @ gL, -1) + ops.triu(gU @ U.mH)
        gA = solve_triangular_fn(U.mH, gA, False, False, False)
        gA = solve_triangular_fn(L.mH, gA, True, True, True)
    elif m < n:
        U1 = U[..., :, :k]
        gA = L.mH @ gL - ops.triu(gU) @ U.mH
        gA = solve_triangular_fn(U1.mH, ops.tril(gA, -1), False, False, False)
        gA = ops.cat([gA + ops.triu(gU[..., :, :k]), gU[..., :, k:]], -1)
        gA = solve_triangular_fn(L.mH, gA, True, True, True)
    else:
        L1 = L[..., :k, :]
        gA = gU @ U.mH - L.mH @ ops.tril(gL, -1)
        gA = solve_triangular_fn(L1.mH, ops.triu(gA), True, True, True)
        gA = ops.cat([gA + ops.tril(gL[..., :k, :], -1), gL[..., k:, :]], -2)
        gA = solve_triangular_fn(U.mH, gA, False, False, False)
    return gA if perm is None else _apply_P(gA, perm)


def unpack(LU: Tensor) -> tuple:
    """(L, U) of a packed LU: L (*, m, k) unit lower, U (*, k, n) upper."""
    m, n = LU.shape[-2], LU.shape[-1]
    k = min(m, n)
    L = ops.tril(LU[..., :, :k], -1) + ops.eye(m, k, dtype=LU.dtype, device=LU.device)
    return L, ops.triu(LU[..., :k, :])


class _LUFactor(Function):
    @staticmethod
    def forward(ctx, A, pivot):
        LU, pivots, perm, info = ops._linalg_lu_factor(A, pivot)
        ctx.pivot = pivot
        ctx.perm = perm
        ctx.save_for_backward(LU)
        ctx.mark_non_differentiable(pivots, perm, info)
        return LU, pivots, perm, info

    @staticmethod
    def backward(ctx, gLU, *_):
        (LU,) = ctx.saved_tensors
        k = min(LU.shape[-2], LU.shape[-1])
        L, U = unpack(LU)
        return lu_backward(gLU[..., :, :k], gLU[..., :k, :], ctx.perm if ctx.pivot else None, L, U), None


def lu_factor_fn(A: Tensor, pivot: bool) -> tuple:
    """``(LU, pivots, perm, info)``; LU differentiable."""
    return _LUFactor.apply(A, pivot)


class _Solve(Function):
    @staticmethod
    def forward(ctx, A, B, left):
        LU, _, perm, info = ops._linalg_lu_factor(A, True)
        X = K.lu_solve_perm(LU, perm, B, left, False)
        ctx.LU, ctx.perm, ctx.left = LU, perm, left
        ctx.save_for_backward(X)
        ctx.mark_non_differentiable(info)
        return X, info

    @staticmethod
    def backward(ctx, gX, _ginfo):
        (X,) = ctx.saved_tensors
        gB = K.lu_solve_perm(ctx.LU, ctx.perm, gX, ctx.left, True, _tri)
        gA = None
        if ctx.needs_input_grad[0]:
            gA = ops.neg(gB @ X.mH) if ctx.left else ops.neg(X.mH @ gB)
        return gA, (gB if ctx.needs_input_grad[1] else None), None


def solve_fn(A: Tensor, B: Tensor, left: bool) -> tuple:
    """``(X, info)`` of ``A X = B`` (left) or ``X A = B``, B a batch of matrices."""
    return _Solve.apply(A, B, left)


class _Inv(Function):
    @staticmethod
    def forward(ctx, A):
        LU, _, perm, info = ops._linalg_lu_factor(A, True)
        n = A.shape[-1]
        X = K.lu_solve_perm(LU, perm, _eye_like(A, n).expand(A.shape), True, False)
        ctx.save_for_backward(X)
        ctx.mark_non_differentiable(info)
        return X, info

    @staticmethod
    def backward(ctx, g, _ginfo):
        (X,) = ctx.saved_tensors
        return ops.neg(X.mH @ (g @ X.mH))


def inv_fn(A: Tensor) -> tuple:
    return _Inv.apply(A)


def _det_parts(A: Tensor) -> tuple:
    """(LU, perm, permutation sign (*,), U's diagonal) of A."""
    LU, pivots, perm, _ = ops._linalg_lu_factor(A, True)
    n = A.shape[-1]
    steps = ops.arange(1, n + 1, dtype=_dt.int32, device=A.device)
    swaps = ops.sum((pivots != steps).to(_dt.int64), [-1])
    sign = 1.0 - 2.0 * ops.remainder(swaps, 2).to(A.dtype)
    return LU, perm, sign, ops.diagonal(LU, 0, -2, -1)


class _Det(Function):
    @staticmethod
    def forward(ctx, A):
        ctx.empty = A.numel() == 0
        if ctx.empty:
            ctx.zeros = (tuple(A.shape), A.dtype, A.device)
            return ops.ones(tuple(A.shape[:-2]), dtype=A.dtype, device=A.device)
        LU, perm, sign, d = _det_parts(A)
        ctx.LU, ctx.perm, ctx.sign = LU, perm, sign
        return sign * ops.prod(d, -1)

    @staticmethod
    def backward(ctx, g):
        if ctx.empty:
            shape, dtype, device = ctx.zeros
            return ops.zeros(shape, dtype=dtype, device=device)
        LU, n = ctx.LU, ctx.LU.shape[-1]
        d = ops.diagonal(LU, 0, -2, -1)
        nudge = ops.where(d == 0, eps(LU.dtype), 0.0)  # Note [Solver gradients]: det
        nudged = LU + nudge.unsqueeze(-2) * _eye_like(LU, n)
        det = ctx.sign * ops.prod(d + nudge, -1)
        if det.dtype.is_complex:  # torch's linalg_det_backward: (g conj(det)) A^-H
            det = ops.conj(det)
        return K.lu_solve_perm(nudged, ctx.perm, _diag_matrix(g * det, n), True, True, _tri)


def det_fn(A: Tensor) -> Tensor:
    return _Det.apply(A)


class _Slogdet(Function):
    @staticmethod
    def forward(ctx, A):
        batch = tuple(A.shape[:-2])
        ctx.empty = A.numel() == 0
        if ctx.empty:
            ctx.zeros = (tuple(A.shape), A.dtype, A.device)
            return (ops.ones(batch, dtype=A.dtype, device=A.device),
                    ops.zeros(batch, dtype=A.dtype.to_real(), device=A.device))  # logabsdet is real
        LU, perm, sign, d = _det_parts(A)
        ctx.LU, ctx.perm = LU, perm
        sign = sign * ops.prod(ops.sgn(d) if d.dtype.is_complex else ops.sign(d), -1)
        ctx.sign = sign
        return sign, ops.sum(ops.log(ops.abs(d)), [-1])

    @staticmethod
    def backward(ctx, gsign, glogabsdet):
        if ctx.empty:
            shape, dtype, device = ctx.zeros
            return ops.zeros(shape, dtype=dtype, device=device)
        n = ctx.LU.shape[-1]
        g = glogabsdet
        if ctx.LU.dtype.is_complex:  # torch's slogdet_backward: (g_abs - i Im(conj(g_sign) sign)) A^-H
            g = ops.zeros_like(ctx.sign) if g is None else g.to(ctx.LU.dtype)
            if gsign is not None:
                g = g - 1j * ops.imag(ops.conj(gsign) * ctx.sign)
        return K.lu_solve_perm(ctx.LU, ctx.perm, _diag_matrix(g, n), True, True, _tri)


def slogdet_fn(A: Tensor) -> tuple:
    return _Slogdet.apply(A)
