"""The blocked Householder QR of ``_linalg_householder_qr`` on CUDA for large matrices: LAPACK's geqrf + orgqr,
with ``householder_panel`` (linalg_householder.cu) for the panels and cuBLASLt GEMMs through strided's ops
between them. ``_linalg_householder_qr`` (linalg_orthogonal_ops.py) calls it when min(m, n) >= ``BLOCKED_MIN_K``;
the contract is the composite's (ops/composite/linalg_householder.py).

Note [Blocked Householder QR]
The fused kernel (Note [Fused Householder QR]) gives a matrix one thread block: one SM, and trailing updates that
are matrix-vector products. Here the flops go to GEMMs, as geqrf / orgqr do it:

* Scale: ``top = amax(|A|)`` per matrix (the reduction engine), then ``householder_scale`` writes the working
  matrix S = A 2^-e (e = frexp's exponent of top, as the fused kernel; exact) -- no host read. A NaN in A makes
  top NaN and e = 0 (unscaled: NaN propagates anyway).
* geqrf, a panel of w = min(NB, k - r0) columns at r0 = 0, NB, ...: ``householder_panel`` (one block per matrix)
  factors the (m - r0) x w panel with geqr2's column loop and dlarfg's exact conventions (the fused kernel's), and
  writes R's rows r0 .. r0 + w - 1 up to the panel's last column (0 left of the diagonal, scaled back by 2^e), V
  (unit diagonal, 0 above) into ``Vt``, tau, and T (larft, forward / columnwise: H_r0 ... H_{r0+w-1} = I - V T
  V^T; a column with tau = 0 is 0). Then the trailing matrix Y = S[r0:, r0 + w:] becomes
  ``G = baddbmm(Y, V, bmm(T^T, bmm(V^T, Y)), alpha=-1)`` = H^T Y: three GEMMs, batched over the matrices, in full
  float32 (``full_float32_matmuls``: no TF32, as the triangular kernels). G is a fresh contiguous tensor (cuBLASLt
  writes only those): its first w rows are R's rows right of the panel, the rest is the next panel's working
  matrix. The next panel launch copies those R rows (scaled back) before it factors, so a panel costs four
  launches and no copies of its own; after the last panel of a wide matrix a launch with w = 0 copies them.
* orgqr backwards from Q = I (m x k reduced, m x m complete): ``Q[r0:, r0:] -= V (T (V^T Q[r0:, r0:]))`` for the
  panels in reverse (the columns left of r0 are still e_c there, which H does not change): three ``bmm`` and a
  direct in-place ``sub_``.
So Q and R are the fused kernel's (and LAPACK's) up to rounding, signs included.

Layout: ``Vt`` is (count, k, m) with Vt[c][i] = V[i][c], so a panel's V^T is the row-major view Vt[:, r0:r0+w,
r0:] and V its ``.mT``; ``T`` is (count, k, NB) with the panel's T in rows r0 .. r0 + w - 1 -- cuBLASLt reads all of
them in place. The panel works column-major in dynamic shared memory when (m - r0) w elements fit the device's
opt-in limit (less the kernel's static ``PANEL_STATIC_SMEM``: about 1600 rows in float32, 800 in float64 on an
H100), else in place in its V block (L1 / L2). NB = 32: the kernel gives a panel column to each lane of a warp (its
Gram rows are one warp-transposing reduction), a panel of any height keeps one pass over its rows per column,
and narrower panels would double the launches per column while wider ones double the panel's single-SM traffic.
Per panel the host does four (geqrf) and four (orgqr) dispatches, no syncs; Vt, T and tau are allocated once.

The fused kernel stays for min(m, n) < ``BLOCKED_MIN_K`` (a handful of columns: one launch beats the blocked
path's 8 k / NB + 5), batches of such matrices included. ``PANEL_SMEM_LIMIT`` and ``BLOCKED_MIN_K`` are module
knobs so that tests can force every path.
"""

from __future__ import annotations

import math
from contextlib import nullcontext
from functools import cache

from .... import dtypes as dt
from ....ops import bound as ops
from ...meta.common import new_output
from ..launch import get_kernel
from ..matmul import full_float32_matmuls
from ..reduction import kernel_source
from ..streams import current_stream_handle
from . import CTYPES

__all__ = ["blocked_householder_qr", "householder_source", "NB", "BLOCKED_MIN_K", "PANEL_FMT", "SCALE_FMT"]

NB = 32  # HQR_NB: the panel's width
BLOCKED_MIN_K = 128  # min(m, n) from which _linalg_householder_qr takes this path
PANEL_FMT = "<QQQQQQQqqqqqqqqqqqqq"  # HouseholderPanelArgs
SCALE_FMT = "<QQQqqqqqq"  # HouseholderScaleArgs
PANEL_THREADS = 512  # HQR_PANEL_THREADS (the panel's launch bound)
SCALE_THREADS = 256
MAX_GRID = 1 << 20  # blocks of one launch; the kernels loop over the rest
PANEL_STATIC_SMEM = 24 << 10  # the panel's static shared memory (21760 bytes in float64), rounded up
PANEL_SMEM_LIMIT: int | None = None  # dynamic shared bytes a panel may use; None: the device's opt-in limit


@cache
def householder_source(dtype_name: str) -> str:
    """linalg_householder.cu for ``dtype_name`` (float32 / float64): one module for the fused and blocked paths."""
    return kernel_source("linalg_householder.cu", SCALAR_T=CTYPES[dtype_name])


@cache
def _optin_smem(dev: int) -> int:
    from ..driver import attribute

    return attribute("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", dev) - PANEL_STATIC_SMEM


def _panel_threads(rows: int) -> int:
    """A power of two in [64, 512], about one thread per four rows."""
    return min(PANEL_THREADS, max(64, 1 << max(0, (rows - 1).bit_length() - 2)))


def _launch(like, name: str, fmt: str, blocks: int, threads: int, smem: int, *values) -> None:
    dev = like.device.index
    k = get_kernel(householder_source(like.dtype.name), name, fmt, dev)
    k.launch_smem(blocks, threads, smem, current_stream_handle(dev), *values)


def _full_fp32(dtype):
    """float32 GEMMs without TF32 inside the block (Note [Blocked Householder QR])."""
    return full_float32_matmuls() if dtype is dt.float32 else nullcontext()


def blocked_householder_qr(A, complete: bool, compute_q: bool):
    """``(Q, R)`` of ``A (*, m, n)`` by the blocked algorithm (Note [Blocked Householder QR]), in
    ``_linalg_householder_qr``'s shapes: Q (*, m, 0) unless ``compute_q``. A holds at least one matrix and
    min(m, n) >= 1."""
    batch, (m, n) = tuple(A.shape[:-2]), tuple(A.shape[-2:])
    count, k = math.prod(batch), min(m, n)
    rrows = m if complete else k
    dtype, device = A.dtype, A.device
    item = dtype.itemsize
    A3 = A.reshape(count, m, n)
    top = ops.amax(ops.abs(A3), [-2, -1])
    S = new_output((count, m, n), dtype, device)
    _launch(A, "householder_scale", SCALE_FMT, min(-(-count * m * n // SCALE_THREADS), MAX_GRID), SCALE_THREADS, 0,
            A3.data_ptr(), S.data_ptr(), top.data_ptr(), count, m, n, *A3.stride())
    R = new_output((*batch, rrows, n), dtype, device)
    Vt = new_output((count, k, m), dtype, device)
    T = new_output((count, k, NB), dtype, device)
    tau = new_output((count, k), dtype, device)
    head = (R.data_ptr(), Vt.data_ptr(), T.data_ptr(), tau.data_ptr(), top.data_ptr(), count, m, n, k, rrows)
    limit = _optin_smem(device.index) if PANEL_SMEM_LIMIT is None else PANEL_SMEM_LIMIT
    grid = min(count, MAX_GRID)
    G, g_rows = S, 0  # the working matrix: its first g_rows rows are the previous panel's R rows
    with _full_fp32(dtype):
        for r0 in range(0, k, NB):
            w, rows = min(NB, k - r0), m - r0
            smem = rows * w * item
            in_shared = smem <= limit
            gb, gr = G.stride()[:2]
            _launch(A, "householder_panel", PANEL_FMT, grid, _panel_threads(rows), smem if in_shared else 0,
                    G.data_ptr() + g_rows * gr * item, G.data_ptr(), *head, gb, gr, gb, gr, g_rows, r0, w,
                    int(in_shared))
            if r0 + w < n:
                Vh = Vt[:, r0:r0 + w, r0:]  # V^T
                Y = G[:, g_rows:, w:]
                G, g_rows = ops.baddbmm(Y, Vh.mT, ops.bmm(T[:, r0:r0 + w, :w].mT, ops.bmm(Vh, Y)), alpha=-1), w
        if k < n:  # a wide matrix: R's rows of the last panel right of it
            gb, gr = G.stride()[:2]
            _launch(A, "householder_panel", PANEL_FMT, grid, 64, 0, G.data_ptr(), G.data_ptr(), *head, gb, gr, gb,
                    gr, g_rows, k, 0, 0)
        if not compute_q:
            return new_output((*batch, m, 0), dtype, device), R
        qcols = m if complete else k
        Q = ops.eye(m, qcols, dtype=dtype, device=device).expand(count, m, qcols).contiguous()
        for r0 in reversed(range(0, k, NB)):
            w = min(NB, k - r0)
            Vh = Vt[:, r0:r0 + w, r0:]
            Qs = Q[:, r0:, r0:]
            ops.sub_(Qs, ops.bmm(Vh.mT, ops.bmm(T[:, r0:r0 + w, :w], ops.bmm(Vh, Qs))))
    return Q.view(*batch, m, qcols), R
