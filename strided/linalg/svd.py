"""Singular value decomposition and what builds on it (svd, svdvals, pinv, matrix_rank, cond; polar in
``polar.py``), composed of ops, with torch's gradients.

Note [SVD by one-sided Jacobi]
The SVD of a tall X (a wide A is transposed first, and U, V swap at the end) is the one-sided (Hestenes)
Jacobi of the op ``_linalg_onesided_jacobi`` (ops/composite/linalg_jacobi.py): the columns of X (divided by
its largest |entry|, so that no square over- or underflows; S is scaled back) are rotated, two at a time,
until they are mutually orthogonal; then S is their norms (sorted descending) and V the accumulated rotations.
X is never squared (no X^T X), so the singular values are accurate to ~eps * s_max, as LAPACK's -- also the
small ones of an ill-conditioned matrix. The left vectors X V / S lose orthogonality as s_i gets small, and
are undefined where s_i = 0, so they are orthonormalized by one Householder QR (``_linalg_householder_qr``),
with the signs of R's diagonal folded back so that U stays the continuation of X V / S: columns of rank-
deficient matrices become an orthonormal completion, and ``full_matrices`` takes the complete Q, whose extra
columns span the orthogonal complement. On the CPU the op is LAPACK's gesdd (Note [LAPACK on the CPU]), so
signs follow LAPACK's there; elsewhere they are the rotations' (both are valid).

Non-finite input (Note [Jacobi convergence check] stops the sweeps): torch's CPU svd raises for NaN ("The
algorithm failed to converge because the input matrix contained non-finite values.") and returns NaNs for
inf, and so does this one; the NaN test is one host read per call (skipped on meta), and it also covers
svdvals, pinv, matrix_rank, cond and the matrix norms, which torch computes with the same svd.

Note [SVD-based gradients]
svd / svdvals: torch's ``svd_backward``: with E_jk = s_k^2 - s_j^2 (1 on the diagonal) and
skew(X) = X - X^H, gA = U [(skew(U^H gU) / E) S + S (skew(V^H gV) / E) + diag(gS)] V^H, plus (I - U U^H)
gU S^-1 V^H when m > n and U S^-1 gV^H (I - V V^H) when m < n; only U diag(gS) V^H when U and V are unused
(svdvals, matrix norms, cond). Complex (the CPU, Note [Complex linear algebra on the CPU]): the diagonal gets
i Im(diag(U^H gU)) / 2S, and a loss that sees the singular vectors' phases is refused, as torch's.
full_matrices narrows U, Vh and their gradients to the first k columns / rows, as torch. pinv: torch's
``pinv_backward`` (pinv has its own formula, no SVD derivative, so it stays finite for repeated singular
values). All formulas are ops, so they differentiate again.
"""

from __future__ import annotations

import math

from .. import dtypes as _dt
from ..autograd.function import Function
from ..dispatch.dispatcher import grad_mode
from ..ops import bound as ops
from ..return_types import structseq
from ..tensor import Tensor
from ..type_info import finfo as _finfo
from ._common import (
    COMPLEX_DEVICES,
    LinAlgError,
    all_finite,
    arg_tensor,
    check_matrix,
    diag_embed,
    max_abs,
    refuse_complex,
    type_name,
)
from .eigh import eigh_kernel
from .lu import inv_ex
from .norms import matrix_norm

__all__ = ["svd", "svdvals", "pinv", "matrix_rank", "cond"]

linalg_svd = structseq("linalg_svd", ("U", "S", "Vh"))
_CUDA_DRIVERS = ("gesvd", "gesvdj", "gesvda")


# -- the kernel ---------------------------------------------------------------------------------------
def _raise_on_nan(A: Tensor) -> None:
    if A.device.type != "meta" and A.numel() and bool(ops.isnan(A).any().item()):  # Note [SVD by one-sided Jacobi]
        raise LinAlgError("linalg.svd: The algorithm failed to converge because the input matrix contained "
                           "non-finite values.")


def svd_kernel(A: Tensor, full_matrices: bool = False, compute_uv: bool = True):
    """``(U, S, Vh)`` (U, Vh None unless ``compute_uv``) of ``A (*, m, n)``, S descending
    (Note [SVD by one-sided Jacobi]); runs no autograd."""
    _raise_on_nan(A)
    m, n = A.shape[-2], A.shape[-1]
    wide = m < n
    X = A.mH if wide else A  # (*, M, K), M >= K
    M, K = X.shape[-2], X.shape[-1]
    batch = tuple(A.shape[:-2])
    dt, dev = A.dtype, A.device
    real_dt = dt.to_real()  # the singular values of a complex matrix are real
    if K == 0 or A.numel() == 0:
        S = ops.zeros((*batch, min(m, n)), dtype=real_dt, device=dev)
        if not compute_uv:
            return None, S, None
        U = ops.eye(M, M if full_matrices else K, dtype=dt, device=dev).expand(*batch, M, M if full_matrices else K)
        V = ops.eye(K, K, dtype=dt, device=dev).expand(*batch, K, K)
    else:
        scale = max_abs(X)
        X = X / scale
        G, V = ops._linalg_onesided_jacobi(X) if K > 1 else (X, ops.ones((*batch, 1, 1), dtype=dt, device=dev))
        squares = ops.real(G * ops.conj(G)) if dt.is_complex else G * G
        norms, order = ops.sort(ops.sqrt(ops.sum(squares, [-2])), -1, True)
        V = V.gather(-1, order.unsqueeze(-2).expand(V.shape))
        finite = all_finite(A)
        S = ops.where(finite.unsqueeze(-1), norms * scale[..., 0], math.nan)
        if not compute_uv:
            return None, S, None
        finite = finite.unsqueeze(-1).unsqueeze(-1)
        G = G.gather(-1, order.unsqueeze(-2).expand(G.shape))
        Q, R = ops._linalg_householder_qr(G / ops.where(norms > 0, norms, 1.0).unsqueeze(-2), full_matrices and M > K)
        diagonal = ops.diagonal(R, 0, -2, -1)  # real-valued for complex too (zgeqrf's beta is real)
        signs = ops.where((ops.real(diagonal) if dt.is_complex else diagonal) < 0, -1.0, 1.0).to(dt)
        if Q.shape[-1] > K:
            signs = ops.cat([signs, ops.ones((*batch, Q.shape[-1] - K), dtype=dt, device=dev)], -1)
        U = ops.where(finite, Q * signs.unsqueeze(-2), math.nan)
        V = ops.where(finite, V, math.nan)
    if wide:
        return V, S, U.mH
    return U, S, V.mH


def svd_backward(gU, gS, gVh, U: Tensor, S: Tensor, Vh: Tensor):
    """torch's ``svd_backward`` for reduced factors (Note [SVD-based gradients]); gU / gS / gVh may be None.
    Complex: conjugate transposes, torch's check that the loss does not see the singular vectors' phases, and the
    phase term i Im(diag(U^H gU)) / (2 S) on the diagonal."""
    if gU is None and gS is None and gVh is None:
        return None
    m, n = U.shape[-2], Vh.shape[-1]
    if gU is None and gVh is None:
        return U @ (gS.unsqueeze(-1) * Vh) if m >= n else (U * gS.unsqueeze(-2)) @ Vh
    is_complex = U.dtype.is_complex
    k = S.shape[-1]
    eye = ops.eye(k, k, dtype=S.dtype, device=S.device)
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + eye
    if gU is not None:
        UhgU = U.mH @ gU
        UhgU = UhgU - UhgU.mH
    if gVh is not None:
        VhgV = Vh @ gVh.mH
        VhgV = VhgV - VhgV.mH
    if is_complex:
        im_u = ops.imag(ops.diagonal(UhgU, 0, -2, -1)) if gU is not None else ops.zeros_like(S)
        im_v = ops.imag(ops.diagonal(VhgV, 0, -2, -1)) if gVh is not None else ops.zeros_like(S)
        if not bool(ops.all(ops.abs(im_u + im_v) <= 1e-2 + 1e-2 * ops.abs(im_v)).item()):
            raise RuntimeError("svd_backward: The singular vectors in the complex case are specified up to "
                               "multiplication by e^{i phi}. The specified loss function depends on this phase term, "
                               "making it ill-defined.")
    if gU is not None and gVh is not None:
        gA = (UhgU * S.unsqueeze(-2) + S.unsqueeze(-1) * VhgV) / E
    elif gU is not None:
        gA = (UhgU / E) * S.unsqueeze(-2)
    else:
        gA = S.unsqueeze(-1) * (VhgV / E)
    if gS is not None:
        gA = gA + diag_embed(gS)
    if is_complex and gU is not None:
        gA = gA + diag_embed(ops.mul(im_u / (2 * S), 1j))
    if m > n and gU is not None:
        gUSinv = gU / S.unsqueeze(-2)
        gA = U @ gA + gUSinv - U @ (U.mH @ gUSinv)
        return gA @ Vh
    if m < n and gVh is not None:
        SinvgVh = gVh / S.unsqueeze(-1)
        gA = gA @ Vh + SinvgVh - (SinvgVh @ Vh.mH) @ Vh
        return U @ gA
    return U @ (gA @ Vh) if m >= n else (U @ gA) @ Vh


class _SVD(Function):
    @staticmethod
    def forward(ctx, A, full_matrices):
        U, S, Vh = svd_kernel(A, full_matrices)
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(U, S, Vh)
        return U, S, Vh

    @staticmethod
    def backward(ctx, gU, gS, gVh):
        U, S, Vh = ctx.saved_tensors
        k = S.shape[-1]
        if U.shape[-1] > k:  # full_matrices: only the first k columns of U / rows of Vh enter A
            U, gU = U[..., :k], None if gU is None else gU[..., :k]
        if Vh.shape[-2] > k:
            Vh, gVh = Vh[..., :k, :], None if gVh is None else gVh[..., :k, :]
        return svd_backward(gU, gS, gVh, U, S, Vh), None


def _needs_grad(*tensors) -> bool:
    return grad_mode.enabled and any(isinstance(t, Tensor) and t._requires_grad for t in tensors)


# -- svd / svdvals ------------------------------------------------------------------------------------
def svd(A: Tensor, full_matrices: bool = True, *, driver: str | None = None):
    """``linalg_svd(U, S, Vh)`` with ``A = U diag(S) Vh``, S descending; ``full_matrices`` gives square U
    and Vh (Note [SVD by one-sided Jacobi]). ``driver`` (cuSOLVER's name) is accepted on CUDA and ignored."""
    arg_tensor("linalg_svd", "A", 1, A)
    check_matrix("linalg.svd", A, "linalg_svd", complex_devices=COMPLEX_DEVICES)
    if driver is not None and (A.device.type != "cuda" or driver not in _CUDA_DRIVERS):
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with "
                           "cuSOLVER backend.")
    out = _SVD.apply(A, full_matrices) if _needs_grad(A) else svd_kernel(A, full_matrices)
    return linalg_svd(out)


def svdvals(A: Tensor, *, driver: str | None = None) -> Tensor:
    """The singular values of ``A``, descending."""
    arg_tensor("linalg_svdvals", "A", 1, A)
    check_matrix("linalg.svd", A, "linalg_svd", complex_devices=COMPLEX_DEVICES)
    if driver is not None and (A.device.type != "cuda" or driver not in _CUDA_DRIVERS):
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with "
                           "cuSOLVER backend.")
    if _needs_grad(A):
        return _SVD.apply(A, False)[1]
    return svd_kernel(A, compute_uv=False)[1]


# -- pinv / matrix_rank -------------------------------------------------------------------------------
def _tolerances(A: Tensor, atol, rtol):
    """torch's ``get_atol_rtol``: atol defaults to 0; rtol to eps * max(m, n), or to 0 when a positive atol
    is given. Either may be a number or a tensor broadcasting with the batch."""
    default = _finfo(A.dtype).eps * max(A.shape[-1], A.shape[-2])
    if rtol is None:
        if atol is None:
            rtol = default
        elif isinstance(atol, Tensor):
            rtol = ops.where(atol > 0, 0.0, default)
        else:
            rtol = 0.0 if atol > 0 else default
    return 0.0 if atol is None else atol, rtol


def _threshold(atol, rtol, top: Tensor) -> Tensor:
    """max(atol, rtol * top) against (*, k) values, ``top`` (*, 1)."""
    atol = atol.unsqueeze(-1) if isinstance(atol, Tensor) else atol
    rtol = rtol.unsqueeze(-1) if isinstance(rtol, Tensor) else rtol
    scaled = rtol * top
    return ops.maximum(scaled, atol.to(scaled.dtype)) if isinstance(atol, Tensor) else ops.clamp_min(scaled, atol)


def _pinv_kernel(A: Tensor, atol, rtol, hermitian: bool) -> Tensor:
    if A.numel() == 0:
        return ops.zeros((*A.shape[:-2], A.shape[-1], A.shape[-2]), dtype=A.dtype, device=A.device)
    if hermitian:
        w, V = eigh_kernel(A)
        mag = ops.abs(w)
        keep = mag > _threshold(atol, rtol, ops.amax(mag, [-1], True))
        return (V * ops.where(keep, 1.0 / ops.where(keep, w, 1.0), 0.0).unsqueeze(-2)) @ V.mH
    U, S, Vh = svd_kernel(A)
    keep = S > _threshold(atol, rtol, S[..., :1])
    return (Vh.mH * ops.where(keep, 1.0 / ops.where(keep, S, 1.0), 0.0).unsqueeze(-2)) @ U.mH


def pinv_backward(g: Tensor, P: Tensor, A: Tensor) -> Tensor:
    """torch's ``pinv_backward`` (Note [SVD-based gradients])."""
    m, n = A.shape[-2], A.shape[-1]
    Ph, gh = P.mH, g.mH
    if m <= n:
        K = gh @ P
        KPh = K @ Ph
        return -(P @ K).mH + KPh - (A @ P) @ KPh + (Ph @ P) @ (gh - K @ A)
    K = P @ gh
    PhK = Ph @ K
    return -(K @ P).mH + ((gh - A @ K) @ P) @ Ph + PhK - (PhK @ P) @ A


class _Pinv(Function):
    @staticmethod
    def forward(ctx, A, atol, rtol, hermitian):
        P = _pinv_kernel(A, atol, rtol, hermitian)
        ctx.save_for_backward(A, P)
        return P

    @staticmethod
    def backward(ctx, g):
        A, P = ctx.saved_tensors
        return pinv_backward(g, P, A), None, None, None


def pinv(A: Tensor, rcond=None, hermitian: bool = False, *, atol=None, rtol=None) -> Tensor:
    """The Moore-Penrose pseudo-inverse: singular values at most ``max(atol, rtol * s_max)`` are treated as
    zero (defaults: torch's, Note [SVD-based gradients]); ``hermitian`` uses ``eigh`` of the lower triangle.
    ``rcond`` (positional, torch's older form) is ``rtol``."""
    if not isinstance(A, Tensor):
        raise TypeError(f"linalg_pinv(): argument 'input' (position 1) must be Tensor, not {type(A).__name__}")
    if A.dim() >= 2 and A.dtype.is_complex and A.device.type not in COMPLEX_DEVICES:
        refuse_complex("linalg.pinv", A)
    if A.dim() < 2 or A.dtype not in (_dt.float32, _dt.float64, _dt.complex64, _dt.complex128):
        word = {"float32": "Float", "float64": "Double"}.get(A.dtype.name, type_name(A.dtype))
        raise RuntimeError(f"linalg.pinv({word}{{{list(A.shape)}}}): expected a tensor with 2 or more dimensions of "
                           "float, double, cfloat or cdouble types")
    if hermitian:
        check_matrix("linalg.eigh", A, "linalg_eigh", square=True, integer_error=False, complex_devices=COMPLEX_DEVICES)
    if rcond is not None:
        atol, rtol = (0.0 if atol is None else atol), rcond
    atol, rtol = _tolerances(A, atol, rtol)
    if _needs_grad(A):
        return _Pinv.apply(A, atol, rtol, hermitian)
    return _pinv_kernel(A, atol, rtol, hermitian)


def matrix_rank(A: Tensor, tol=None, hermitian: bool = False, *, atol=None, rtol=None) -> Tensor:
    """The number of singular values (|eigenvalues| with ``hermitian``) above ``max(atol, rtol * s_max)``
    (torch's defaults), int64 of the batch's shape. ``tol`` (positional, torch's older form) is ``atol``."""
    if not isinstance(A, Tensor):
        raise TypeError(f"linalg_matrix_rank(): argument 'input' (position 1) must be Tensor, not {type(A).__name__}")
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    if A.dtype not in (_dt.float32, _dt.float64) and not (A.dtype.is_complex and A.device.type in COMPLEX_DEVICES):
        raise RuntimeError("This function doesn't handle types other than float and double")
    if tol is not None:
        atol, rtol = tol, (0.0 if rtol is None else rtol)
    atol, rtol = _tolerances(A, atol, rtol)
    if hermitian:
        check_matrix("linalg.eigh", A, "linalg_eigh", square=True, integer_error=False, complex_devices=COMPLEX_DEVICES)
    if A.numel() == 0:
        return ops.zeros(tuple(A.shape[:-2]), dtype=_dt.int64, device=A.device)
    A = A.detach()
    if hermitian:
        S = ops.abs(eigh_kernel(A)[0])
        top = ops.amax(S, [-1], True)
    else:
        S = svd_kernel(A, compute_uv=False)[1]
        top = S[..., :1]
    return ops.sum(S > _threshold(atol, rtol, top), [-1])


# -- cond ---------------------------------------------------------------------------------------------
_COND_ORDS = (None, 2, -2, 1, -1, math.inf, -math.inf, "fro", "nuc")


def _square_for_cond(label, A: Tensor) -> None:
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.cond(ord={label}): A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def cond(A: Tensor, p=None) -> Tensor:
    """The condition number of ``A`` in the ``p`` norm: s_max / s_min for None / 2 (s_min / s_max for -2),
    ``sum(S) * sum(1 / S)`` for 'nuc', else ``norm(A) * norm(A^-1)`` (inf for singular A, as torch)."""
    arg_tensor("linalg_cond", "input", 1, A)
    if A.dim() < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if isinstance(p, bool) or p not in _COND_ORDS:
        raise ValueError(f"linalg.cond got an invalid norm type: {p}")
    label = p if p is None or isinstance(p, (str, int)) else f"{p:.6f}"
    if isinstance(p, str):
        _square_for_cond(label, A)
    if A.numel() == 0:
        return ops.zeros(tuple(A.shape[:-2]), dtype=A.dtype, device=A.device)
    if p in (None, 2, -2) or p == "nuc":
        S = svdvals(A)
        if p == "nuc":
            return ops.sum(S, [-1]) * ops.sum(1.0 / S, [-1])
        return S[..., -1] / S[..., 0] if p == -2 else S[..., 0] / S[..., -1]
    _square_for_cond(label, A)
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError("linalg.inv: Expected a floating point or complex tensor as input. Got "
                           f"{type_name(A.dtype)}")
    if A.dtype not in (_dt.float32, _dt.float64, _dt.complex64, _dt.complex128):
        raise RuntimeError(f"linalg.inv: Low precision dtypes not supported. Got {type_name(A.dtype)}")
    inverse, info = inv_ex(A)  # info > 0: an exactly zero pivot, and torch's cond is inf
    inverse = ops.where((info > 0).unsqueeze(-1).unsqueeze(-1), math.inf, inverse)
    return ops.nan_to_num(matrix_norm(A, p) * matrix_norm(inverse, p), math.inf, math.inf, -math.inf)
