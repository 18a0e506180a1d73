"""Householder QR and a triangular solve, composed of ops (the kernels behind ``qr``, ``lstsq`` and the
SVD's final orthonormalization).

Note [Householder QR from ops]
Column j of the working matrix is reflected onto ``beta e_j`` by ``H_j = I - tau_j v_j v_j^T``, exactly as
LAPACK's dlarfg / geqrf choose them: ``beta = -sign(alpha) * ||x||`` (alpha = x_j), ``tau = (beta - alpha) /
beta``, ``v = x / (alpha - beta)`` below the diagonal with an implicit 1 on it, and ``tau = 0`` (H = I) when
nothing lies below the diagonal. Each reflector is applied to the whole matrix at once, ``R -= tau v (v^T
R)``: one matrix-vector product and one rank-1 update, every matrix of the batch together, with no data-
dependent control flow (v is zero above row j, so the finished columns are unchanged). Q is accumulated
backwards, ``Q = H_1 (H_2 (... (H_k I)))``, as LAPACK's orgqr, over the first k columns of I (reduced) or
all m (complete). So Q and R agree with LAPACK's (numpy.linalg.qr's, torch's) up to rounding, signs
included. The matrix is divided by its largest |entry| first (R is scaled back), so that no square
overflows. Non-finite input makes NaN propagate; the loops have fixed length, so nothing hangs.
"""

from __future__ import annotations

from ... import return_types
from ...backends.meta.linalg_factorizations import check_geqrf, check_matrices
from ...dispatch.library import kernel
from ...tensor import Tensor
from .. import bound as ops

__all__ = ["householder_reflectors", "householder_qr", "solve_upper", "solve_upper_right"]


def householder_reflectors(A: Tensor):
    """``(R, reflectors, scale)``: ``A / scale`` reduced to upper-triangular ``R`` (rounding left below the
    diagonal) by the reflectors ``[(v, tau)]`` of Note [Householder QR from ops], in order; ``scale`` is None for an
    empty ``A``."""
    m, n = A.shape[-2], A.shape[-1]
    k = min(m, n)
    rows = ops.arange(0, m, device=A.device).unsqueeze(-1)  # (m, 1)
    top = ops.amax(ops.abs(A), [-2, -1], True) if A.numel() else None
    scale = ops.where((top > 0) & ops.isfinite(top), top, 1.0) if top is not None else None
    R = A / scale if scale is not None else A.clone()  # no square over- / underflows (R is scaled back)
    reflectors = []
    for j in range(k if m > k else k - 1):  # the last row of a wide / square A has nothing below it
        x = R[..., :, j:j + 1]  # (*, m, 1)
        below = rows > j
        alpha = R[..., j:j + 1, j:j + 1]  # (*, 1, 1)
        tail = ops.where(below, x, 0.0)
        xnorm = ops.sqrt(ops.sum(tail * tail, [-2], True))
        nonzero = xnorm != 0
        beta = ops.neg(ops.copysign(ops.hypot(alpha, xnorm), alpha))
        beta = ops.where(nonzero, beta, alpha)
        safe_beta = ops.where(nonzero, beta, 1.0)
        tau = ops.where(nonzero, (beta - alpha) / safe_beta, 0.0)
        denom = ops.where(nonzero, alpha - beta, 1.0)
        v = ops.where(below, tail / denom, ops.where(rows == j, 1.0, 0.0).to(A.dtype))  # (*, m, 1)
        R = R - (tau * v) * (v.mT @ R)
        reflectors.append((v, tau))
    return R, reflectors, scale


def householder_qr(A: Tensor, complete: bool = False, compute_q: bool = True):
    """``(Q, R)`` of ``A (*, m, n)`` (Note [Householder QR from ops]); Q is None unless ``compute_q``.
    Reduced: Q (*, m, k), R (*, k, n) with k = min(m, n); complete: Q (*, m, m), R (*, m, n)."""
    m, n = A.shape[-2], A.shape[-1]
    k = min(m, n)
    R, reflectors, scale = householder_reflectors(A)
    R = ops.triu(R) if scale is None else ops.triu(R) * scale
    if not complete:
        R = R[..., :k, :]
    if not compute_q:
        return None, R
    cols = m if complete else k
    Q = ops.eye(m, cols, dtype=A.dtype, device=A.device).expand(*A.shape[:-2], m, cols)
    for v, tau in reversed(reflectors):
        Q = Q - (tau * v) * (v.mT @ Q)
    return Q, R


def solve_upper(R: Tensor, B: Tensor) -> Tensor:
    """``X`` with ``R X = B`` for upper triangular ``R (*, n, n)`` and ``B (*, n, k)``: back substitution,
    one row per step, composed of differentiable ops (batch dims broadcast)."""
    n = R.shape[-1]
    if n == 0:
        return B.clone()
    X = None
    for i in reversed(range(n)):
        rhs = B[..., i:i + 1, :]
        if X is not None:
            rhs = rhs - R[..., i:i + 1, i + 1:] @ X
        row = rhs / R[..., i:i + 1, i:i + 1]
        X = row if X is None else ops.cat([row, X], -2)
    return X


def solve_upper_right(R: Tensor, B: Tensor) -> Tensor:
    """``X`` with ``X R^T = B``, i.e. ``B R^-T``, for upper triangular ``R``."""
    return solve_upper(R, B.mT).mT


# -- the op's CompositeExplicitAutograd kernel (Note [Linear-algebra kernels] in linalg_solvers.py) ---------
@kernel("CompositeExplicitAutograd")
def _linalg_householder_qr(self, complete=False, compute_q=True):
    check_matrices("_linalg_householder_qr", self)
    Q, R = householder_qr(self, complete, compute_q)
    if Q is None:  # an op returns tensors: no Q is a (*, m, 0) one
        Q = ops.zeros((*self.shape[:-2], self.shape[-2], 0), dtype=self.dtype, device=self.device)
    return Q, R


@kernel("CompositeExplicitAutograd")
def geqrf(self):
    """LAPACK's geqrf: ``a`` holds R on and above its diagonal and each reflector's vector below it (its unit
    diagonal implicit), ``tau`` (*, min(m, n)) their scales -- the reflectors of Note [Householder QR from ops],
    LAPACK's own choices, so orgqr / ormqr of them give LAPACK's Q."""
    check_geqrf(self)
    m, n = self.shape[-2], self.shape[-1]
    k = min(m, n)
    R, reflectors, scale = householder_reflectors(self)
    a = ops.triu(R) if scale is None else ops.triu(R) * scale
    batch = tuple(self.shape[:-2])
    if reflectors:
        below = ops.tril(ops.cat([v for v, _ in reflectors], -1), -1)  # (*, m, r), r <= n
        if below.shape[-1] < n:
            below = ops.cat([below, ops.zeros((*batch, m, n - below.shape[-1]), dtype=self.dtype,
                                              device=self.device)], -1)
        a = a + below
    taus = [tau.squeeze(-1) for _, tau in reflectors]  # (*, 1) each
    if len(taus) < k:  # the last reflector of a square or wide matrix is the identity (LAPACK's tau = 0)
        taus.append(ops.zeros((*batch, k - len(taus)), dtype=self.dtype, device=self.device))
    tau = ops.cat(taus, -1) if taus else ops.zeros((*batch, 0), dtype=self.dtype, device=self.device)
    return return_types.geqrf((a, tau))
