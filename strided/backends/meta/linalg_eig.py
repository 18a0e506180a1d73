"""Meta functions of ``linalg_eig`` and ``_linalg_eigvals``: torch's checks, in torch's order and words, and the
outputs every backend allocates (Note [eig outputs]).

Note [eig outputs]
The eigenvalues and eigenvectors of a real or complex matrix are complex: complex64 for float32 and complex64
input, complex128 for float64 and complex128 (torch's ``toComplexType``, which refuses integer and bool input
with "Unknown Complex ScalarType for Long" before any shape check). The eigenvectors have LAPACK's column-major
layout within each matrix (strides (1, n): a column is contiguous), as torch's CPU and CUDA results.
"""

from __future__ import annotations

from ... import dtypes as dt
from ...dispatch.library import kernel
from ...tensor import contiguous_strides
from .common import check, new_output
from .reductions import type_name

__all__ = ["check_eig", "eig_dtype", "eig_outputs"]

_KERNEL_DTYPES = (dt.float32, dt.float64, dt.complex64, dt.complex128)


def eig_dtype(d: dt.dtype) -> dt.dtype:
    """torch's ``toComplexType`` for eig's results."""
    check(d.is_floating_point or d.is_complex, lambda: f"Unknown Complex ScalarType for {type_name(d)}")
    return d if d.is_complex else d.to_complex()


def check_eig(op: str, A) -> dt.dtype:
    """torch's checks of ``linalg.eig`` / ``linalg.eigvals`` (``op``); returns the results' dtype."""
    check(A.dtype.is_floating_point or A.dtype.is_complex,
          lambda: f"Unknown Complex ScalarType for {type_name(A.dtype)}")
    check(A.dim() >= 2, lambda: f"{op}: The input tensor A must have at least 2 dimensions.")
    check(A.shape[-1] == A.shape[-2],
          lambda: f"{op}: A must be batches of square matrices, but they are {A.shape[-2]} by {A.shape[-1]} matrices")
    if A.dtype not in _KERNEL_DTYPES:  # float16 / bfloat16: LAPACK has no such routine
        raise NotImplementedError(f'"linalg_eig_out_{A.device.type}" not implemented for \'{type_name(A.dtype)}\'')
    return eig_dtype(A.dtype)


def eig_outputs(A, dtype: dt.dtype, vectors: bool = True):
    """The (*, n) eigenvalues and, with ``vectors``, the (*, n, n) column-major eigenvectors (Note [eig outputs])."""
    shape = tuple(A.shape)
    w = new_output(shape[:-1], dtype, A.device)
    if not vectors:
        return w
    n = shape[-1]
    strides = (*contiguous_strides(shape)[:-2], 1, max(n, 1))
    return w, new_output(shape, dtype, A.device, strides)


@kernel("Meta")
def linalg_eig(self):
    return eig_outputs(self, check_eig("linalg.eig", self))


@kernel("Meta")
def _linalg_eigvals(self):
    return eig_outputs(self, check_eig("linalg.eigvals", self), vectors=False)
