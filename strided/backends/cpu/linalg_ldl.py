"""CPU kernels of ``linalg_ldl_factor_ex`` and ``linalg_ldl_solve``: LAPACK's ``sytf2`` / ``sytrs`` and ``hetf2`` /
``hetrs`` (lower) step by step in NumPy (NumPy exposes no ``sytrf``), in the input's precision.

Note [Bunch-Kaufman LDL]
``A = P L D L^T P^T`` for a symmetric A (``A = P L D L^H P^T`` for a Hermitian one with ``hermitian=True``; its
lower triangle is read; ``hermitian`` changes nothing for real input), with Bunch and Kaufman's partial pivoting
(alpha = (1 + sqrt 17) / 8): at column k, with ``colmax`` the largest entry below the diagonal (row ``imax``) and
``rowmax`` the largest off-diagonal entry of row / column ``imax``, D gets a 1x1 block A[k, k] when ``|A[k, k]| >=
alpha colmax`` (or ``>= alpha colmax^2 / rowmax``), a 1x1 block A[imax, imax] after swapping k and imax when that is
``>= alpha rowmax``, else a 2x2 block of k and imax (after swapping k + 1 and imax). Complex magnitudes are
LAPACK's ``|re| + |im|``; the Hermitian form reads the diagonal's real part, keeps it real, and conjugates what an
interchange moves across the diagonal and the rank-1 / rank-2 updates. The interchanges touch the trailing submatrix
only, so L stays in LAPACK's product form ``P(1) L(1) ... P(k) L(k)``; LD holds L's multipliers below D's blocks,
whose off-diagonal entry sits at (k + 1, k). ``pivots`` is LAPACK's ``ipiv`` (1-based): ``p > 0`` a 1x1 block after
swapping k and p, ``-p`` in both entries of a 2x2 block after swapping k + 1 and p. A column whose entries are all
zero (or a NaN diagonal) is left as it is and sets ``info`` to its 1-based index (the first one), the factorization
going on, as LAPACK's. The updates round as ``syr`` / ``her`` and the unblocked loops do, so the results are
LAPACK's unblocked ones (torch's MKL or OpenBLAS may block larger matrices: the same pivots on well-separated values,
results equal up to rounding). ``ldl_solve`` is ``sytrs`` / ``hetrs``: the forward pass through P and L D, then back
through L^T (L^H) and P.
"""

from __future__ import annotations

import numpy as np

from ...dispatch.library import kernel
from ..meta.linalg_ldl import check_ldl_factor, check_ldl_solve, ldl_factor_outputs, ldl_solve_output
from .common import as_numpy, store

__all__ = ["ldl_factor_host", "ldl_solve_host"]

_ALPHA = (1 + np.sqrt(17.0)) / 8


def _magnitudes(v):
    """LAPACK's pivot magnitude: |v| for real values, ``cabs1 = |re| + |im|`` for complex ones (izamax's)."""
    return np.abs(v.real) + np.abs(v.imag) if np.iscomplexobj(v) else np.abs(v)


def _swap_trailing(a: np.ndarray, k: int, kk: int, kp: int, kstep: int, hermitian: bool) -> None:
    """LAPACK's interchange of rows and columns ``kk`` and ``kp`` in the trailing lower triangle A[k:, k:] (``he``:
    the entries crossing the diagonal conjugated, the diagonal kept real)."""
    n = a.shape[0]
    if kp < n - 1:
        a[kp + 1:, [kk, kp]] = a[kp + 1:, [kp, kk]]
    mid = slice(kk + 1, kp)
    if hermitian:
        a[mid, kk], a[kp, mid] = np.conj(a[kp, mid]), np.conj(a[mid, kk])
        a[kp, kk] = np.conj(a[kp, kk])
        a[kk, kk], a[kp, kp] = a[kp, kp].real, a[kk, kk].real
        if kstep == 2:
            a[k, k] = a[k, k].real
    else:
        a[mid, kk], a[kp, mid] = a[kp, mid].copy(), a[mid, kk].copy()
        a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
    if kstep == 2:
        a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]


def _update_one(a: np.ndarray, k: int, hermitian: bool) -> None:
    """The rank-1 update of a 1x1 block: ``syr`` (``her``: a real pivot, conjugated, real diagonal)."""
    one = a.dtype.type(1)
    d11 = one / (a[k, k].real if hermitian else a[k, k])
    x = a[k + 1:, k].copy()
    block = a[k + 1:, k + 1:]
    block += np.tril(np.outer(x, -d11 * (np.conj(x) if hermitian else x)))
    if hermitian:
        np.fill_diagonal(block, block.diagonal().real)
    a[k + 1:, k] *= d11


def _update_two(a: np.ndarray, k: int, hermitian: bool) -> None:
    """The rank-2 update of a 2x2 block, as sytf2's (``hetf2``'s: with |d21| and conjugates)."""
    one = a.dtype.type(1)
    ak, ak1 = a[k + 2:, k].copy(), a[k + 2:, k + 1].copy()
    if hermitian:
        d = np.hypot(a[k + 1, k].real, a[k + 1, k].imag)
        d11 = a[k + 1, k + 1].real / d
        d22 = a[k, k].real / d
        tt = one.real / (d11 * d22 - 1)
        d21 = a[k + 1, k] / d
        d = tt / d
        wk = d * (d11 * ak - d21 * ak1)
        wkp1 = d * (d22 * ak1 - np.conj(d21) * ak)
        left, right = np.conj(wk), np.conj(wkp1)
    else:
        d21 = a[k + 1, k]
        d11 = a[k + 1, k + 1] / d21
        d22 = a[k, k] / d21
        t = one / (d11 * d22 - 1)
        d21 = t / d21
        wk = d21 * (d11 * ak - ak1)
        wkp1 = d21 * (d22 * ak1 - ak)
        left, right = wk, wkp1
    block = a[k + 2:, k + 2:]
    block -= np.tril(np.outer(ak, left))
    block -= np.tril(np.outer(ak1, right))
    if hermitian:
        np.fill_diagonal(block, block.diagonal().real)
    a[k + 2:, k], a[k + 2:, k + 1] = wk, wkp1


def _factor(a: np.ndarray, hermitian: bool):
    """sytf2 / hetf2 (lower) of one square matrix, in place on ``a`` (lower triangle); returns (ipiv, info)."""
    n = a.shape[0]
    hermitian = hermitian and np.iscomplexobj(a)
    ipiv = np.zeros(n, np.int32)
    info = 0
    real = a.real.dtype.type  # the pivot tests in the matrix's own precision, as LAPACK's
    alpha = real(_ALPHA)
    k = 0
    while k < n:
        kstep = 1
        absakk = abs(a[k, k].real) if hermitian else _magnitudes(a[k, k])
        imax, colmax = k, real(0)
        if k < n - 1:
            imax = k + 1 + int(np.argmax(_magnitudes(a[k + 1:, k])))
            colmax = _magnitudes(a[imax, k])
        if max(absakk, colmax) == 0 or np.isnan(absakk):
            info = info or k + 1
            kp = k
            if hermitian:
                a[k, k] = a[k, k].real
        else:
            if absakk >= alpha * colmax:
                kp = k
            else:
                rowmax = np.max(_magnitudes(a[imax, k:imax]))
                if imax < n - 1:
                    rowmax = max(rowmax, np.max(_magnitudes(a[imax + 1:, imax])))
                pivot = abs(a[imax, imax].real) if hermitian else _magnitudes(a[imax, imax])
                if absakk >= alpha * colmax * (colmax / rowmax):
                    kp = k
                elif pivot >= alpha * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:
                _swap_trailing(a, k, kk, kp, kstep, hermitian)
            elif hermitian:
                a[k, k] = a[k, k].real
                if kstep == 2:
                    a[k + 1, k + 1] = a[k + 1, k + 1].real
            if kstep == 1:
                if k < n - 1:
                    _update_one(a, k, hermitian)
            elif k < n - 2:
                _update_two(a, k, hermitian)
        if kstep == 1:
            ipiv[k] = kp + 1
        else:
            ipiv[k] = ipiv[k + 1] = -(kp + 1)
        k += kstep
    return ipiv, info


def ldl_factor_host(a: np.ndarray, hermitian: bool = False):
    """(LD, pivots, info) of a batch (*, n, n) of symmetric (``hermitian``: Hermitian) matrices (Note
    [Bunch-Kaufman LDL])."""
    batch, n = a.shape[:-2], a.shape[-1]
    ld = np.tril(a).reshape(-1, n, n).copy()
    pivots = np.zeros((ld.shape[0], n), np.int32)
    info = np.zeros(ld.shape[0], np.int32)
    with np.errstate(all="ignore"):
        for i in range(ld.shape[0]):
            pivots[i], info[i] = _factor(ld[i], hermitian)
            ld[i] = np.tril(ld[i])
    return ld.reshape(a.shape), pivots.reshape((*batch, n)), info.reshape(batch)


def _solve(ld: np.ndarray, ipiv: np.ndarray, b: np.ndarray, hermitian: bool) -> None:
    """sytrs / hetrs (lower) of one factorization, in place on the (n, k) right-hand sides ``b``."""
    n = ld.shape[0]
    one = ld.dtype.type(1)
    conj = np.conj if hermitian else (lambda v: v)
    k = 0
    while k < n:  # P L D: forward
        if ipiv[k] > 0:
            kp = ipiv[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            if k < n - 1:
                b[k + 1:] -= np.outer(ld[k + 1:, k], b[k])
            b[k] *= (one.real / ld[k, k].real) if hermitian else one / ld[k, k]
            k += 1
        else:
            kp = -ipiv[k] - 1
            if kp != k + 1:
                b[[k + 1, kp]] = b[[kp, k + 1]]
            if k < n - 2:
                b[k + 2:] -= np.outer(ld[k + 2:, k], b[k])
                b[k + 2:] -= np.outer(ld[k + 2:, k + 1], b[k + 1])
            akm1k = ld[k + 1, k]
            akm1 = ld[k, k] / conj(akm1k)
            ak = ld[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1
            bkm1 = b[k] / conj(akm1k)
            bk = b[k + 1] / akm1k
            b[k] = (ak * bkm1 - bk) / denom
            b[k + 1] = (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:  # L^T P^T (L^H P^T): backward
        if ipiv[k] > 0:
            if k < n - 1:
                b[k] -= conj(ld[k + 1:, k]) @ b[k + 1:]
            kp = ipiv[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            k -= 1
        else:
            if k < n - 1:
                b[k] -= conj(ld[k + 1:, k]) @ b[k + 1:]
                b[k - 1] -= conj(ld[k + 1:, k - 1]) @ b[k + 1:]
            kp = -ipiv[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            k -= 2


def _check_pivots(piv: np.ndarray, n: int) -> None:
    """LAPACK's ipiv (lower) or an error naming the bad entry: sytrs would index out of the matrix, wrap around
    or solve with another matrix than any factorization gives."""
    bad = (piv == 0) | (np.abs(piv) > n)
    pairs = piv < 0
    if n:  # a negative pivot starts or ends a 2x2 block: the entries of a pair are equal
        starts = np.zeros_like(pairs)
        for k in range(n):  # the first entry of each 2x2 block, walking as sytrs does
            starts[:, k] = pairs[:, k] & ~(starts[:, k - 1] if k else False)
        partner = np.zeros_like(pairs)
        partner[:, 1:] = starts[:, :-1]
        bad |= starts & ((np.arange(n) == n - 1) | ~np.roll(pairs, -1, axis=1))
        bad |= partner & (piv != np.roll(piv, 1, axis=1))
        # interchanges reach into the trailing matrix only: row k with k .. n - 1, a 2x2 block's with k + 1 ..
        k = np.arange(n)
        bad |= (~pairs & (piv - 1 < k)) | (starts & (-piv - 1 < k + 1))
    if bad.any():
        row, k = (int(i[0]) for i in np.nonzero(bad))
        raise RuntimeError(f"torch.linalg.ldl_solve: pivots must be the ones ldl_factor returned (1-based, entry k "
                           f"from k to {n}, negative in both entries of a 2x2 block), but pivots[{k}] of matrix {row} "
                           f"is {int(piv[row, k])}")


def ldl_solve_host(ld: np.ndarray, pivots: np.ndarray, b: np.ndarray, shape: tuple, hermitian: bool = False):
    """The solutions (``shape``: the broadcast batch, n, k) of ``A X = B`` from ``ldl_factor``'s LD and pivots
    (``hermitian``: of a Hermitian A, as ``ldl_factor(A, hermitian=True)`` gives them)."""
    batch = shape[:-2]
    n = shape[-2]
    ld = np.broadcast_to(ld, (*batch, n, n)).reshape(-1, n, n)
    piv = np.broadcast_to(pivots, (*batch, n)).reshape(-1, n).astype(np.int64)
    _check_pivots(piv, n)
    x = np.array(np.broadcast_to(b, shape), dtype=ld.dtype).reshape(-1, n, shape[-1])
    with np.errstate(all="ignore"):
        for i in range(x.shape[0]):
            _solve(ld[i], piv[i], x[i], hermitian and np.iscomplexobj(ld))
    return x.reshape(shape)


@kernel("CPU")
def linalg_ldl_factor_ex(self, *, hermitian=False, check_errors=False):
    check_ldl_factor(self)
    LD, pivots, info = ldl_factor_outputs(self)
    if self.numel():
        ld, piv, inf = ldl_factor_host(as_numpy(self), hermitian)
        store(LD, ld)
        store(pivots, piv)
        store(info, inf)
    else:
        store(info, np.zeros(tuple(info.shape), np.int32))
    return LD, pivots, info


@kernel("CPU")
def linalg_ldl_solve(LD, pivots, B, *, hermitian=False):
    shape = check_ldl_solve(LD, pivots, B)
    out = ldl_solve_output(LD, B, shape)
    if out.numel():
        store(out, ldl_solve_host(as_numpy(LD), as_numpy(pivots), as_numpy(B), shape, hermitian))
    return out
