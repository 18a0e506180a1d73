"""CPU kernels of strided.linalg's factorization ops through NumPy's LAPACK (``numpy.linalg``): what torch's
CPU kernels call too.

Note [LAPACK on the CPU]
The ops of Note [Linear-algebra kernels] (ops/composite/linalg_solvers.py) have composite kernels built from
strided's ops; on the CPU every one of their column steps is a NumPy call, and a Jacobi sweep is ~25 ops per
round, so a 256 x 256 ``eigh`` took 3.8 s where LAPACK takes 7 ms. numpy.linalg wraps the LAPACK drivers
torch's CPU kernels use: ``eigh`` (syevd) for ``_linalg_symmetric_jacobi``, ``svd`` (gesdd) for
``_linalg_onesided_jacobi`` (G J = U S and J = V satisfy its contract: orthogonal columns, J orthogonal),
``qr`` (geqrf + orgqr, the reflectors of Note [Householder QR from ops]) for ``_linalg_householder_qr`` and
``cholesky`` (potrf) for ``_linalg_cholesky_lower``. So CPU results now agree with torch's CPU results
(eigenvector and singular-vector signs included) up to rounding. NumPy has no getrf / trtrs, so LU and the
triangular solve keep the composite kernel. numpy.linalg raises where LAPACK reports a failure (a matrix
that is not positive-definite, NaN input that does not converge), and non-finite input (which OpenBLAS's potrf
does not always flag) is not given to it; those calls run the composite kernel,
which reports ``info`` and propagates NaN as the ops promise. float32 stays float32 (LAPACK's s-routines).
"""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ... import return_types
from ...dispatch.library import kernel
from ..meta.common import new_output
from ..meta.linalg_factorizations import check_geqrf, check_matrices
from .common import as_numpy, store

__all__ = []


def _composite(name: str):
    """The op's composite kernel (the fallback where LAPACK refuses the input)."""
    from ...dispatch.keys import DispatchKey
    from ...dispatch.library import KERNEL_TABLES

    return KERNEL_TABLES[DispatchKey.CompositeExplicitAutograd][name]


def _array(t) -> np.ndarray:
    return as_numpy(t)


def _out(value: np.ndarray, like, dtype=None) -> object:
    out = new_output(value.shape, dtype or like.dtype, like.device)
    return out if out.numel() == 0 else store(out, value)


@kernel("CPU")
def _linalg_symmetric_jacobi(self):
    check_matrices("_linalg_symmetric_jacobi", self, square=True, complex_ok=True)
    a = _array(self)
    if self.dtype.is_complex:  # zheevd (Note [Complex linear algebra on the CPU]): real eigenvalues
        return _hermitian_eigh(a, self)
    if self.shape[-1] < 2 or a.size == 0 or not np.isfinite(a).all():
        return _composite("_linalg_symmetric_jacobi")(self)
    try:
        w, v = np.linalg.eigh(a)
    except np.linalg.LinAlgError:
        return _composite("_linalg_symmetric_jacobi")(self)
    return _out(w, self), _out(v, self)


def _hermitian_eigh(a: np.ndarray, like):
    """(w real, V) of Hermitian matrices; one with a NaN or inf gives NaN throughout, as torch's CPU eigh."""
    real = like.dtype.to_real()
    n = a.shape[-1]
    if a.size == 0:
        return _out(np.zeros(a.shape[:-1]), like, real), _out(a, like)
    finite = np.isfinite(a).all(axis=(-2, -1))
    safe = np.where(finite[..., None, None], a, np.eye(n))
    w, v = np.linalg.eigh(safe)
    w = np.where(finite[..., None], w, np.nan)
    v = np.where(finite[..., None, None], v, np.nan)
    return _out(w, like, real), _out(v, like)


@kernel("CPU")
def _linalg_onesided_jacobi(self):
    check_matrices("_linalg_onesided_jacobi", self, complex_ok=True)
    a = _array(self)
    if self.dtype.is_complex:  # zgesdd (Note [Complex linear algebra on the CPU]): G = U S, V = Vh^H
        finite = np.isfinite(a).all(axis=(-2, -1))[..., None, None]
        u, s, vh = np.linalg.svd(np.where(finite, a, 0), full_matrices=False)
        G, V = u * s[..., None, :], np.conj(np.swapaxes(vh, -1, -2))
        return _out(np.where(finite, G, np.nan), self), _out(np.where(finite, V, np.nan), self)
    if self.shape[-1] < 2 or a.size == 0 or self.shape[-2] < self.shape[-1] or not np.isfinite(a).all():
        return _composite("_linalg_onesided_jacobi")(self)
    try:
        u, s, vt = np.linalg.svd(a, full_matrices=False)
    except np.linalg.LinAlgError:
        return _composite("_linalg_onesided_jacobi")(self)
    return _out(u * s[..., None, :], self), _out(np.swapaxes(vt, -1, -2), self)


def _real_composite(name: str, self, *args):
    """The composite kernel (for empty input), run on a complex ``self`` through its real part and cast back."""
    if not self.dtype.is_complex:
        return _composite(name)(self, *args)
    return tuple(t.to(self.dtype) for t in _composite(name)(self.real.contiguous(), *args))


@kernel("CPU")
def _linalg_householder_qr(self, complete=False, compute_q=True):
    check_matrices("_linalg_householder_qr", self, complex_ok=True)  # LAPACK's zgeqrf / zungqr for complex
    a = _array(self)
    m, n = self.shape[-2], self.shape[-1]
    if a.size == 0:
        return _real_composite("_linalg_householder_qr", self, complete, compute_q)
    if compute_q:
        q, r = np.linalg.qr(a, mode="complete" if complete else "reduced")
        return _out(q, self), _out(r, self)
    r = np.linalg.qr(a, mode="r")
    if complete and m > r.shape[-2]:  # mode "r" gives the reduced (k, n) R; the complete one has m rows
        r = np.concatenate([r, np.zeros((*r.shape[:-2], m - r.shape[-2], n), dtype=r.dtype)], -2)
    return _out(np.zeros((*a.shape[:-2], m, 0), dtype=a.dtype), self), _out(r, self)


@kernel("CPU")
def geqrf(self):
    """LAPACK's geqrf through numpy.linalg.qr's "raw" mode (which returns its Fortran-ordered, so transposed,
    result)."""
    check_geqrf(self, complex_ok=True)
    a = _array(self)
    if a.size == 0:
        return return_types.geqrf(_real_composite("geqrf", self))
    h, tau = np.linalg.qr(a, mode="raw")
    return return_types.geqrf((_out(np.swapaxes(h, -1, -2), self), _out(tau, self)))


@kernel("CPU")
def _linalg_cholesky_lower(self):
    check_matrices("_linalg_cholesky_lower", self, square=True, complex_ok=True)  # zpotrf for complex
    a = _array(self)
    if a.size == 0 or not np.isfinite(np.tril(a)).all():  # OpenBLAS's potrf does not flag a NaN pivot
        return _composite("_linalg_cholesky_lower")(self)
    try:
        lower = np.linalg.cholesky(a)  # reads the lower triangle only (potrf with UPLO='L')
    except np.linalg.LinAlgError:  # some matrix is not positive-definite: the composite finds info
        return _composite("_linalg_cholesky_lower")(self)
    return _out(lower, self), _out(np.zeros(a.shape[:-2], dtype=np.int32), self, dt.int32)
