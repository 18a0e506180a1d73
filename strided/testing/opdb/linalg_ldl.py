"""OpInfos: ``linalg_ldl_factor_ex`` and ``linalg_ldl_solve`` (Note [Bunch-Kaufman LDL]).

The factorization's LD and pivots are checked by what they solve (``A X = I`` against NumPy's solve) and the
solver against NumPy's solve of the matrix it was factored from, which the samples carry as a trailing argument
the op ignores; CUDA is compared with the CPU entry by entry (the same host algorithm)."""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ...backends.cpu.linalg_ldl import ldl_factor_host, ldl_solve_host
from ...factories import from_numpy
from ...ops import bound as ops
from ..opinfo import OpInfo, SampleInput
from .helpers import err

__all__ = ["OPS"]

_DTYPES = (dt.float32, dt.float64, dt.complex64, dt.complex128)
_TOL = {dt.float32: (2e-4, 2e-4), dt.float64: (1e-10, 1e-10), dt.complex64: (2e-4, 2e-4),
        dt.complex128: (1e-10, 1e-10)}


def _symmetric(shape, d, rng):
    """Symmetric (complex: complex symmetric, ``hermitian=False``'s input)."""
    a = rng.uniform(-1, 1, size=shape)
    if d.is_complex:
        a = a + 1j * rng.uniform(-1, 1, size=shape)
    return from_numpy(np.ascontiguousarray(a + np.swapaxes(a, -1, -2), dtype=d.numpy_dtype))


def _factor_samples(d, rng):
    yield SampleInput((_symmetric((4, 4), d, rng),), name="4x4")
    yield SampleInput((_symmetric((2, 6, 6), d, rng),), name="batched")
    yield SampleInput((_symmetric((5, 5), d, rng).mT,), name="noncontiguous")
    yield SampleInput((from_numpy(np.array([[0, 1, 2], [1, 0, 3], [2, 3, 0]], dtype=d.numpy_dtype)),),
                      name="zero diagonal (2x2 pivots)")
    yield SampleInput((_symmetric((0, 3, 3), d, rng),), name="empty batch")


def _factor_check(result, sample):
    LD, pivots, info = result
    A = np.asarray(sample.args[0].numpy(), np.complex128 if sample.args[0].dtype.is_complex else np.float64)
    assert pivots.dtype is dt.int32 and info.dtype is dt.int32 and LD.shape == A.shape
    assert not info.numpy(force=True).any(), "a nonsingular sample reported a zero block"
    if A.size:
        n = A.shape[-1]
        eye = np.broadcast_to(np.eye(n), A.shape)
        inverse = ldl_solve_host(LD.numpy(force=True).astype(A.dtype), pivots.numpy(force=True), eye, A.shape)
        tol = 1e-4 if sample.args[0].dtype in (dt.float32, dt.complex64) else 1e-10
        np.testing.assert_allclose(A @ inverse, eye, atol=tol * n, err_msg="A solved with its LDL factors")


def _solve_samples(d, rng):
    for name, shape, k in (("4x4, 2 columns", (4, 4), 2), ("batched", (3, 5, 5), 1), ("broadcast B", (2, 4, 4), 3)):
        A = _symmetric(shape, d, rng)
        ld, piv, _ = ldl_factor_host(A.numpy())
        b_shape = (3, *shape[:-2], shape[-1], k) if name == "broadcast B" else (*shape[:-1], k)
        b = rng.uniform(-1, 1, size=b_shape) + (1j * rng.uniform(-1, 1, size=b_shape) if d.is_complex else 0)
        B = from_numpy(np.ascontiguousarray(b, dtype=d.numpy_dtype))
        yield SampleInput((from_numpy(np.ascontiguousarray(ld)), from_numpy(piv), B, A), name=name)


def _solve_ref(LD, pivots, B, A):
    wide = np.complex128 if np.iscomplexobj(A) else np.float64
    return np.linalg.solve(np.asarray(A, wide), np.asarray(B, wide))


def _errors(rng):
    A = _symmetric((3, 3), dt.float32, rng)
    yield err((ops.ones((3, 4)),), RuntimeError, "A must be batches of square matrices, but they are 3 by 4")
    yield err((ops.ones((3, 3), dtype=dt.int64),), RuntimeError,
              "Expected a floating point or complex tensor as input. Got Long")
    # "ldl_factor_kernel_<device>", as torch's dispatch names its kernel
    yield err((A.to(dt.float16),), NotImplementedError, "not implemented for 'Half'")


OPS = [
    OpInfo("linalg_ldl_factor_ex", _factor_samples, ref=None, op=lambda A: ops.linalg_ldl_factor_ex(A),
           dtypes=_DTYPES, check=_factor_check, tolerances=_TOL, errors=_errors),
    OpInfo("linalg_ldl_solve", _solve_samples, ref=_solve_ref,
           op=lambda LD, piv, B, A: ops.linalg_ldl_solve(LD, piv, B), dtypes=_DTYPES, tolerances=_TOL),
]
