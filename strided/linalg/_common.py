"""Shared pieces of strided.linalg: torch's argument checks and error texts, ``LinAlgError``, the host read
of ``info`` that the solvers' non-``_ex`` forms make, and small matrix helpers of the decompositions.

Note [Host reads of info]
The factorizations are device-resident: failures (a zero pivot, a non-positive leading minor) are
recorded in ``info`` (int32, LAPACK's convention: the 1-based index of the first failure, 0 when
fine) without reading a value back. The plain forms (``cholesky``, ``inv``, ``solve``, ``lu_factor``)
and ``check_errors=True`` must raise on failure, so they read ``info`` on the host -- one sync, the
same one torch makes (``_linalg_check_errors``: ``infos.any().item()``, then the first non-zero
batch element). Meta tensors have no values and are never read.
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..backends.meta.reductions import type_name
from ..dispatch.argument_checks import arg_bool, arg_tensor  # noqa: F401 - shared here
from ..ops import bound as ops
from ..ops.composite.linalg_solvers import batch_of, first_failure, numel  # noqa: F401 - shared here
from ..tensor import Tensor

__all__ = ["LinAlgError"]

_FLOATS = ("float32", "float64")


class LinAlgError(RuntimeError):
    """``torch.linalg.LinAlgError``: a factorization or solve failed on the input's values (a singular
    matrix, a matrix that is not positive-definite)."""


def square(op: str, A: Tensor, name: str = "A") -> None:
    """``squareCheckInputs``: at least 2 dims, square matrices."""
    if A.dim() < 2:
        raise RuntimeError(f"{op}: The input tensor {name} must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{op}: {name} must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")


def floating(op: str, A: Tensor, complex_devices: tuple = ()) -> None:
    """``checkFloatingOrComplex``; complex tensors (which torch takes) get the dispatcher's complex refusal unless
    on one of ``complex_devices``."""
    if not A.dtype.is_floating_point:
        if A.dtype.is_complex:
            if A.device.type in complex_devices:
                return
            refuse_complex(op, A)
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got {type_name(A.dtype)}")


def refuse_complex(op: str, A: Tensor) -> None:
    """strided's linear algebra is real (eig aside): torch's words for a kernel without the dtype
    (``"linalg_det_cpu" not implemented for 'ComplexDouble'``, Note [Complex operators])."""
    kernel = op.replace(".", "_")
    raise NotImplementedError(f'"{kernel}_{A.device.type}" not implemented for \'{type_name(A.dtype)}\'')


# Note [Complex linear algebra on the CPU]
# The LU family (lu_factor, lu, lu_solve, solve, inv, det, slogdet, logdet, matrix_power), the triangular solves,
# Cholesky (with cholesky_solve / cholesky_inverse), eigh / eigvalsh / matrix_sqrth, svd / svdvals and what builds
# on them (pinv, pinverse, matrix_rank, cond, polar, lstsq, matrix_exp, the nuclear and spectral norms, tensorinv /
# tensorsolve) take complex64 / complex128 on the CPU, as torch's: their kernels (ops/composite/linalg_solvers.py;
# NumPy's zpotrf, zheevd and zgesdd) run on complex values with the conjugate transposes where the real code
# transposes, LU pivots by |re| + |im| as LAPACK's izamax, and the gradients are torch's complex formulas (Note
# [Solver gradients], eigh_backward, svd_backward: mH for mT, and the checks that a loss does not see the eigen /
# singular vectors' phases). CUDA and Meta tensors take them too: on CUDA the composites run on the device and the
# LAPACK-backed kernels on a host copy (Note [Complex linear algebra on CUDA] in backends/cuda/kernels/
# linalg_complex.py); Meta computes the shapes (backends/meta/linalg_factorizations.py).
COMPLEX_DEVICES = ("cpu", "cuda", "meta")
_COMPLEX = ("complex64", "complex128")


def kernel_dtype(kernel: str, A: Tensor) -> None:
    """The dtype dispatch of a LAPACK-backed kernel: float32, float64 and complex (Note [Complex linear algebra on
    the CPU]), else torch's ``"lu_cpu" not implemented for 'Long'``."""
    if A.dtype.name not in _FLOATS and not (A.dtype.name in _COMPLEX and A.device.type in COMPLEX_DEVICES):
        raise NotImplementedError(f"\"{kernel}_{A.device.type}\" not implemented for '{type_name(A.dtype)}'")


def solver_shapes(op: str, A: Tensor, B: Tensor, left: bool) -> None:
    """``checkInputsSolver``: A square, B a matrix whose rows (left) or columns match A."""
    square(op, A)
    if B.dim() < 2:
        raise RuntimeError(f"{op}: The input tensor B must have at least 2 dimensions.")
    if (A.shape[-2] != B.shape[-2]) if left else (A.shape[-1] != B.shape[-1]):
        raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation {'AX = B' if left else 'XA = B'} "
                           f"({A.shape[-2]}x{A.shape[-1]} and {B.shape[-2]}x{B.shape[-1]})")


def eps(dtype) -> float:
    """``std::numeric_limits<T>::epsilon()`` of a floating dtype."""
    return {"float64": 2.220446049250313e-16, "float16": 0.0009765625, "bfloat16": 0.0078125}.get(
        dtype.name, 1.1920928955078125e-07)


def check_errors(info: Tensor, api: str, is_matrix: bool) -> None:
    """Raise torch's error for the first failed matrix in ``info`` (Note [Host reads of info])."""
    if info.device.type == "meta" or info.numel() == 0:
        return
    if not bool(ops.any(info != 0).item()):  # the sync torch makes too
        return
    values = info.detach().cpu().reshape(-1).tolist()
    index = next(i for i, v in enumerate(values) if v != 0)
    value = values[index]
    where = "" if is_matrix else f": (Batch element {index})"
    if "inv" in api:
        raise LinAlgError(f"{api}{where}: The diagonal element {value} is zero, the inversion could not be completed "
                          "because the input matrix is singular.")
    if "solve" in api:
        raise LinAlgError(f"{api}{where}: The solver failed because the input matrix is singular.")
    if "ldl" in api:  # torch's own check trips an internal assert here; the intent, in its other words
        raise LinAlgError(f"{api}{where}: The factorization could not be completed because the input is singular "
                          f"(D[{value},{value}] is zero).")
    if "cholesky" in api:
        raise LinAlgError(f"{api}{where}: The factorization could not be completed because the input is not "
                          f"positive-definite (the leading minor of order {value} is not positive-definite).")
    raise RuntimeError(f"{api}{where}: U[{value},{value}] is zero and using it on lu_solve would result in a division "
                       "by zero. If you still want to perform the factorization, consider calling linalg.lu(A, pivot) "
                       "or linalg.lu_factor_ex(A, pivot)")


# -- shared by the decompositions (qr.py, eigh.py, svd.py) ---------------------------------------------
def check_matrix(op: str, A: Tensor, kernel: str, square: bool = False, integer_error: bool = True,
                 complex_devices: tuple = ()) -> None:
    """At least 2 dims, square when asked, float32 / float64 (and complex on ``complex_devices``): other floating
    dtypes (and, without ``integer_error``, every dtype) raise NotImplementedError naming the ``kernel``, as torch's
    dispatch."""
    if A.dtype.is_complex and A.device.type in complex_devices and A.dtype in (_dt.complex64, _dt.complex128):
        if A.dim() < 2:
            raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
        if square and A.shape[-1] != A.shape[-2]:
            raise RuntimeError(f"{op}: A must be batches of square matrices, but they are {A.shape[-2]} by "
                               f"{A.shape[-1]} matrices")
        return
    if A.dim() < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{op}: A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")
    if A.dtype not in (_dt.float32, _dt.float64):
        if integer_error and not (A.dtype.is_floating_point or A.dtype.is_complex):
            raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got {type_name(A.dtype)}")
        raise NotImplementedError(f'"{kernel}_{A.device.type}" not implemented for \'{type_name(A.dtype)}\'')


def diag_embed(v: Tensor) -> Tensor:
    """The (*, n, n) matrices with ``v (*, n)`` on the diagonal and exact zeros elsewhere (also for inf / NaN)."""
    n = v.shape[-1]
    return ops.where(ops.eye(n, n, dtype=_dt.bool, device=v.device), v.unsqueeze(-1), 0.0)


def all_finite(A: Tensor) -> Tensor:
    """(*,) bool: whether each matrix of ``A (*, m, n)`` is finite."""
    return ops.all(ops.isfinite(A).reshape(*A.shape[:-2], -1), -1)


def max_abs(A: Tensor) -> Tensor:
    """(*, 1, 1): the largest |entry| of each matrix (1 for a zero matrix). Jacobi runs on A / max_abs, so
    that no square or product of entries over- or underflows (as LAPACK scales), and the values are scaled
    back."""
    top = ops.amax(ops.abs(A), [-2, -1], True)
    return ops.where(top > 0, top, 1.0)
