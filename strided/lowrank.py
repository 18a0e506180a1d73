"""Randomized low-rank SVD and PCA (torch._lowrank): ``strided.svd_lowrank`` and ``strided.pca_lowrank``.

Note [Randomized low-rank SVD]
Halko, Martinsson and Tropp (2009), as torch implements them: a Gaussian test matrix R (n x q) drawn from the
default generator, the range of A R orthonormalized by QR and refined by ``niter`` subspace iterations (Algorithm
4.4), then the small SVD of ``Q^T A`` (Algorithm 5.1). A wide A is handled as its transpose. The steps are
strided's differentiable ops (matmul, ``linalg.qr``, ``linalg.svd``), on any device, with gradients; strided's CPU
generator draws torch's normal stream, so under the same seed the results are torch's up to rounding.
Dense tensors only (strided has no sparse layout): ``M``, the optional mean subtracted without forming A - M, is
dense too.
"""

from __future__ import annotations

from . import dtypes as _dt
from .dispatch.argument_checks import arg_tensor
from .tensor import Tensor

__all__ = ["svd_lowrank", "pca_lowrank"]


def _floating_dtype(A: Tensor):
    """torch's ``_linalg_utils.get_floating_dtype``: A's dtype when it is a float type, else float32."""
    return A.dtype if A.dtype in (_dt.float16, _dt.float32, _dt.float64) else _dt.float32


def _approximate_basis(A: Tensor, q: int, niter: int, M: Tensor | None) -> Tensor:
    """Q with q orthonormal columns such that ``Q Q^T (A - M)`` approximates ``A - M`` (Algorithm 4.4)."""
    from . import linalg, randn

    dtype = A.dtype if A.dtype.is_complex else _floating_dtype(A)
    R = randn(A.shape[-1], q, dtype=dtype, device=A.device)
    X = A @ R
    if M is not None:
        X = X - M @ R
    Q = linalg.qr(X).Q
    for _ in range(niter):
        X = A.mH @ Q
        if M is not None:
            X = X - M.mH @ Q
        Q = linalg.qr(X).Q
        X = A @ Q
        if M is not None:
            X = X - M @ Q
        Q = linalg.qr(X).Q
    return Q


def _svd_lowrank(A: Tensor, q: int | None, niter: int | None, M: Tensor | None):
    from . import linalg

    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)
    if m < n:  # the algorithm wants a tall matrix
        A = A.mH
        M = None if M is None else M.mH
    Q = _approximate_basis(A, q, niter, M)
    B = Q.mH @ A
    if M is not None:
        B = B - Q.mH @ M
    U, S, Vh = linalg.svd(B, full_matrices=False)
    V = Vh.mH
    U = Q @ U
    if m < n:
        U, V = V, U
    return U, S, V


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int | None = 2, M: Tensor | None = None):
    """``(U, S, V)`` with ``A - M ~ U diag(S) V^T`` of rank ``q`` (Note [Randomized low-rank SVD]); ``niter``
    subspace iterations (2 is usually plenty); seed the default generator for repeatable results."""
    arg_tensor("svd_lowrank", "A", None, A)
    if A.dim() < 2:  # torch unpacks the shape and fails with "not enough values to unpack"
        raise RuntimeError(f"svd_lowrank(): expected A to be a (batch of) matrices, got {A.dim()} dimension(s)")
    return _svd_lowrank(A, q, niter, M)


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True, niter: int = 2):
    """``(U, S, V)``: the principal directions ``V`` and singular values of ``A`` (rows are samples), centered
    over the rows unless ``center=False``; ``q`` defaults to ``min(6, m, n)`` (Note [Randomized low-rank SVD])."""
    arg_tensor("pca_lowrank", "A", None, A)
    if A.dim() < 2:  # torch unpacks the shape and fails with "not enough values to unpack"
        raise RuntimeError(f"pca_lowrank(): expected A to be a (batch of) matrices, got {A.dim()} dimension(s)")
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter, None)
    return _svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter, None)
