"""OpInfos: ``linalg_eig``, ``linalg_eigvals`` and ``_linalg_eigvals`` (Note [eig on the CPU]).

Note [Phase-invariant eig checks]
An eigenvector is defined up to a phase (torch promises none), and the order of the eigenvalues is LAPACK's, so
no result is compared entry by entry with a reference: ``check`` verifies A V = V diag(w), unit columns and the
sorted eigenvalues against NumPy in float64 on every backend. The OpInfo calls the op through ``_fixed_phase``,
which rotates each eigenvector so that its first component is real and positive: a function of A alone, so the
gradient checks (and CUDA against the CPU) are well-defined.
"""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ...factories import from_numpy
from ...ops import bound as ops
from ..opinfo import OpInfo, SampleInput
from .helpers import err

__all__ = ["OPS"]

_DTYPES = (dt.float32, dt.float64, dt.complex64, dt.complex128)
_EPS = {dt.float32: 1.2e-7, dt.float64: 2.3e-16}


def _arr(a, d):
    return from_numpy(np.ascontiguousarray(a, dtype=d.numpy_dtype))


def _matrix(shape, d, rng):
    a = rng.uniform(-1, 1, size=shape)
    if d.is_complex:
        a = a + 1j * rng.uniform(-1, 1, size=shape)
    return _arr(a, d)


def _samples(d, rng):
    yield SampleInput((_matrix((4, 4), d, rng),), name="4x4")
    yield SampleInput((_matrix((2, 3, 3), d, rng),), name="batched")
    yield SampleInput((_matrix((2, 5, 5), d, rng).mT,), name="noncontiguous")
    yield SampleInput((_matrix((1, 1), d, rng),), name="1x1")
    yield SampleInput((_matrix((0, 3, 3), d, rng),), name="empty batch")


def _fixed_phase(A):
    """``linalg_eig`` with each eigenvector's first component made real and positive (Note [Phase-invariant eig
    checks])."""
    w, V = ops.linalg_eig(A)
    first = V[..., :1, :]
    return w, V * (ops.conj(first) / ops.abs(first))


def _tol(A: np.ndarray, d) -> float:
    return 50 * max(A.shape[-1], 1) * _EPS[d.to_real() if d.is_complex else d]


def _check_pairs(w, V, sample):
    A = np.asarray(sample.args[0].numpy(), dtype=np.complex128)
    d = sample.args[0].dtype
    assert w.shape == A.shape[:-1] and (V is None or V.shape == A.shape), w.shape
    want = np.complex128 if d in (dt.float64, dt.complex128) else np.complex64
    assert w.dtype.numpy_dtype == want, w.dtype
    w = np.asarray(w.numpy(force=True), np.complex128)
    tol = _tol(A, d)
    if V is not None:
        V = np.asarray(V.numpy(force=True), np.complex128)
        np.testing.assert_allclose(A @ V - V * w[..., None, :], 0, atol=tol, err_msg="A V = V diag(w)")
        np.testing.assert_allclose(np.linalg.norm(V, axis=-2), 1, atol=tol, err_msg="unit eigenvectors")
    if A.size:  # the same sets: every value near one of the other's (a sort would split close real parts)
        ref = np.linalg.eigvals(A)
        gap = np.abs(w[..., :, None] - ref[..., None, :])
        assert gap.min(-1).max() <= tol and gap.min(-2).max() <= tol, f"eigenvalues {w} != {ref}"


def _eig_check(result, sample):
    _check_pairs(result[0], result[1], sample)


def _eigvals_check(result, sample):
    _check_pairs(result, None, sample)


def _errors(op):
    def errors(rng):
        yield err((_arr(np.eye(3), dt.int64),), RuntimeError, "Unknown Complex ScalarType for Long")
        yield err((_arr(np.ones(3), dt.float32),), RuntimeError,
                  f"{op}: The input tensor A must have at least 2 dimensions.")
        yield err((_arr(np.ones((2, 3)), dt.float64),), RuntimeError,
                  f"{op}: A must be batches of square matrices, but they are 2 by 3 matrices")
        yield err((_arr(np.eye(2), dt.float16),), NotImplementedError, "linalg_eig_out_")
    return errors


OPS = [
    OpInfo("linalg_eig", _samples, op=_fixed_phase, dtypes=_DTYPES, check=_eig_check,
           errors=_errors("linalg.eig")),
    OpInfo("linalg_eigvals", _samples, dtypes=_DTYPES, check=_eigvals_check, errors=_errors("linalg.eigvals")),
    OpInfo("_linalg_eigvals", _samples, dtypes=_DTYPES, check=_eigvals_check, errors=_errors("linalg.eigvals")),
]
