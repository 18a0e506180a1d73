"""The forward algorithms of strided.linalg's solvers, on plain tensors (no autograd of their own; the
``autograd.Function`` wrappers in ``linalg/_solve_grad.py`` call them with grad mode off). Everything is built
from strided's ops, batched over the leading dims, so it runs unchanged on every backend.

Note [Linear-algebra kernels]
torch's linalg ops call LAPACK (CPU) or cuSOLVER / MAGMA (CUDA) inside their kernels. strided has neither, so
the factorizations are ops of their own (native_functions.yaml, the ``_linalg_*`` block): ``_linalg_tri_solve``,
``_linalg_cholesky_lower``, ``_linalg_lu_factor`` (here), ``_linalg_symmetric_jacobi``,
``_linalg_onesided_jacobi`` (linalg_jacobi.py) and ``_linalg_householder_qr`` (linalg_householder.py). Their
CompositeExplicitAutograd kernels compose each algorithm from strided's ops -- correct on every backend, but on
a GPU each column step is several launches, so a 512 x 512 factorization costs thousands of them. The CUDA
backend registers fused kernels for the same ops (backends/cuda/kernels/linalg_*), which the dispatcher takes
first. The ops have no derivative formulas: strided.linalg's autograd.Functions call them with gradients off
and differentiate with torch's formulas. (A direct call of a composite kernel with gradients on records the
composed ops; call strided.linalg for gradients.)

Note [Blocked triangular solve]
``A X = B`` with A triangular, as MAGMA's trsm does: the inverses of A's diagonal blocks (``nb`` =
32, or the next power of two of a smaller n) are formed all at once, then a recursive block
substitution (lower: X1 = A11^-1 B1, X2 = A22^-1 (B2 - A21 X1); upper mirrored) does the rest with
matmuls. The block inverses come from doubling: the inverses of the 1x1 diagonal blocks are
reciprocals, and the inverse of [[P, 0], [C, Q]] is [[P^-1, 0], [-Q^-1 C P^-1, Q^-1]], so every block
pair of one size is merged by two batched matmuls -- log2(nb) rounds for all blocks of all matrices.
n is padded to a multiple of nb with an identity corner (which changes no solution). Only A's own
triangle is read; with ``unit`` its diagonal is not read either. An upper solve uses the lower
inverses of A^T, transposed. A zero on the diagonal gives inf / nan, as LAPACK's trtrs (no error).

Note [Recursive Cholesky]
chol(A) = [[L11, 0], [L21, L22]] with L11 = chol(A11), L21 = A21 L11^-T (a blocked triangular solve)
and L22 = chol(A22 - L21 L21^T), split in halves down to blocks of at most 32, which a column loop
factors with three ops per column (sqrt, the scaled column, a fused rank-1 update ``baddbmm`` of the
whole block, whose rows above the column are never read back). The bulk of the flops is in matmuls;
the column loops are what is sequential (each pivot needs the previous update), so a factorization
costs about n column steps plus O((n / 32) log n) blocked ones -- ~2.5k ops for n = 512, not n^2.
A pivot that is not positive (or NaN) turns its column into NaN (sqrt of a negative, 0 / 0), so
``info`` is the first diagonal entry of L that is not > 0 -- the order of the first leading minor
that is not positive-definite, as LAPACK's potrf reports. What L holds past a failure differs from
LAPACK's (which stops there); torch leaves it unspecified.

Note [Recursive LU]
Partial pivoting as LAPACK's recursive getrf2: split the columns in halves, factor the left (tall)
half, permute the right half's rows the same way, U12 = L11^-1 A12 (unit lower solve), A22 -= L21 U12,
factor A22, and apply its row order to L21. Panels of at most 32 columns run a column loop: the
pivot is the argmax of |column| (the first on ties, as idamax), the two rows swap by one gather (the
transposition as index), the column below is scaled and the panel's trailing columns get a fused
rank-1 update (``baddbmm``): ten out-of-place ops per column, on the shrinking trailing rows (as
for Cholesky the column steps dominate the count: ~6k ops for n = 512). Each panel carries one
extra column holding the row numbers, so the row order ``perm`` (A[perm] = L U) comes out of the
same swaps; LAPACK's sequential ``pivots`` are the chosen rows. A zero pivot column (all zeros below
the diagonal) is left unscaled, as getrf does, and ``info`` is the first zero on U's diagonal.
``pivot=False`` is the same loop without the search and swaps.
"""

from __future__ import annotations

import math

from ... import dtypes as _dt
from ...backends.meta.common import broadcast_shapes, check
from ...backends.meta.linalg_factorizations import check_matrices
from ...dispatch.library import kernel
from ...tensor import Tensor
from .. import bound as ops

__all__ = ["tri_solve", "tri_solve_any", "cholesky_lower", "lu_factor_core", "lu_solve_perm", "perm_from_pivots",
           "inverse_perm", "gather_rows", "batch_of", "first_failure", "numel"]

NB = 32  # the leaf block of the triangular solve, Cholesky and LU


def batch_of(*tensors) -> tuple:
    """The broadcast of the batch dims (all but the last two) of matrices."""
    return broadcast_shapes(*(tuple(t.shape[:-2]) for t in tensors))


def numel(shape) -> int:
    return math.prod(int(s) for s in shape)


def first_failure(bad: Tensor) -> Tensor:
    """int32 ``(*,)``: the 1-based position of the first True along the last dim of ``bad``, 0 where there is
    none (LAPACK's ``info``). Device-side: a masked min over positions, no ties to break."""
    n = bad.shape[-1]
    if n == 0:
        return ops.zeros(tuple(bad.shape[:-1]), dtype=_dt.int32, device=bad.device)
    pos = ops.arange(1, n + 1, dtype=_dt.int64, device=bad.device)
    first = ops.amin(ops.where(bad, pos, n + 1), [-1])
    return ops.where(first > n, 0, first).to(_dt.int32)


def _pow2(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


def _split(n: int) -> int:
    """Where a recursive algorithm splits n > NB: about half, on a multiple of NB."""
    return max(NB, (n // 2) // NB * NB)


def _zeros(A: Tensor, shape) -> Tensor:
    return ops.zeros(tuple(shape), dtype=A.dtype, device=A.device)


def _blocks(top_left: Tensor, top_right: Tensor, bottom_left: Tensor, bottom_right: Tensor) -> Tensor:
    return ops.cat([ops.cat([top_left, top_right], -1), ops.cat([bottom_left, bottom_right], -1)], -2)


# -- triangular solve -----------------------------------------------------------------------------
def _pad(A: Tensor, rows: int, cols: int, identity: bool) -> Tensor:
    """A (*, r, c) in the top-left corner of a (*, rows, cols) zero matrix; ones on the new diagonal."""
    r, c = A.shape[-2], A.shape[-1]
    if (r, c) == (rows, cols):
        return A
    out = _zeros(A, (*A.shape[:-2], rows, cols))
    out[..., :r, :c].copy_(A)
    if identity:
        ops.diagonal(out, 0, -2, -1)[..., r:].fill_(1)
    return out


def _lower_block_inverses(A: Tensor, nb: int, unit: bool) -> Tensor:
    """(*, m, nb, nb): the inverses of the m diagonal nb x nb blocks of lower-triangular A (*, m nb, m nb),
    nb a power of two (Note [Blocked triangular solve])."""
    batch = tuple(A.shape[:-2])
    m = A.shape[-1] // nb
    D = ops.diagonal(A.contiguous().reshape(*batch, m, nb, m, nb), 0, -4, -2)  # (*, nb, nb, m)
    D = ops.movedim(D, [-1], [-3]).contiguous()  # (*, m, nb, nb)
    if unit:
        inv = ops.ones((*batch, m, nb, 1, 1), dtype=A.dtype, device=A.device)
    else:
        inv = ops.reciprocal(ops.diagonal(D, 0, -2, -1)).reshape(*batch, m, nb, 1, 1)
    b = 1
    while b < nb:
        g = nb // (2 * b)
        pairs = inv.reshape(*batch, m, g, 2, b, b)
        P, Q = pairs.select(-3, 0), pairs.select(-3, 1)
        diag = ops.diagonal(D.reshape(*batch, m, g, 2 * b, g, 2 * b), 0, -4, -2)  # (*, m, 2b, 2b, g)
        C = ops.movedim(diag, [-1], [-3])[..., b:, :b]
        X = ops.neg(Q @ C) @ P
        inv = _blocks(P, _zeros(A, P.shape), X, Q)
        b *= 2
    return inv.reshape(*batch, m, nb, nb)


def _substitute(A: Tensor, B: Tensor, Dinv: Tensor, lo: int, hi: int, nb: int, upper: bool) -> Tensor:
    """The rows of X for diagonal blocks lo..hi-1, given B's rows of those blocks."""
    if hi - lo == 1:
        return Dinv[..., lo, :, :] @ B
    mid = (lo + hi) // 2
    r0, r1, r2 = lo * nb, mid * nb, hi * nb
    h = r1 - r0
    if upper:
        X2 = _substitute(A, B[..., h:, :], Dinv, mid, hi, nb, upper)
        X1 = _substitute(A, B[..., :h, :] - A[..., r0:r1, r1:r2] @ X2, Dinv, lo, mid, nb, upper)
    else:
        X1 = _substitute(A, B[..., :h, :], Dinv, lo, mid, nb, upper)
        X2 = _substitute(A, B[..., h:, :] - A[..., r1:r2, r0:r1] @ X1, Dinv, mid, hi, nb, upper)
    return ops.cat([X1, X2], -2)


def tri_solve(A: Tensor, B: Tensor, upper: bool, unit: bool = False) -> Tensor:
    """X with ``A X = B``: A (*a, n, n) triangular, B (*b, n, k), batch dims broadcast
    (Note [Blocked triangular solve])."""
    n, k = A.shape[-1], B.shape[-1]
    batch = batch_of(A, B)
    if n == 0 or k == 0 or numel(batch) == 0:
        return _zeros(A, (*batch, n, k))
    nb = _pow2(n) if n <= NB else NB
    N = -(-n // nb) * nb
    A_pad, B_pad = _pad(A, N, N, True), _pad(B, N, k, False)
    if upper:
        Dinv = _lower_block_inverses(A_pad.mT, nb, unit).mT
    else:
        Dinv = _lower_block_inverses(A_pad, nb, unit)
    X = _substitute(A_pad, B_pad, Dinv, 0, N // nb, nb, upper)
    if X.shape != (*batch, n, k):  # padded, or a single block whose B did not carry the batch
        X = X[..., :n, :].expand(*batch, n, k)
    return X.contiguous()


def tri_solve_any(A: Tensor, B: Tensor, upper: bool, left: bool, unit: bool) -> Tensor:
    """``A X = B`` (left) or ``X A = B`` (right, as ``A^T X^T = B^T``)."""
    if left:
        return ops._linalg_tri_solve(A, B, upper, unit)
    return ops._linalg_tri_solve(A.mT, B.mT, not upper, unit).mT.contiguous()


# -- Cholesky -------------------------------------------------------------------------------------
def _chol_leaf(A: Tensor) -> Tensor:
    batch, n = tuple(A.shape[:-2]), A.shape[-1]
    T = ops.tril(A)  # only the lower triangle is read; T is its Hermitian (real: symmetric) completion
    T = (T + ops.tril(T, -1).mH).reshape(-1, n, n)
    cols = []
    for j in range(n):  # right-looking on the whole block: rows above j are never read back (Note [Recursive Cholesky])
        pivot = T[:, j:j + 1, j:j + 1]
        col = T[:, :, j:j + 1] / ops.sqrt(ops.real(pivot) if pivot.dtype.is_complex else pivot)
        cols.append(col)
        if j + 1 < n:
            T = ops.baddbmm(T, col, col.mH, alpha=-1)
    return ops.tril(ops.cat(cols, -1)).reshape(*batch, n, n)


def _chol(A: Tensor) -> Tensor:
    n = A.shape[-1]
    if n <= NB:
        return _chol_leaf(A)
    n1 = _split(n)
    L11 = _chol(A[..., :n1, :n1])
    L21 = tri_solve(L11, A[..., n1:, :n1].mH, upper=False).mH
    L22 = _chol(A[..., n1:, n1:] - L21 @ L21.mH)
    return _blocks(L11, _zeros(A, (*A.shape[:-2], n1, n - n1)), L21, L22)


def cholesky_lower(A: Tensor) -> tuple:
    """``(L, info)``: the lower Cholesky factor of the lower triangle of A (Note [Recursive Cholesky])."""
    info_shape = tuple(A.shape[:-2])
    if A.numel() == 0:
        return _zeros(A, A.shape), ops.zeros(info_shape, dtype=_dt.int32, device=A.device)
    L = _chol(A)
    d = ops.diagonal(L, 0, -2, -1)
    return L, first_failure(ops.logical_not((ops.real(d) if d.dtype.is_complex else d) > 0))


# -- LU -------------------------------------------------------------------------------------------
def gather_rows(X: Tensor, perm: Tensor) -> Tensor:
    """``X[..., perm, :]`` per batch: row i of the result is row ``perm[..., i]`` of X."""
    return X.gather(-2, perm.unsqueeze(-1).expand(*perm.shape, X.shape[-1]))


def inverse_perm(perm: Tensor) -> Tensor:
    """The inverse permutation: ``inv[perm[i]] = i``."""
    m = perm.shape[-1]
    ar = ops.arange(0, m, dtype=_dt.int64, device=perm.device).expand(perm.shape)
    return ops.zeros(tuple(perm.shape), dtype=_dt.int64, device=perm.device).scatter(-1, perm, ar)


def _lu_panel(A: Tensor, pivot: bool) -> tuple:
    batch = tuple(A.shape[:-2])
    m, w = A.shape[-2], A.shape[-1]
    T = A.reshape(-1, m, w)  # the trailing rows j..m-1; rows above are final once eliminated
    count = T.shape[0]
    ar = ops.arange(0, m, dtype=_dt.int64, device=A.device)
    if pivot:  # the extra column of row numbers (exact in float32 below 2^24 rows)
        T = ops.cat([T, ar.to(A.dtype).expand(count, m).unsqueeze(-1)], -1)  # complex: in the real part
        rows = ar.expand(count, m)
        first = ops.zeros((count, 1), dtype=_dt.int64, device=A.device)
    done, chosen = [], []
    for j in range(w):
        h = m - j
        if pivot:  # swap rows 0 and r of T: one gather with the transposition as index
            column = T[:, :, j]
            # complex: LAPACK's izamax compares |re| + |im| (cabs1), not the modulus, so the rows match torch's
            size = ops.abs(ops.real(column)) + ops.abs(ops.imag(column)) if column.dtype.is_complex else ops.abs(column)
            r = ops.argmax(size, -1, True)
            swap = rows[:, :h].scatter(-1, r, 0).scatter(-1, first, r)
            T = T.gather(-2, swap.unsqueeze(-1).expand(count, h, T.shape[-1]))
            chosen.append(r)
        done.append(T[:, :1, :])
        if h > 1:
            pv = T[:, :1, j:j + 1]
            col = T[:, 1:, j:j + 1] / ops.where(pv == 0, 1.0, pv)  # a zero pivot column stays unscaled
            parts = [T[:, 1:, :j], col]
            if j + 1 < w:
                parts.append(ops.baddbmm(T[:, 1:, j + 1:w], col, T[:, :1, j + 1:w], alpha=-1))
            parts.append(T[:, 1:, w:])
            T = ops.cat([p for p in parts if p.shape[-1]], -1)
        else:
            T = T[:, 1:, :]
    P = ops.cat([*done, T], -2)
    steps = ops.arange(0, w, dtype=_dt.int64, device=A.device)
    if pivot:
        piv = (ops.cat(chosen, -1) + steps).reshape(*batch, w)
        numbers = P[:, :, w]
        perm = (ops.real(numbers) if numbers.dtype.is_complex else numbers).to(_dt.int64).reshape(*batch, m)
        return P[:, :, :w].reshape(*batch, m, w), piv, perm
    return P.reshape(*batch, m, w), steps.expand(*batch, w), ar.expand(*batch, m)


def _lu_tall(A: Tensor, pivot: bool) -> tuple:
    """(LU, 0-based pivots, perm) of A (*, m, w), m >= w (Note [Recursive LU])."""
    w = A.shape[-1]
    if w <= NB:
        return _lu_panel(A, pivot)
    n1 = _split(w)
    LU1, piv1, perm1 = _lu_tall(A[..., :, :n1], pivot)
    right = gather_rows(A[..., :, n1:], perm1) if pivot else A[..., :, n1:]
    U12 = tri_solve(LU1[..., :n1, :], right[..., :n1, :], upper=False, unit=True)
    LU2, piv2, perm2 = _lu_tall(right[..., n1:, :] - LU1[..., n1:, :] @ U12, pivot)
    L21 = gather_rows(LU1[..., n1:, :], perm2) if pivot else LU1[..., n1:, :]
    LU = _blocks(LU1[..., :n1, :], U12, L21, LU2)
    piv = ops.cat([piv1, piv2 + n1], -1)
    perm = ops.cat([perm1[..., :n1], perm1[..., n1:].gather(-1, perm2)], -1)
    return LU, piv, perm


def lu_factor_core(A: Tensor, pivot: bool = True) -> tuple:
    """``(LU, pivots, perm, info)`` of A (*, m, n): LU packed as LAPACK's getrf, ``pivots`` int32 1-based
    sequential row swaps, ``perm`` int64 with ``A[perm] = L U``, ``info`` int32."""
    batch = tuple(A.shape[:-2])
    m, n = A.shape[-2], A.shape[-1]
    k = min(m, n)
    if A.numel() == 0:
        pivots = ops.arange(1, k + 1, dtype=_dt.int32, device=A.device).expand(*batch, k).contiguous()
        perm = ops.arange(0, m, dtype=_dt.int64, device=A.device).expand(*batch, m).contiguous()
        return A.contiguous().clone(), pivots, perm, ops.zeros(batch, dtype=_dt.int32, device=A.device)
    if m >= n:
        LU, piv, perm = _lu_tall(A, pivot)
    else:
        LU1, piv, perm = _lu_tall(A[..., :, :m], pivot)
        right = gather_rows(A[..., :, m:], perm) if pivot else A[..., :, m:]
        LU = ops.cat([LU1, tri_solve(LU1, right, upper=False, unit=True)], -1)
    info = first_failure(ops.diagonal(LU, 0, -2, -1) == 0)
    return LU.contiguous(), (piv + 1).to(_dt.int32), perm, info


def lu_solve_perm(LU: Tensor, perm: Tensor, B: Tensor, left: bool, adjoint: bool, solve=None) -> Tensor:
    """X from an LU factorization ``A[perm] = L U`` (LU square): ``A X = B``, ``A^H X = B`` (adjoint),
    ``X A = B`` or ``X A^H = B`` (not left, as the transposed left solve). ``solve(A, B, upper, unit)``
    is the triangular solver (the differentiable one when gradients must flow through).

    Complex: the transposed solve (``A^T X = B``) is the real adjoint's; ``A^H X = B`` is its conjugate,
    ``conj(A^T conj(X) = conj(B))``, and ``X A = B`` is ``A^T X^T = B^T``, ``X A^H = B`` ``A conj(X)^T = conj(B)^T``."""
    solve = solve or ops._linalg_tri_solve
    if LU.dtype.is_complex:
        if not left:
            if adjoint:
                return ops.conj(lu_solve_perm(LU, perm, ops.conj(B.mT), True, False, solve)).mT
            return _lu_solve_transposed(LU, perm, B.mT, solve).mT
        if adjoint:
            return ops.conj(_lu_solve_transposed(LU, perm, ops.conj(B), solve))
    elif not left:
        return lu_solve_perm(LU, perm, B.mT, True, not adjoint, solve).mT
    n, k = LU.shape[-1], B.shape[-1]
    batch = batch_of(LU, B)
    B = B.expand(*batch, n, k)
    perm = perm.expand(*batch, n)
    if not adjoint:  # U^-1 L^-1 B[perm]
        Y = solve(LU, gather_rows(B, perm), False, True)
        return solve(LU, Y, True, False)
    return _lu_solve_transposed(LU, perm, B, solve)


def _lu_solve_transposed(LU: Tensor, perm: Tensor, B: Tensor, solve) -> Tensor:
    """X with ``A^T X = B`` (no conjugation), B already broadcast: A^T = U^T L^T P^T."""
    n, k = LU.shape[-1], B.shape[-1]
    batch = batch_of(LU, B)
    B = B.expand(*batch, n, k)
    perm = perm.expand(*batch, n)
    Y = solve(LU.mT, B, False, False)
    Y = solve(LU.mT, Y, True, True)
    return gather_rows(Y, inverse_perm(perm))


_CHUNK = 1 << 24  # elements of the transposition stack composed at once


def perm_from_pivots(pivots: Tensor, m: int) -> Tensor:
    """The row order ``perm`` (int64, ``(*, m)``, ``A[perm] = L U``) of LAPACK's 1-based sequential row swaps
    ``pivots`` (*, k). Swap i is a permutation vector; their composition is associative, so the k vectors
    are composed pairwise by gathers in log2(k) rounds (in chunks bounded in memory)."""
    batch = tuple(pivots.shape[:-1])
    k = pivots.shape[-1]
    ar = ops.arange(0, m, dtype=_dt.int64, device=pivots.device)
    perm = ar.expand(*batch, m).contiguous()
    step = max(1, _CHUNK // max(1, m * numel(batch)))
    piv = pivots.to(_dt.int64) - 1
    for start in range(0, k, step):
        c = min(step, k - start)
        here = ops.arange(start, start + c, dtype=_dt.int64, device=pivots.device).expand(*batch, c).unsqueeze(-1)
        there = piv[..., start:start + c].unsqueeze(-1)
        T = ar.expand(*batch, c, m).contiguous().scatter(-1, here, there).scatter(-1, there, here)
        while T.shape[-2] > 1:
            if T.shape[-2] % 2:
                T = ops.cat([T, ar.expand(*batch, 1, m)], -2)
            pairs = T.reshape(*batch, T.shape[-2] // 2, 2, m)
            T = pairs.select(-2, 0).gather(-1, pairs.select(-2, 1))
        perm = perm.gather(-1, T.squeeze(-2))
    return perm


# -- the ops' CompositeExplicitAutograd kernels (Note [Linear-algebra kernels]) ------------------------------
@kernel("CompositeExplicitAutograd")
def _linalg_tri_solve(A, B, upper, unitriangular=False):
    check_matrices("_linalg_tri_solve", A, B, complex_ok=True)
    check(A.shape[-1] == A.shape[-2] and B.shape[-2] == A.shape[-1],
          lambda: f"_linalg_tri_solve: expected A (*, n, n) and B (*, n, k), got {list(A.shape)} and {list(B.shape)}")
    return tri_solve(A, B, upper, unitriangular)


@kernel("CompositeExplicitAutograd")
def _linalg_cholesky_lower(self):
    check_matrices("_linalg_cholesky_lower", self, square=True, complex_ok=True)
    return cholesky_lower(self)


@kernel("CompositeExplicitAutograd")
def _linalg_lu_factor(self, pivot=True):
    check_matrices("_linalg_lu_factor", self, complex_ok=True)
    return lu_factor_core(self, pivot)
