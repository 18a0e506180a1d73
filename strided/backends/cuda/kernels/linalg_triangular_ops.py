"""CUDA kernels of ``_linalg_tri_solve`` and ``_linalg_cholesky_lower`` (``linalg_triangular.cu``), the fused
forms of the composite kernels of Note [Linear-algebra kernels] (ops/composite/linalg_solvers.py), whose
contracts they keep.

Note [Fused triangular kernels]
The composites take several launches per column; here a launch handles a whole diagonal block of NB = 64
rows and cuBLASLt does the rest, as MAGMA's blocked trsm / potrf do:

* ``_linalg_tri_solve``, left-looking block substitution: for each diagonal block in order (the reverse for
  an upper A), ``sub = A[blk, done] @ X[done]`` (one ``bmm``, absent for the first block) and one
  ``trsm_block`` launch ``X[blk] = A[blk, blk]^-1 (B[blk] - sub)``. ``trsm_block`` puts the diagonal block in
  shared memory and gives each right-hand-side column to one warp, lane l holding row l (and l + 32):
  step j broadcasts x_j by a shuffle and every lane updates its rows (a rolled loop; fully unrolled
  per-thread substitutions kept x in registers too, but took NVRTC ~8 s per dtype). An upper block is the
  lower one with rows and columns reversed, so one substitution serves both. Batch dims broadcast by
  stride-0 views (expand + reshape, a copy only where the batch dims cannot merge); B is read in place
  and X is the only output written. n <= 64 is one launch (tile 32 for n <= 32); above, ceil(n / 64)
  launches and one fewer ``bmm``.
* ``_linalg_cholesky_lower``, right-looking: step r0 = 0, 64, ... factors the 64 x 64 diagonal block of the
  trailing matrix S in shared memory (``chol_block``, one thread block per matrix: one barrier per
  column, the column scaling deferred to the end), writes it into L with the zeros right of it and
  ``info``; the panel L21 = S21 L11^-T is ``trsm_block`` on transposed views (S21's rows are the
  right-hand sides, read coalesced by their warp); the next trailing matrix is
  ``baddbmm(S22, L21, L21^T, alpha=-1)``, a new contiguous tensor (the upper triangles of S carry
  whatever A's held there and are never read). n <= 64 is one launch; above, three calls per step.
  ``info`` is potrf's: the first pivot that is not > 0 (NaN included), found by the step whose block holds
  it (r0 + its position); a failed pivot's column of L is NaN, so later blocks may fail too, but a step
  after the first writes ``info`` only where it is still 0. What L holds past a failure is unspecified.

So a factorization costs O(n / 64) calls (each ~10-20 us of host time) instead of O(n) column steps.
Every kernel loops over its work units (grid-stride, uniform per block, so the barriers are reached by
all threads), every loop is bounded by the sizes (NaN changes no trip count), and indices are 64-bit.
The GEMMs run in full float32 even where the user allowed TF32 for matmuls (``_full_fp32``): a
factorization's accuracy must not depend on that switch, as cuSOLVER's does not. The scope is per thread
(Note [Full float32 scopes] in backends/cuda/matmul.py): other threads' matmuls keep their precision.
"""

from __future__ import annotations

import math
from contextlib import nullcontext
from functools import cache

from .... import dtypes as dt
from ....dispatch.library import kernel
from ....ops import bound as ops
from ...meta.common import broadcast_shapes, check, new_output
from ...meta.linalg_factorizations import check_matrices
from ..launch import get_kernel
from ..matmul import full_float32_matmuls
from ..reduction import kernel_source
from ..streams import current_stream_handle
from . import CTYPES
from .linalg_complex import on_device

__all__ = ["linalg_triangular_sources", "NB"]

NB = 64  # the diagonal block of the blocked solve and factorization
TRSM_FMT = "<QqqqQqqqQQqqqqqqqqq"  # TrsmArgs
CHOL_FMT = "<QqqqQqQqqq"  # CholArgs
TRSM_WARPS = 8  # right-hand-side columns per trsm_block work unit (one warp each)
CHOL_THREADS = 4 * NB  # chol_block's block: a multiple of NB (its thread layout)
MAX_GRID = 1 << 20  # larger launches loop over their work units
KERNELS = ("trsm_block_32", "trsm_block_64", "chol_block_64")


@cache
def _source(dtype_name: str) -> str:
    return kernel_source("linalg_triangular.cu", SCALAR_T=CTYPES[dtype_name])


def linalg_triangular_sources():
    """(file, kernel names, source) of every linalg_triangular.cu instantiation (NVRTC null test)."""
    for name in ("float32", "float64"):
        yield "linalg_triangular.cu", KERNELS, _source(name)


def _launch(like, name: str, fmt: str, units: int, threads: int, *values) -> None:
    dev = like.device.index
    k = get_kernel(_source(like.dtype.name), name, fmt, dev)
    k(min(units, MAX_GRID), threads, current_stream_handle(dev), *values)


def _trsm(tri, rhs, sub, out, upper: bool, unit: bool) -> None:
    """``out = tri^-1 (rhs - sub)``: tri (count, h, h) triangular, h <= NB; rhs and out (count, h, k), all
    strided views (of one dtype and device); sub None or contiguous (count, h, k)."""
    count, h, k = out.shape
    warps = min(TRSM_WARPS, k)
    col_blocks = -(-k // warps)
    name = "trsm_block_32" if h <= 32 else "trsm_block_64"
    _launch(tri, name, TRSM_FMT, count * col_blocks, 32 * warps,
            tri.data_ptr(), *tri.stride(), rhs.data_ptr(), *rhs.stride(), 0 if sub is None else sub.data_ptr(),
            out.data_ptr(), *out.stride(), count, h, k, col_blocks, int(upper), int(unit))


def _full_fp32(dtype):
    """float32 GEMMs without TF32 inside the block (Note [Fused triangular kernels])."""
    return full_float32_matmuls() if dtype is dt.float32 else nullcontext()


def _as_batch(t, batch: tuple, rows: int, cols: int, count: int):
    """``t`` broadcast to ``(*batch, rows, cols)`` as a 3-D (count, rows, cols) tensor: a view (batch stride
    0 where broadcast) unless the batch dims cannot merge."""
    return t.expand(*batch, rows, cols).reshape(count, rows, cols)


@kernel("CUDA")
def _linalg_tri_solve(A, B, upper, unitriangular=False):
    if A.dtype.is_complex or B.dtype.is_complex:  # Note [Complex linear algebra on CUDA]
        return on_device("_linalg_tri_solve", A, B, upper, unitriangular)
    check_matrices("_linalg_tri_solve", A, B)
    check(A.shape[-1] == A.shape[-2] and B.shape[-2] == A.shape[-1],
          lambda: f"_linalg_tri_solve: expected A (*, n, n) and B (*, n, k), got {list(A.shape)} and {list(B.shape)}")
    n, k = A.shape[-1], B.shape[-1]
    batch = broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2]))
    X = new_output((*batch, n, k), A.dtype, A.device)
    if X.numel() == 0:
        return X
    count = math.prod(batch)
    A3, B3 = _as_batch(A, batch, n, n, count), _as_batch(B, batch, n, k, count)
    X3 = X.view(count, n, k)
    starts = range(0, n, NB)
    with _full_fp32(A.dtype):
        for r0 in reversed(starts) if upper else starts:
            r1 = min(n, r0 + NB)
            sub = None  # the solved rows' part of this block's right-hand side
            if upper and r1 < n:
                sub = ops.bmm(A3[:, r0:r1, r1:], X3[:, r1:, :])
            elif not upper and r0 > 0:
                sub = ops.bmm(A3[:, r0:r1, :r0], X3[:, :r0, :])
            _trsm(A3[:, r0:r1, r0:r1], B3[:, r0:r1, :], sub, X3[:, r0:r1, :], upper, unitriangular)
    return X


@kernel("CUDA")
def _linalg_cholesky_lower(self):
    if self.dtype.is_complex:
        return on_device("_linalg_cholesky_lower", self)
    check_matrices("_linalg_cholesky_lower", self, square=True)
    batch, n = tuple(self.shape[:-2]), self.shape[-1]
    L = new_output(tuple(self.shape), self.dtype, self.device)
    if L.numel() == 0:
        return L, ops.zeros(batch, dtype=dt.int32, device=self.device)
    info = new_output(batch, dt.int32, self.device)
    count = math.prod(batch)
    S = self.reshape(count, n, n)  # the trailing matrix of the step
    L3 = L.view(count, n, n)
    with _full_fp32(self.dtype):
        for r0 in range(0, n, NB):
            m = n - r0
            _launch(self, "chol_block_64", CHOL_FMT, count, CHOL_THREADS,
                    S.data_ptr(), *S.stride(), L.data_ptr(), n, info.data_ptr(), count, min(NB, m), r0)
            if m > NB:
                L21 = L3[:, r0 + NB:, r0:r0 + NB]
                _trsm(L3[:, r0:r0 + NB, r0:r0 + NB], S[:, NB:, :NB].mT, None, L21.mT, False, False)
                S = ops.baddbmm(S[:, NB:, NB:], L21, L21.mT, alpha=-1)
    return L, info

