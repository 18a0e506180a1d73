"""Parallel cyclic Jacobi, composed of ops: the two-sided sweep behind ``eigh`` and the one-sided
(Hestenes) sweep behind ``svd``.

Note [Parallel Jacobi ordering]
A cyclic Jacobi sweep visits every pair (p, q) of the n indices once. With the round-robin ("chess
tournament", Brent & Luk 1985) ordering the n(n-1)/2 pairs split into n - 1 rounds of n/2 disjoint pairs,
and the rotations of one round commute, so they are applied together -- the scheme of cuSOLVER's syevj /
gesvdj. The working matrix is kept in a layout where a round pairs the adjacent positions (2i, 2i+1), so
the 2 x 2 problems are strided views (even / odd diagonal entries, every other superdiagonal entry) and
the n/2 angles are elementwise math over the whole batch. Between rounds the layout moves by a fixed
permutation ``perm`` (the player at position 0 stays, every other one steps once around the circle), so
after n - 1 rounds each pair has met once. The rotation and the move are fused into gathers: after both,
column i is ``C_i * col[perm_i] + S_i * col[perm_i ^ 1]`` (``^ 1``: the partner in the pair), with C_i =
c and S_i = -s or +s of the pair of perm_i -- two ``index_select``, two products and a sum per side,
whatever n. Only layout bookkeeping is Python; no tensor value decides a branch inside a sweep. Odd n is
padded with one decoupled index (zero row / column) whose rotations are exactly the identity; it is
dropped at the end.

Note [Jacobi rotations]
The rotation J = [[c, s], [-s, c]] that diagonalizes the symmetric [[a, g], [g, b]] by J^T (.) J has tan(2
theta) = 2g / (b - a); the inner angle (|theta| <= pi/4, the one that converges) is theta = atan2(2g
sign(b - a), |b - a|) / 2, with c = cos(theta), s = sin(theta): the identity where g = 0, finite for any
finite input. Two-sided (eigh): A <- J^T A J for every pair at once, V <- V J; as in Rutishauser's
formulation the pair's new diagonal is a - t g and b + t g (t = s / c), not the rounded two-sided product,
and the annihilated entries are set to exactly zero -- that keeps the eigenvalues (and the residual ||A V
- V diag(w)||) as accurate as LAPACK's. One-sided (svd): the 2 x 2 problem is the Gram matrix of two
columns, [[|x|^2, x.y], [x.y, |y|^2]], and only the columns rotate, G <- G J, V <- V J; at convergence the
columns of G are orthogonal, their norms are the singular values and G / sigma the left singular vectors.
Working on the columns of A itself (never on A^T A) keeps the small singular values accurate to ~eps
relative to the largest, as LAPACK's. A and V (G and V) are stacked in one tensor so that one gather moves
both.

Note [Jacobi convergence check]
The number of sweeps depends on the data, so it is decided on the host: after each sweep one boolean (is
any matrix of the batch not yet converged?) is read back -- one device sync per sweep; everything else
stays on the device. Two-sided: converged when ||offdiag(A)||_F <= eps * ||A||_F (rotations keep
||A||_F). One-sided: converged when every pair of the sweep had |x.y| <= m * eps * |x| |y| before its
rotation. Jacobi converges quadratically (about 6 to 12 sweeps); ``MAX_SWEEPS`` caps the loop. NaN makes
the comparisons false, so non-finite input stops after one sweep; the callers then return what torch
returns for it. Meta tensors (and empty batches) run no sweep: shapes only.
"""

from __future__ import annotations

from ...backends.meta.linalg_factorizations import check_matrices
from ...dispatch.library import kernel
from ...tensor import Tensor
from ...type_info import finfo as _finfo
from .. import bound as ops


def _tensor(values, dtype=None, device=None) -> Tensor:
    from ...factories import tensor  # the public factory; strided.factories imports the ops layer

    return tensor(values, dtype=dtype, device=device)

__all__ = ["symmetric_jacobi", "onesided_jacobi", "MAX_SWEEPS"]

MAX_SWEEPS = 40


def _round_robin(n: int) -> list[int]:
    """The move between rounds (Note [Parallel Jacobi ordering]): the next layout's position i holds the
    current layout's position ``perm[i]``."""
    half = n // 2
    top, bot = list(range(0, n, 2)), list(range(1, n, 2))
    if half == 1:
        return [0, 1]
    new_top = [top[0], bot[0], *top[1:half - 1]]
    new_bot = [*bot[1:], top[half - 1]]
    perm = [0] * n
    perm[0::2], perm[1::2] = new_top, new_bot
    return perm


class _Schedule:
    """The fixed index tensors of one size: the gathers of a fused rotate-and-move and the layout."""

    def __init__(self, n: int, device):
        perm = _round_robin(n)
        self.n, self.perm = n, perm
        self.idx = _tensor(perm, device=device)
        self.partner = _tensor([p ^ 1 for p in perm], device=device)
        self.pair = _tensor([p // 2 for p in perm], device=device)
        self.sign = [1.0 if p % 2 else -1.0 for p in perm]
        self._sign = None

    def coefficients(self, c: Tensor, s: Tensor):
        """(C, S) of Note [Parallel Jacobi ordering], (*, n), from the pairs' (c, s), (*, n/2)."""
        if self._sign is None:
            self._sign = _tensor(self.sign, dtype=c.dtype, device=c.device)
        return c.index_select(-1, self.pair), s.index_select(-1, self.pair) * self._sign

    def move(self, layout: list[int]) -> list[int]:
        return [layout[p] for p in self.perm]


def _angles(a: Tensor, b: Tensor, g: Tensor):
    """(c, s) of Note [Jacobi rotations], elementwise over the pairs."""
    d = b - a
    theta = 0.5 * ops.atan2(g * ops.where(d >= 0, 2.0, -2.0).to(g.dtype), ops.abs(d))
    return ops.cos(theta), ops.sin(theta)


def _gather(X: Tensor, dim: int, sched: _Schedule, C: Tensor, S: Tensor) -> Tensor:
    """Rotate the adjacent pairs of ``dim`` (-1: columns, X J; -2: rows, J^T X) and move the layout."""
    return X.index_select(dim, sched.idx) * C + X.index_select(dim, sched.partner) * S


def _pad(A: Tensor, rows: bool) -> Tensor:
    """One zero column (and row, two-sided) appended: the decoupled index of odd n."""
    A = ops.cat([A, ops.zeros((*A.shape[:-1], 1), dtype=A.dtype, device=A.device)], -1)
    if rows:
        A = ops.cat([A, ops.zeros((*A.shape[:-2], 1, A.shape[-1]), dtype=A.dtype, device=A.device)], -2)
    return A


def _unpad(X: Tensor, V: Tensor, layout: list[int], n: int):
    """Drop the padding index n: its column (last dim) of X and V, and V's last row."""
    kept = _tensor([i for i, p in enumerate(layout) if p != n], device=V.device)
    return X.index_select(-1, kept), V.index_select(-1, kept)[..., :n, :]


def _still_running(flag: Tensor) -> bool:
    return bool(flag.any().item())  # Note [Jacobi convergence check]: the one host read per sweep


def _sweeps(A: Tensor) -> int:
    return 0 if A.device.type == "meta" or A.numel() == 0 else MAX_SWEEPS


def symmetric_jacobi(A: Tensor):
    """``(w, V)`` with ``A = V diag(w) V^T`` for symmetric ``A (*, n, n)``, n >= 2, w unsorted
    (Notes [Parallel Jacobi ordering], [Jacobi rotations], [Jacobi convergence check])."""
    n = A.shape[-1]
    odd = n % 2
    if odd:
        A = _pad(A, rows=True)
    N = n + odd
    dev, dt = A.device, A.dtype
    batch = tuple(A.shape[:-2])
    sched = _Schedule(N, dev)
    eye = ops.eye(N, N, dtype=dt, device=dev)
    zeros = ops.zeros((N, N), dtype=dt, device=dev)
    # W = [A; V]: the column step rotates both; the row step only A (V's rows get C = 1, S = 0)
    W = ops.cat([A, eye.expand(A.shape)], -2)
    rows_idx = _tensor([*sched.perm, *range(N, 2 * N)], device=dev)
    rows_partner = _tensor([*(p ^ 1 for p in sched.perm), *range(N, 2 * N)], device=dev)
    one, zero = ops.ones((*batch, N), dtype=dt, device=dev), ops.zeros((*batch, N), dtype=dt, device=dev)
    # the rotated A's diagonal and annihilated (p, p ^ 1) entries are replaced (Note [Jacobi rotations])
    hit = sched.partner.unsqueeze(-1) == sched.idx
    keep = ops.cat([ops.logical_not(hit).to(dt) * (1.0 - eye), ops.ones((N, N), dtype=dt, device=dev)], -2)
    on_diagonal = ops.cat([eye, zeros], -2)
    tol = _finfo(dt).eps * ops.sqrt(ops.sum(A * A, [-2, -1]))
    layout = list(range(N))
    for _ in range(_sweeps(A)):
        for _ in range(N - 1):
            d = ops.diagonal(W, 0, -2, -1)
            a, b, g = d[..., 0::2], d[..., 1::2], ops.diagonal(W, 1, -2, -1)[..., 0:N:2]
            c, s = _angles(a, b, g)
            C, S = sched.coefficients(c, s)
            tg = g * s / c
            diag = ops.stack([a - tg, b + tg], -1).reshape(*batch, N).index_select(-1, sched.idx)
            W = _gather(W, -1, sched, C.unsqueeze(-2), S.unsqueeze(-2))
            Cr, Sr = ops.cat([C, one], -1).unsqueeze(-1), ops.cat([S, zero], -1).unsqueeze(-1)
            W = W.index_select(-2, rows_idx) * Cr + W.index_select(-2, rows_partner) * Sr
            W = W * keep + ops.cat([diag, zero], -1).unsqueeze(-1) * on_diagonal
            layout = sched.move(layout)
        off = ops.sqrt(ops.sum((W[..., :N, :] * (1.0 - eye)) ** 2, [-2, -1]))
        if not _still_running(off > tol):
            break
    w, V = ops.diagonal(W[..., :N, :], 0, -2, -1), W[..., N:, :]
    return _unpad(w, V, layout, n) if odd else (w, V)


def onesided_jacobi(G: Tensor):
    """``(G J, J)`` for the orthogonal J that makes the columns of ``G (*, m, n)`` (n >= 2) mutually
    orthogonal (Notes [Parallel Jacobi ordering], [Jacobi rotations], [Jacobi convergence check])."""
    m, n = G.shape[-2], G.shape[-1]
    odd = n % 2
    if odd:
        G = _pad(G, rows=False)
    N = n + odd
    dev, dt = G.device, G.dtype
    sched = _Schedule(N, dev)
    W = ops.cat([G, ops.eye(N, N, dtype=dt, device=dev).expand(*G.shape[:-2], N, N)], -2)  # [G; V]
    tol = max(m, 1) * _finfo(dt).eps
    layout = list(range(N))
    for _ in range(_sweeps(G)):
        worst = []
        for _ in range(N - 1):
            x, y = W[..., :m, 0::2], W[..., :m, 1::2]
            a, b, g = ops.sum(x * x, [-2]), ops.sum(y * y, [-2]), ops.sum(x * y, [-2])
            worst.append(ops.abs(g) - tol * ops.sqrt(a) * ops.sqrt(b))
            c, s = _angles(a, b, g)
            C, S = sched.coefficients(c, s)
            W = _gather(W, -1, sched, C.unsqueeze(-2), S.unsqueeze(-2))
            layout = sched.move(layout)
        if not _still_running(ops.stack(worst, -1) > 0):
            break
    G, V = W[..., :m, :], W[..., m:, :]
    return _unpad(G, V, layout, n) if odd else (G, V)


# -- the ops' CompositeExplicitAutograd kernels (Note [Linear-algebra kernels] in linalg_solvers.py) --------
@kernel("CompositeExplicitAutograd")
def _linalg_symmetric_jacobi(self):
    check_matrices("_linalg_symmetric_jacobi", self, square=True)
    if self.shape[-1] < 2:
        return self.diagonal(0, -2, -1).clone(), ops.ones(tuple(self.shape), dtype=self.dtype, device=self.device)
    return symmetric_jacobi(self)


@kernel("CompositeExplicitAutograd")
def _linalg_onesided_jacobi(self):
    check_matrices("_linalg_onesided_jacobi", self)
    n = self.shape[-1]
    if n < 2:
        return self.clone(), ops.ones((*self.shape[:-2], n, n), dtype=self.dtype, device=self.device)
    return onesided_jacobi(self)
