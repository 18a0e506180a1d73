"""Householder QR and least squares (qr, lstsq) through the op ``_linalg_householder_qr`` (LAPACK's geqrf / orgqr on
the CPU, a fused kernel on CUDA, composed of ops on Meta), with torch's gradients.

Note [QR gradient]
torch's ``linalg_qr_backward`` (FunctionsManual.cpp). m >= n: gA = (gQ + Q syminvadj(triu(gR R^H - Q^H gQ)))
R^-H, where syminvadj(X) = X + X^H with the real part of its diagonal halved (triu(X) + triu(X, 1)^T when real).
m < n: gA = [Q S R_1^-H, 0] + Q gR with S = tril(X - X^H), the imaginary part of its diagonal halved,
X = Q^H gQ - gR R^H and R_1 the leading m x m block of R. Complex A is factored on the CPU only (LAPACK's zgeqrf /
zungqr through numpy.linalg.qr); the CUDA kernel is real. mode='r' (no Q) and
mode='complete' with m > n (Q not determined by A) are not differentiable: backward raises torch's errors.
The triangular solves are back substitutions built from ops (``ops/composite/linalg_householder.solve_upper``), so the
gradient is differentiable again.

Note [lstsq drivers]
torch's CPU drivers, with their output conventions (which outputs are filled, their shapes and dtypes):
* 'gelsy' (default, on every device here, where torch's CUDA default is 'gels'): the minimum-norm least
  squares solution with rank determined by ``rcond``. LAPACK's gelsy finds the rank by QR with column
  pivoting; here it is the number of singular values above ``rcond * s_max`` (the gelsd rule), which agrees
  except for singular values that sit right at the threshold. rank filled; residuals and singular_values
  empty (as torch's gelsy).
* 'gelsd' / 'gelss': the same solution, with the singular values; residuals (squared column norms of A X
  - B) when m > n and every matrix has full rank (one host read of the ranks decides that, as torch
  does; a meta tensor assumes full rank).
* 'gels': Householder QR, for full-rank A only (as LAPACK's gels): X = R^-1 Q^T B when m >= n, the
  minimum-norm X = Q R^-T B from the QR of A^T when m < n; rank and singular_values empty, residuals
  when m > n.
``rcond`` None means eps * max(m, n); a negative rcond means eps. The gradient is torch's
``linalg_lstsq_backward`` (through pinv(A), for every driver); residuals differentiate through X.
The batch dims of A and B broadcast; rank and singular_values have A's batch shape.
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..autograd.function import Function
from ..dispatch.dispatcher import grad_mode
from ..ops import bound as ops
from ..ops.composite.linalg_householder import solve_upper, solve_upper_right
from ..return_types import structseq
from ..tensor import Tensor
from ..type_info import finfo as _finfo
from ._common import COMPLEX_DEVICES, arg_tensor, check_matrix, type_name
from .svd import pinv, pinv_backward, svd_kernel

__all__ = ["qr", "lstsq"]

linalg_qr = structseq("linalg_qr", ("Q", "R"))
linalg_lstsq = structseq("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
_MODES = ("reduced", "complete", "r")
_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


# -- qr -----------------------------------------------------------------------------------------------
def _qr_kernel(A: Tensor, mode: str):
    Q, R = ops._linalg_householder_qr(A, mode == "complete", mode != "r")
    return (ops.empty((0,), dtype=A.dtype, device=A.device) if mode == "r" else Q), R


def qr_backward(gQ, gR, Q: Tensor, R: Tensor, mode: str):
    """torch's ``linalg_qr_backward`` (Note [QR gradient]); gQ / gR may be None."""
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please "
                           "use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
    m, n = Q.shape[-2], R.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    if gQ is None and gR is None:
        return None
    if gQ is None:
        gA = gR @ R.mH
    else:
        gA = gR @ R.mH - Q.mH @ gQ if gR is not None else -(Q.mH @ gQ)
    if m >= n:
        if gA.dtype.is_complex:  # X + X^H with the real part of its diagonal halved (torch's syminvadj)
            X = ops.triu(gA)
            X = X + X.mH - ops.diag_embed(ops.real(ops.diagonal(X, 0, -2, -1)).to(X.dtype))
        else:
            X = ops.triu(gA) + ops.triu(gA, 1).mT
        gA = Q @ X
        if gQ is not None:
            gA = gA + gQ
        return _solve_upper_right_h(R, gA)
    skew = ops.tril(gA.mH - gA)
    if skew.dtype.is_complex:  # its diagonal holds twice i Im(-x_ii): halved
        skew = skew - ops.diag_embed(ops.imag(ops.diagonal(skew, 0, -2, -1)).to(skew.dtype) * 0.5j)
    gA = Q @ skew
    gA = _solve_upper_right_h(R[..., :, :m], gA)
    gA = ops.cat([gA, ops.zeros((*gA.shape[:-1], n - m), dtype=gA.dtype, device=gA.device)], -1)
    return gA + Q @ gR if gR is not None else gA


def _solve_upper_right_h(R: Tensor, B: Tensor) -> Tensor:
    """``B R^-H`` for upper triangular ``R`` (``B R^-T`` when real)."""
    if not R.dtype.is_complex:
        return solve_upper_right(R, B)
    return solve_upper(R, B.mH).mH


class _QR(Function):
    @staticmethod
    def forward(ctx, A, mode):
        Q, R = _qr_kernel(A, mode)
        ctx.mode = mode
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(Q, R)
        return Q, R

    @staticmethod
    def backward(ctx, gQ, gR):
        Q, R = ctx.saved_tensors
        return qr_backward(gQ, gR, Q, R, ctx.mode), None


def qr(A: Tensor, mode: str = "reduced"):
    """``linalg_qr(Q, R)`` with ``A = Q R``, Q orthonormal columns, R upper triangular, by Householder
    reflections (LAPACK's choices, so signs agree with torch's CPU result). ``mode``: 'reduced' (Q m x k,
    R k x n, k = min(m, n)), 'complete' (Q m x m, R m x n) or 'r' (R only; Q is an empty tensor)."""
    arg_tensor("linalg_qr", "A", 1, A)
    check_matrix("linalg.qr", A, "geqrf", complex_devices=COMPLEX_DEVICES)  # complex: LAPACK's (a host copy on CUDA)
    if mode not in _MODES:
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           "or 'complete'")
    if grad_mode.enabled and A._requires_grad:
        return linalg_qr(_QR.apply(A, mode))
    return linalg_qr(_qr_kernel(A, mode))


# -- lstsq --------------------------------------------------------------------------------------------
def _solve_lower(L: Tensor, B: Tensor) -> Tensor:
    """``L^-1 B`` for lower triangular L: the upper solve of the index-reversed system."""
    return ops.flip(solve_upper(ops.flip(L, [-2, -1]), ops.flip(B, [-2])), [-2])


def _broadcast(a: tuple, b: tuple) -> tuple:
    """The broadcast of two batch shapes (their compatibility is checked by the matmul that follows)."""
    a, b = (1,) * (len(b) - len(a)) + a, (1,) * (len(a) - len(b)) + b
    return tuple(y if x == 1 else x for x, y in zip(a, b))


def _lstsq_kernel(A: Tensor, B: Tensor, rcond: float, driver: str):
    """``(X, rank, S)`` for Note [lstsq drivers]; rank / S None for 'gels'. B is (*, m, k)."""
    m, n = A.shape[-2], A.shape[-1]
    batch = tuple(A.shape[:-2])
    if A.numel() == 0:
        X = ops.zeros((*_broadcast(batch, tuple(B.shape[:-2])), n, B.shape[-1]), dtype=A.dtype, device=A.device)
        if driver == "gels":
            return X, None, None
        rank = ops.zeros(batch, dtype=_dt.int64, device=A.device)
        return X, rank, ops.zeros((*batch, min(m, n)), dtype=A.dtype.to_real(), device=A.device)
    if driver == "gels":  # (complex: every ^T a ^H)
        if m >= n:
            Q, R = ops._linalg_householder_qr(A)
            return solve_upper(R, Q.mH @ B), None, None
        Q, R = ops._linalg_householder_qr(A.mH)
        return Q @ _solve_lower(R.mH, B), None, None
    U, S, Vh = svd_kernel(A)
    keep = S > rcond * S[..., :1]
    inv = ops.where(keep, 1.0 / ops.where(keep, S, 1.0), 0.0)
    X = (Vh.mH * inv.unsqueeze(-2)) @ (U.mH @ B)
    return X, ops.sum(keep, [-1]), S


class _Lstsq(Function):
    @staticmethod
    def forward(ctx, A, B, rcond, driver):
        X, rank, S = _lstsq_kernel(A, B, rcond, driver)
        ctx.save_for_backward(A, B)
        ctx.mark_non_differentiable(*(t for t in (rank, S) if t is not None))
        return X, rank, S

    @staticmethod
    def backward(ctx, gX, grank, gS):
        A, B = ctx.saved_tensors
        P = pinv(A)
        gA = pinv_backward(gX @ B.mH, P, A) if ctx.needs_input_grad[0] else None
        gB = P.mH @ gX if ctx.needs_input_grad[1] else None
        return gA, gB, None, None


def lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *, driver: str | None = None):
    """``linalg_lstsq(solution, residuals, rank, singular_values)``: the X minimizing ||A X - B||_F (the
    minimum-norm one when A is rank deficient), B a matrix (*, m, k) or a vector (*, m); which outputs are
    filled depends on ``driver`` (Note [lstsq drivers])."""
    arg_tensor("linalg_lstsq", "input", 1, A)
    arg_tensor("linalg_lstsq", "b", 2, B)
    op = "torch.linalg.lstsq"
    if A.dim() < 2:
        raise RuntimeError(f"{op}: input must have at least 2 dimensions.")
    if B.dim() < 1:
        raise RuntimeError(f"{op}: other must have at least 1 dimension.")
    if A.dtype != B.dtype:
        raise RuntimeError(f"{op}: Expected input and other to have the same dtype, but got input's dtype "
                           f"{type_name(A.dtype)} and other's dtype {type_name(B.dtype)}")
    vector = A.dim() - B.dim() == 1
    if not 0 <= A.dim() - B.dim() <= 1:
        raise RuntimeError(f"{op}: input.dim() must be greater or equal to other.dim() and (input.dim() - "
                           "other.dim()) <= 1")
    Bm = B.unsqueeze(-1) if vector else B
    if A.shape[-2] != Bm.shape[-2]:
        raise RuntimeError(f"{op}: input.size(-2) should match other.size({-1 if vector else -2})")
    if A.device != B.device:
        raise RuntimeError(f"{op}: Expected all tensors to be on the same device, but found at least two devices, "
                           f"{A.device} and {B.device}!")
    driver = "gelsy" if driver is None else driver
    if driver not in _DRIVERS:
        raise RuntimeError(f"{op}: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    if A.dtype not in (_dt.float32, _dt.float64) and not (A.dtype.is_complex and A.device.type in COMPLEX_DEVICES):
        raise RuntimeError("This function doesn't handle types other than float and double")
    m, n = A.shape[-2], A.shape[-1]
    eps = _finfo(A.dtype).eps
    rcond = eps * max(m, n) if rcond is None else (eps if rcond < 0 else float(rcond))
    if grad_mode.enabled and (A._requires_grad or B._requires_grad):
        X, rank, S = _Lstsq.apply(A, Bm, rcond, driver)
    else:
        X, rank, S = _lstsq_kernel(A, Bm, rcond, driver)
    empty = ops.empty((0,), dtype=A.dtype.to_real(), device=A.device)  # residuals, S: real for complex A, as torch
    residuals = empty
    if m > n and driver != "gelsy":
        full_rank = driver == "gels" or A.device.type == "meta" or rank.numel() == 0 or \
            bool(ops.all(rank == n).item())  # Note [lstsq drivers]: torch reads the ranks too
        if full_rank:
            r = A @ X - Bm
            residuals = ops.sum(ops.real(r * ops.conj(r)) if r.dtype.is_complex else r ** 2, [-2])
    if rank is None:
        rank = ops.empty((0,), dtype=_dt.int64, device=A.device)
    if driver in ("gels", "gelsy"):
        S = empty
    return linalg_lstsq((X.squeeze(-1) if vector else X, residuals, rank, S))
