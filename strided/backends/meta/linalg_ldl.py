"""Meta functions of ``linalg_ldl_factor_ex`` and ``linalg_ldl_solve``: torch's checks, in torch's order and words,
and the outputs every backend allocates: LAPACK's column-major layout within each matrix (strides (1, n)), as
torch's LD and solutions; int32 pivots and info."""

from __future__ import annotations

from ... import dtypes as dt
from ...dispatch.library import kernel
from ...tensor import contiguous_strides
from .common import check, new_output
from .reductions import type_name

__all__ = ["check_ldl_factor", "ldl_factor_outputs", "check_ldl_solve", "ldl_solve_output"]

_KERNEL_DTYPES = (dt.float32, dt.float64, dt.complex64, dt.complex128)


def _column_major(shape, dtype, device):
    n = shape[-2] if len(shape) >= 2 else 1
    strides = (*contiguous_strides(shape)[:-2], 1, max(n, 1))
    return new_output(shape, dtype, device, strides)


def _kernel_dtype(kernel: str, A) -> None:
    """float32, float64, complex64 and complex128, as LAPACK's; half types get torch's dispatch error."""
    if A.dtype not in _KERNEL_DTYPES:
        raise NotImplementedError(f'"{kernel}_{A.device.type}" not implemented for \'{type_name(A.dtype)}\'')


def check_ldl_factor(A) -> None:
    """torch's checks of ``linalg.ldl_factor(_ex)``."""
    op = "torch.linalg.ldl_factor_ex"
    check(A.dim() >= 2, lambda: f"{op}: The input tensor A must have at least 2 dimensions.")
    check(A.shape[-1] == A.shape[-2],
          lambda: f"{op}: A must be batches of square matrices, but they are {A.shape[-2]} by {A.shape[-1]} matrices")
    check(A.dtype.is_floating_point or A.dtype.is_complex,
          lambda: f"{op}: Expected a floating point or complex tensor as input. Got {type_name(A.dtype)}")
    _kernel_dtype("ldl_factor_kernel", A)


def ldl_factor_outputs(A):
    """(LD (*, n, n) column-major, pivots (*, n) int32, info (*) int32)."""
    shape = tuple(A.shape)
    return (_column_major(shape, A.dtype, A.device), new_output(shape[:-1], dt.int32, A.device),
            new_output(shape[:-2], dt.int32, A.device))


def check_ldl_solve(LD, pivots, B) -> tuple:
    """torch's checks of ``linalg.ldl_solve``; returns the solution's shape (batch dimensions broadcast)."""
    op = "torch.linalg.ldl_solve"
    check(LD.dim() >= 2, lambda: f"{op}: The input tensor LD must have at least 2 dimensions.")
    check(LD.shape[-1] == LD.shape[-2], lambda: f"{op}: LD must be batches of square matrices, but they are "
                                               f"{LD.shape[-2]} by {LD.shape[-1]} matrices")
    check(B.dim() >= 2, lambda: f"{op}: The input tensor B must have at least 2 dimensions.")
    check(pivots.dtype in (dt.int32, dt.int64, dt.int16, dt.int8, dt.uint8),
          lambda: f"{op}: Expected pivots to be integers. Got {type_name(pivots.dtype)}")
    check(LD.dtype == B.dtype, lambda: f"Expected b and A to have the same dtype, but found b of type "
                                       f"{type_name(B.dtype)} and A of type {type_name(LD.dtype)} instead.")
    n = LD.shape[-1]
    check(B.shape[-2] == n, lambda: f"Incompatible matrix sizes for {op}: each A matrix is {n} by {n} but each b "
                                    f"matrix is {B.shape[-2]} by {B.shape[-1]}")
    check(tuple(LD.shape[:-1]) == tuple(pivots.shape),
          lambda: f"{op}: Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots with shape "
                  f"{list(pivots.shape)} instead")
    check(LD.device == B.device and LD.device == pivots.device,
          lambda: f"Expected all tensors to be on the same device, but found at least two devices, {LD.device} and "
                  f"{B.device if B.device != LD.device else pivots.device}!")
    _kernel_dtype("ldl_solve", LD)
    batch = _broadcast(tuple(LD.shape[:-2]), tuple(B.shape[:-2]), op)
    return (*batch, n, B.shape[-1])


def _broadcast(a: tuple, b: tuple, op: str) -> tuple:
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        check(x == y or x == 1 or y == 1,
              lambda: f"{op}: the batch dimensions of LD {list(a)} and B {list(b)} do not broadcast")
        out.append(max(x, y) if x and y else 0)
    return tuple(reversed(out))


def ldl_solve_output(LD, B, shape):
    """The (*, n, k) solution, column-major within each matrix."""
    return _column_major(shape, LD.dtype, LD.device)


@kernel("Meta")
def linalg_ldl_factor_ex(self, *, hermitian=False, check_errors=False):
    check_ldl_factor(self)
    return ldl_factor_outputs(self)


@kernel("Meta")
def linalg_ldl_solve(LD, pivots, B, *, hermitian=False):
    return ldl_solve_output(LD, B, check_ldl_solve(LD, pivots, B))
