"""CUDA kernel of ``_linalg_lu_factor`` (``linalg_lu.cu``): LU with partial pivoting in LAPACK getrf's
conventions, the contract of the composite ``lu_factor_core`` (ops/composite/linalg_solvers.py).

Note [Fused LU]
The composite (Note [Recursive LU]) spends ten ops on every column; here a matrix costs one launch when it is
small and two per 32 columns when it is not.

- Small matrices (``min(m, n) <= WHOLE_MAX_K`` and the padded matrix within ``WHOLE_MAX_BYTES`` of shared
  memory): ``lu_panel`` with the whole matrix as its panel -- one block per matrix copies it to shared memory
  (column-major, odd column stride), runs getf2's column loop there and writes it back. A batch of small
  matrices is one launch, a block per matrix.
- Otherwise blocked right-looking, panels of ``NB`` = 32 columns (the last one narrower). For the panel at
  column j0, ``lu_panel`` (one block per matrix) factors the (m - j0) x w panel -- in shared memory when it
  fits the device's opt-in limit (about 880 rows in float64, 1770 in float32 on an H100), else in place in
  global memory (slower, any height) -- swapping the two rows of every step in all n columns (so no separate
  laswp), then solves U12 = L11^-1 A12 for every column right of the panel (a thread per column, forward
  substitution in registers, L11 copied zero-padded to shared memory; Note [Register-resident solve] in the
  .cu). ``lu_update`` then subtracts L21 U12 from the trailing matrix in place: a 64 x 64 output tile per
  block, all tiles of all matrices in one launch. A rank-32 update is bandwidth-bound, and cuBLASLt writes
  only contiguous outputs (a GEMM into a temporary plus a copy back would move the trailing matrix twice as
  often and cost two dispatches per panel), so the update is a kernel of its own; for n in the thousands a
  cuBLASLt update of wider panels would win (not done: the targets are n <= 512 and batches).

``PANEL_SMEM_LIMIT`` and ``WHOLE_MAX_K`` are module knobs so that tests can force every path on small sizes.

The column loop of a step: a block-wide argmax of |column| at and below the diagonal (NaN counts as the
largest, as argmax; ties go to the first row, as idamax), the row swap (and the ``perm`` entries; ``pivots``
records the row), division of the column below the diagonal by the pivot unless it is exactly zero (getf2
leaves such a column unscaled, so an all-zero column gives no 0 / 0 and the factorization goes on), and the
rank-1 update of the panel's columns to the right. ``info`` is the first step whose pivot is exactly zero,
which is U's diagonal entry. ``pivot=False`` skips the search and swaps. Every loop is bounded by the sizes,
so NaN / inf input terminates (and propagates).
"""

from __future__ import annotations

import math
from functools import cache

from .... import dtypes as dt
from ....dispatch.library import kernel
from ....ops import bound as ops
from ...meta.common import new_output
from ...meta.linalg_factorizations import check_matrices
from .. import driver
from ..launch import get_kernel
from ..reduction import kernel_source
from ..streams import current_stream_handle
from . import CTYPES, copy_kernel
from .linalg_complex import on_device

__all__ = ["lu_sources", "NB", "WHOLE_MAX_K", "WHOLE_MAX_BYTES"]

PANEL_FMT = "<QQQQqqqqqqqqq"
UPDATE_FMT = "<Qqqqqqqq"
NB = 32  # LU_NB in linalg_lu.cu: the blocked panel's width
TILE = 64  # LU_TILE: lu_update's output tile
UPDATE_THREADS = 256
MAX_PANEL_THREADS = 512  # LU_PANEL_THREADS (the kernel's launch bound)
MAX_GRID = 1 << 20  # blocks of one launch; the kernels loop over the rest
WHOLE_MAX_K = 64  # the whole-matrix path: min(m, n) at most this ...
WHOLE_MAX_BYTES = 48 << 10  # ... and the padded matrix within this much shared memory
STATIC_SMEM = 1024  # lu_panel's static shared memory (its reduction scratch), rounded up
PANEL_SMEM_LIMIT: int | None = None  # shared bytes a blocked panel may use; None: the device's opt-in limit


@cache
def _source(name: str) -> str:
    return kernel_source("linalg_lu.cu", SCALAR_T=CTYPES[name], ACC_T=CTYPES[name])


def lu_sources():
    """(file, kernel names, source) of every linalg_lu.cu instantiation (NVRTC null test)."""
    for name in ("float32", "float64"):
        yield "linalg_lu.cu", ("lu_panel", "lu_update"), _source(name)


@cache
def _optin_smem(dev: int) -> int:
    return driver.attribute("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", dev) - STATIC_SMEM


def _panel_smem_limit(dev: int) -> int:
    return _optin_smem(dev) if PANEL_SMEM_LIMIT is None else PANEL_SMEM_LIMIT


def _panel_threads(rows: int, width: int) -> int:
    """A power of two in [64, 512], about one thread per four panel elements."""
    want, threads = rows * width // 4, 64
    while threads < want and threads < MAX_PANEL_THREADS:
        threads *= 2
    return threads


def _factor(LU, pivots, perm, info, count: int, m: int, n: int, k: int, pivot: int) -> None:
    """Factor the contiguous (count, m, n) ``LU`` in place, filling ``pivots``, ``perm`` and ``info``."""
    dev = LU.device.index
    stream = current_stream_handle(dev)
    src = _source(LU.dtype.name)
    size = LU.dtype.itemsize
    panel = get_kernel(src, "lu_panel", PANEL_FMT, dev)
    head = (LU.data_ptr(), pivots.data_ptr(), perm.data_ptr(), info.data_ptr(), count, m, n, k)
    grid = min(count, MAX_GRID)
    whole = (m | 1) * n * size  # the shared copy's column stride is odd (m | 1)
    if k <= WHOLE_MAX_K and whole <= WHOLE_MAX_BYTES:
        panel.launch_smem(grid, _panel_threads(m, n), whole, stream, *head, 0, k, n, pivot, 1)
        return
    limit = _panel_smem_limit(dev)
    update = get_kernel(src, "lu_update", UPDATE_FMT, dev)
    for j0 in range(0, k, NB):
        w = min(NB, k - j0)
        rows = m - j0
        solve = NB * NB * size if j0 + w < n else 0  # L11's padded copy, when there are columns to solve
        panel_bytes = (rows | 1) * w * size
        in_shared = panel_bytes + solve <= limit
        smem = (panel_bytes if in_shared else 0) + solve
        panel.launch_smem(grid, _panel_threads(rows, w), smem, stream, *head, j0, w, w, pivot, int(in_shared))
        tiles_m, tiles_n = -(-(rows - w) // TILE), -(-(n - j0 - w) // TILE)
        if tiles_m and tiles_n:
            update(min(count * tiles_m * tiles_n, MAX_GRID), UPDATE_THREADS, stream, LU.data_ptr(), count, m, n,
                   j0, w, tiles_m, tiles_n)


def _empty(A, batch: tuple, m: int, n: int, k: int) -> tuple:
    """The composite's results when there is nothing to factor (no launch)."""
    device = A.device
    pivots = ops.arange(1, k + 1, dtype=dt.int32, device=device).expand(*batch, k).contiguous()
    perm = ops.arange(0, m, dtype=dt.int64, device=device).expand(*batch, m).contiguous()
    return new_output((*batch, m, n), A.dtype, device), pivots, perm, ops.zeros(batch, dtype=dt.int32, device=device)


@kernel("CUDA")
def _linalg_lu_factor(self, pivot=True):
    if self.dtype.is_complex:  # Note [Complex linear algebra on CUDA]
        return on_device("_linalg_lu_factor", self, pivot)
    check_matrices("_linalg_lu_factor", self)
    batch = tuple(self.shape[:-2])
    m, n = self.shape[-2], self.shape[-1]
    k = min(m, n)
    count = math.prod(batch)
    if count == 0 or k == 0:
        return _empty(self, batch, m, n, k)
    device = self.device
    dev = device.index
    LU = new_output((*batch, m, n), self.dtype, device)  # the factorization's buffer: a contiguous copy of A
    copy_kernel(dev, self.dtype, self.dtype, LU.data_ptr(), self.data_ptr(), LU._sizes, LU._strides, self._strides,
                current_stream_handle(dev))
    pivots = new_output((*batch, k), dt.int32, device)
    perm = new_output((*batch, m), dt.int64, device)
    info = new_output(batch, dt.int32, device)
    _factor(LU, pivots, perm, info, count, m, n, k, int(bool(pivot)))
    return LU, pivots, perm, info
