"""CUDA kernels of the orthogonal factorization ops (Note [Linear-algebra kernels] in
ops/composite/linalg_solvers.py): ``_linalg_symmetric_jacobi`` (eigh, eigvalsh) and ``_linalg_onesided_jacobi``
(svd and everything built on it) in ``linalg_jacobi.cu``, ``_linalg_householder_qr`` (qr, lstsq, the SVD's
orthonormalization) in ``linalg_householder.cu``. Their contracts are the composite kernels' (ops/composite/
linalg_jacobi.py, linalg_householder.py).

Note [Fused Jacobi]
The composite runs each round of a Jacobi sweep as ~25 ops and reads a flag back after every sweep. Here one
thread block owns one matrix and runs every sweep in one launch: the round's n/2 rotations are computed (one
thread per pair), a barrier, the rotations applied, a barrier; the convergence test after each sweep is a block
reduction whose result every thread reads, so all threads leave the loop together and the host never waits.
The order of the pairs is the circle method (the round-robin of Note [Parallel Jacobi ordering], in the
matrix's own index order: round r pairs (r + l) mod (N - 1) with (r - l) mod (N - 1), and r with N - 1),
with one decoupled index for odd n whose pair rotates nothing. The rotations are those of Note [Jacobi
rotations] (atan2 of the 2 x 2 problem; Rutishauser's update of the diagonal; the annihilated entries set to
exactly 0), at most ``MAX_SWEEPS`` sweeps.
* two-sided (``symmetric_jacobi``): the 2 x 2 blocks (rows of pair k, columns of pair l) of J^T A J are
  independent once the round's rotations are known, so one pass updates them all, together with V's column
  pairs: a group of ``group`` threads (a power of two <= 32) per block row, its threads along l -- consecutive
  l are consecutive columns. Converged when ||offdiag(A)||_F <= eps ||S||_F. Threads: (n/2 + n) * group,
  rounded up to a warp, at most 1024.
* one-sided (``onesided_jacobi``): the columns of G and J are kept transposed (a column contiguous); a warp
  owns a pair for the round: the three Gram entries are warp sums, and the pair rotates only while |x.y| > m
  eps |x| |y| (the threshold of the composite's convergence test; LAPACK's gesvj skips those pairs too). A
  sweep that rotated nothing ends the loop. Threads: a warp per pair, at most 32 warps.
The working matrices (A and V; G and J) live in shared memory while they fit the device's opt-in limit (A
first: it is read four times per entry and round), else in a global workspace that stays in L1 / L2. One
block per matrix gives a batch of small matrices the whole GPU; one large matrix gets one SM and is slow,
but correct for any n. NaN makes every comparison false: the loops stop after a sweep (the callers mask
non-finite input).

Note [Fused Householder QR]
LAPACK's geqr2 and org2r, one block per matrix, in one launch: column by column, the norm below the diagonal
is a block sum, the reflector is dlarfg's (beta = -sign(alpha) ||x||, tau = (beta - alpha) / beta, v = x /
(alpha - beta), tau = 0 when nothing below is nonzero: Note [Householder QR from ops]), and each warp applies it
to its trailing columns (w = v^T y, y -= tau w v, as dlarf). Q is built backwards from the identity as org2r
does, so Q and R are LAPACK's up to rounding, signs included; R's strict lower part is written as 0. The
matrix is scaled first by the power of two that brings its largest |entry| into [0.5, 1) -- exact, so squares
neither over- nor underflow and R is scaled back exactly. The matrix and Q work column-major (a column
contiguous) in shared memory while they fit, else in a global workspace; tau is always in shared memory.
Threads: a warp per column (of R or Q), 2 to 32 warps. This serves min(m, n) < ``BLOCKED_MIN_K`` (128), batches
of such matrices included: one launch and no host work per column. A large matrix on one SM would be unblocked
(trailing updates as matrix-vector products: 512 x 256 float32 took 6.2x cuSOLVER's time on an H200), so from
``BLOCKED_MIN_K`` on the op takes the blocked path of Note [Blocked Householder QR] (linalg_blocked_qr.py): panels
of 32 columns by ``householder_panel`` (the same file, the same dlarfg) and GEMMs between them.
"""

from __future__ import annotations

import math
from functools import cache

from ....dispatch.library import kernel
from ....ops import bound as ops
from ....ops.composite.linalg_jacobi import MAX_SWEEPS
from ....type_info import finfo
from ...meta.common import check, new_output
from ...meta.linalg_factorizations import check_matrices
from ..launch import get_kernel
from ..reduction import kernel_source
from ..streams import current_stream_handle
from . import CTYPES
from . import linalg_blocked_qr as blocked
from .linalg_complex import on_host

__all__ = ["orthogonal_sources"]

SYMMETRIC_FMT = "<QQQQqqqqd"  # SymmetricJacobiArgs
ONESIDED_FMT = "<QQQQqqqqd"  # OnesidedJacobiArgs
QR_FMT = "<QQQQqqqqqqq"  # HouseholderQrArgs
MAX_THREADS = 1024  # the kernels' __launch_bounds__
SMEM_MARGIN = 4096  # bytes of the opt-in limit left for the static shared memory (with the 1 KiB the system keeps)


@cache
def _source(file: str, dtype_name: str) -> str:
    if file == "linalg_householder.cu":  # one module with the blocked path's kernels
        return blocked.householder_source(dtype_name)
    return kernel_source(file, SCALAR_T=CTYPES[dtype_name], JACOBI_MAX_SWEEPS=str(MAX_SWEEPS))


def orthogonal_sources():
    """(file, kernel names, source) of every instantiation (NVRTC null test)."""
    for name in ("float32", "float64"):
        yield "linalg_jacobi.cu", ("symmetric_jacobi", "onesided_jacobi"), _source("linalg_jacobi.cu", name)
        yield ("linalg_householder.cu", ("householder_qr", "householder_scale", "householder_panel"),
               _source("linalg_householder.cu", name))


@cache
def _smem_budget(device_index: int) -> int:
    """Dynamic shared memory a block may use: the device's opt-in limit less ``SMEM_MARGIN``."""
    from ..driver import attribute

    return attribute("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", device_index) - SMEM_MARGIN


def _place(op: str, budget: int, fixed: int, *sizes: int) -> tuple[list[bool], int]:
    """Which work arrays (bytes, in priority order) go to shared memory after the ``fixed`` bytes that must:
    (flags, dynamic shared bytes)."""
    check(fixed <= budget, lambda: f"{op}: the matrices are too large for this kernel ({fixed} bytes of shared "
                                   f"memory needed, {budget} available)")
    flags, total = [], fixed
    for size in sizes:
        fits = total + size <= budget
        flags.append(fits)
        total += size if fits else 0
    return flags, total


def _warps(count: int) -> int:
    return min(MAX_THREADS // 32, max(1, count))


def _launch(file: str, name: str, fmt: str, like, blocks: int, threads: int, smem: int, *values) -> None:
    dev = like.device.index
    k = get_kernel(_source(file, like.dtype.name), name, fmt, dev)
    k.launch_smem(blocks, threads, smem, current_stream_handle(dev), *values)


def _batch(t) -> tuple[tuple, int]:
    batch = tuple(t.shape[:-2])
    return batch, math.prod(batch)


def _pair_bytes(pairs: int, itemsize: int) -> int:
    """A round's (c, s, t) and (p, q) per pair, rounded up to 16 bytes (jacobi_pair_bytes in the kernel)."""
    return (pairs * (3 * itemsize + 8) + 15) // 16 * 16


@kernel("CUDA")
def _linalg_symmetric_jacobi(self):
    if self.dtype.is_complex:  # Note [Complex linear algebra on CUDA]
        return on_host("_linalg_symmetric_jacobi", self)
    check_matrices("_linalg_symmetric_jacobi", self, square=True)
    n = self.shape[-1]
    if n < 2:  # as the composite
        return self.diagonal(0, -2, -1).clone(), ops.ones(tuple(self.shape), dtype=self.dtype, device=self.device)
    batch, count = _batch(self)
    w = new_output((*batch, n), self.dtype, self.device)
    V = new_output((*batch, n, n), self.dtype, self.device)
    if count == 0:
        return w, V
    S = self.contiguous()
    pairs, item = (n + 1) // 2, self.dtype.itemsize
    (a_shared, v_shared), smem = _place("_linalg_symmetric_jacobi", _smem_budget(self.device.index),
                                        _pair_bytes(pairs, item), n * n * item, n * n * item)
    work = None if a_shared else new_output((count, n, n), self.dtype, self.device)
    group = min(32, 1 << (pairs - 1).bit_length())
    threads = min(MAX_THREADS, -(-(pairs + n) * group // 32) * 32)
    _launch("linalg_jacobi.cu", "symmetric_jacobi", SYMMETRIC_FMT, self, count, threads, smem, S.data_ptr(),
            w.data_ptr(), V.data_ptr(), 0 if work is None else work.data_ptr(), n, group, a_shared, v_shared,
            float(finfo(self.dtype).eps))
    return w, V


@kernel("CUDA")
def _linalg_onesided_jacobi(self):
    if self.dtype.is_complex:
        return on_host("_linalg_onesided_jacobi", self)
    check_matrices("_linalg_onesided_jacobi", self)
    m, n = self.shape[-2], self.shape[-1]
    if n < 2:  # as the composite
        return self.clone(), ops.ones((*self.shape[:-2], n, n), dtype=self.dtype, device=self.device)
    batch, count = _batch(self)
    GJ = new_output((*batch, m, n), self.dtype, self.device)
    J = new_output((*batch, n, n), self.dtype, self.device)
    if count == 0:
        return GJ, J
    G = self.contiguous()
    item = self.dtype.itemsize
    (g_shared, j_shared), smem = _place("_linalg_onesided_jacobi", _smem_budget(self.device.index), 0,
                                        m * n * item, n * n * item)
    work = None if g_shared and j_shared else new_output((count, n * (m + n)), self.dtype, self.device)
    threads = 32 * _warps((n + 1) // 2)
    _launch("linalg_jacobi.cu", "onesided_jacobi", ONESIDED_FMT, self, count, threads, smem, G.data_ptr(),
            GJ.data_ptr(), J.data_ptr(), 0 if work is None else work.data_ptr(), m, n, g_shared, j_shared,
            max(m, 1) * float(finfo(self.dtype).eps))
    return GJ, J


@kernel("CUDA")
def _linalg_householder_qr(self, complete=False, compute_q=True):
    if self.dtype.is_complex:
        return on_host("_linalg_householder_qr", self, complete, compute_q)
    check_matrices("_linalg_householder_qr", self)
    m, n = self.shape[-2], self.shape[-1]
    k = min(m, n)
    rrows = m if complete else k
    qcols = (m if complete else k) if compute_q else 0
    batch, count = _batch(self)
    if count and k and k >= blocked.BLOCKED_MIN_K:  # (a module knob: tests force either path)
        return blocked.blocked_householder_qr(self, complete, compute_q)
    Q = new_output((*batch, m, qcols), self.dtype, self.device)
    R = new_output((*batch, rrows, n), self.dtype, self.device)
    if count == 0 or (Q.numel() == 0 and R.numel() == 0):  # (n == 0 with a complete Q still builds Q = I)
        return Q, R
    A = self.contiguous()
    item = self.dtype.itemsize
    (w_shared, q_shared), smem = _place("_linalg_householder_qr", _smem_budget(self.device.index), k * item,
                                        m * n * item, m * qcols * item)
    stride = (0 if w_shared else m * n) + (0 if q_shared else m * qcols)
    work = new_output((count, stride), self.dtype, self.device) if stride else None
    threads = 32 * _warps(max(2, n, qcols, m // 256))
    _launch("linalg_householder.cu", "householder_qr", QR_FMT, self, count, threads, smem, A.data_ptr(),
            Q.data_ptr() if qcols else 0, R.data_ptr(), 0 if work is None else work.data_ptr(), m, n, qcols,
            rrows, w_shared, q_shared, stride)
    return Q, R
