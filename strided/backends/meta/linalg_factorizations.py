"""Argument checks and output shapes of strided's linear-algebra kernel ops (``_linalg_tri_solve``,
``_linalg_cholesky_lower``, ``_linalg_lu_factor``, ``_linalg_symmetric_jacobi``, ``_linalg_onesided_jacobi``,
``_linalg_householder_qr``), shared by their composite kernels (ops/composite/linalg_*.py) and the CUDA ones
(backends/cuda/kernels/linalg_*_ops.py), so every backend refuses the same input with the same words.

These ops are the seam of Note [Linear-algebra kernels] (ops/composite/linalg_solvers.py): strided.linalg
checks its public arguments in torch's words first, so these checks only catch direct calls of the ops.
"""

from __future__ import annotations

from ... import dtypes as dt
from .common import check

__all__ = ["check_geqrf", "check_matrices", "LINALG_DTYPES"]

LINALG_DTYPES = (dt.float32, dt.float64)
COMPLEX_LINALG_DTYPES = (dt.float32, dt.float64, dt.complex64, dt.complex128)


def check_geqrf(self, complex_ok: bool = False) -> None:
    """torch's checks of ``geqrf``: a matrix (batch), float32 / float64, and complex where the caller's kernel
    handles it (the CPU's LAPACK; the CUDA kernel is real, Note [Complex operators])."""
    check(self.dim() >= 2, lambda: "torch.geqrf: input must have at least 2 dimensions.")
    if self.dtype not in (COMPLEX_LINALG_DTYPES if complex_ok else LINALG_DTYPES):
        from .reductions import type_name

        raise NotImplementedError(f'"geqrf_{self.device.type}" not implemented for \'{type_name(self.dtype)}\'')


def check_matrices(op: str, *tensors, square: bool = False, complex_ok: bool = False) -> None:
    """Each tensor: at least 2 dims, float32 / float64 (or complex with ``complex_ok``), all of one dtype and
    device; square when asked."""
    first = tensors[0]
    dtypes = COMPLEX_LINALG_DTYPES if complex_ok else LINALG_DTYPES
    for name, t in zip(("A", "B"), tensors):
        check(t.dim() >= 2, lambda t=t, name=name: f"{op}: The input tensor {name} must have at least 2 "
                                                   f"dimensions, but got {t.dim()}")
        check(t.dtype in dtypes, lambda t=t: f"{op}: expected a float32 or float64 tensor, got {t.dtype}")
        check(t.dtype is first.dtype, lambda t=t: f"{op}: expected tensors of one dtype, got {first.dtype} and "
                                                   f"{t.dtype}")
        check(t.device == first.device, lambda t=t: f"{op}: expected tensors on one device, got {first.device} "
                                                     f"and {t.device}")
    if square:
        check(first.shape[-1] == first.shape[-2],
              lambda: f"{op}: A must be batches of square matrices, but they are {first.shape[-2]} by "
                      f"{first.shape[-1]} matrices")
