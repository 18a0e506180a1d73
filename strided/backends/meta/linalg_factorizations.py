"""Argument checks and output shapes of strided's linear-algebra kernel ops (``_linalg_tri_solve``,
``_linalg_cholesky_lower``, ``_linalg_lu_factor``, ``_linalg_symmetric_jacobi``, ``_linalg_onesided_jacobi``,
``_linalg_householder_qr``), shared by their composite kernels (ops/composite/linalg_*.py) and the CUDA ones
(backends/cuda/kernels/linalg_*_ops.py), so every backend refuses the same input with the same words.

These ops are the seam of Note [Linear-algebra kernels] (ops/composite/linalg_solvers.py): strided.linalg
checks its public arguments in torch's words first, so these checks only catch direct calls of the ops.
"""

from __future__ import annotations

from ... import dtypes as dt
from ...dispatch.library import kernel
from .common import check, new_output

__all__ = ["check_geqrf", "check_matrices", "LINALG_DTYPES"]  # and the Meta kernels below

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


# -- Meta kernels of the orthogonal factorizations: the outputs' shapes for real and complex input alike (the
# composites these replace on Meta are real; Note [Complex linear algebra on the CPU] in linalg/_common.py)
def _outputs(self, *shapes, real_first: bool = False) -> tuple:
    dtypes = [self.dtype.to_real() if real_first and i == 0 else self.dtype for i in range(len(shapes))]
    return tuple(new_output(s, d, self.device) for s, d in zip(shapes, dtypes))


@kernel("Meta")
def _linalg_symmetric_jacobi(self):
    check_matrices("_linalg_symmetric_jacobi", self, square=True, complex_ok=True)
    *batch, n = self.shape[:-1]
    return _outputs(self, (*batch, n), (*batch, n, n), real_first=True)  # real eigenvalues


@kernel("Meta")
def _linalg_onesided_jacobi(self):
    check_matrices("_linalg_onesided_jacobi", self, complex_ok=True)
    *batch, m, n = self.shape
    return _outputs(self, (*batch, m, n), (*batch, n, n))


@kernel("Meta")
def _linalg_householder_qr(self, complete=False, compute_q=True):
    check_matrices("_linalg_householder_qr", self, complex_ok=True)
    *batch, m, n = self.shape
    k = min(m, n)
    qcols = (m if complete else k) if compute_q else 0
    return _outputs(self, (*batch, m, qcols), (*batch, m if complete else k, n))


@kernel("Meta")
def geqrf(self):
    from ... import return_types

    check_geqrf(self, complex_ok=True)
    *batch, m, n = self.shape
    return return_types.geqrf(_outputs(self, (*batch, m, n), (*batch, min(m, n))))
