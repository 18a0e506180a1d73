"""OpInfos: ``_linalg_tri_solve`` and ``_linalg_cholesky_lower``, the kernel ops of Note [Linear-algebra kernels]
(composite on every backend, fused on CUDA: Note [Fused triangular kernels]). Their results need not match
the CPU's bit for bit, so ``check`` verifies the defining properties: A X = B on A's own triangle; L lower
with an exactly zero strict upper part, L L^T = A where ``info`` is 0, and ``info`` as LAPACK's potrf.
The samples cross the CUDA kernels' thresholds (one diagonal block up to 32 / 64 rows, blocked above)."""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ...factories import from_numpy
from ..opinfo import OpInfo, SampleInput
from .helpers import err

__all__ = ["OPS"]

_F = dt.float32
_TOL = {dt.float32: 2e-4, dt.float64: 1e-10}  # relative to the operands' scale


def _tensor(a: np.ndarray, dtype, noncontiguous=False):
    """A CPU tensor of ``a``; noncontiguous: the same values every other column of a wider buffer."""
    a = np.asarray(a, dtype=dtype.numpy_dtype)
    if not noncontiguous:
        return from_numpy(np.array(a, order="C"))
    wide = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), dtype=a.dtype)
    wide[..., ::2] = a
    return from_numpy(wide)[..., ::2]


def _host(t) -> np.ndarray:
    return np.asarray(t.numpy(force=True), dtype=np.float64)


def _triangular(rng, shape, upper, unit):
    """A well-conditioned triangular matrix (batch) with NaN in the triangle that is not read."""
    n = shape[-1]
    a = rng.uniform(-1, 1, shape) / max(n, 1) ** 0.5 + (0 if unit else 2 * np.eye(n))
    mask = np.triu(np.ones((n, n), bool), 0 if unit else 1)  # what the op must not read
    if upper:
        mask = mask.T
    return np.where(mask, np.nan, a)


def _tri_samples(dtype, rng):
    cases = [((3, 3), (3, 2), False), ((2, 5, 5), (2, 5, 3), True), ((40, 40), (40, 70), False),
             ((2, 1, 33, 33), (3, 33, 1), True), ((70, 70), (2, 70, 3), False), ((0, 4, 4), (4, 2), False)]
    for a_shape, b_shape, nc in cases:
        for upper, unit in ((False, False), (True, False), (True, True)):
            a = _tensor(_triangular(rng, a_shape, upper, unit), dtype, noncontiguous=nc)
            b = _tensor(rng.standard_normal(b_shape), dtype, noncontiguous=nc)
            yield SampleInput((a, b, upper, unit), name=f"upper={upper} unit={unit}{' noncontig' if nc else ''}")
    a = _tensor(_triangular(rng, (6, 6), False, False), dtype).mT  # upper through a transposed view
    yield SampleInput((a, _tensor(rng.standard_normal((6, 2)), dtype), True, False), name="transposed A")


def _tri_check(result, sample):
    A, B, upper, unit = sample.args
    a, b, x = _host(A), _host(B), _host(result)
    n = a.shape[-1]
    tri = np.triu(a) if upper else np.tril(a)  # (triu / tril zero the other triangle's NaN)
    if unit:
        tri = np.where(np.eye(n, dtype=bool), 1.0, tri)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    assert x.shape == (*batch, n, b.shape[-1]), f"shape {x.shape}"
    if x.size:
        scale = np.abs(x).max() * max(n, 1) + np.abs(b).max()
        np.testing.assert_allclose(tri @ x, np.broadcast_to(b, x.shape), atol=_TOL[A.dtype] * scale, rtol=0)


def _spd(rng, shape, cond=10.0):
    """A symmetric positive-definite matrix (batch), eigenvalues from 1 to ``cond``, NaN above the diagonal."""
    n = shape[-1]
    q, _ = np.linalg.qr(rng.standard_normal(shape))
    a = (q * np.geomspace(1, cond, n)) @ np.swapaxes(q, -1, -2)
    return np.where(np.triu(np.ones((n, n), bool), 1), np.nan, a)


def _with_failure(rng, n, at):
    """A symmetric matrix whose leading minors are positive-definite up to order ``at`` - 1 and whose
    ``at``-th pivot is -1 (L D L^T with D[at - 1] = -1): potrf's info is ``at``."""
    unit_lower = np.tril(rng.uniform(-1, 1, (n, n)) / n, -1) + np.eye(n)
    d = np.ones(n)
    d[at - 1] = -1.0
    return (unit_lower * d) @ unit_lower.T


def _chol_samples(dtype, rng):
    for shape in ((1, 1), (5, 5), (3, 32, 32), (2, 33, 33), (70, 70), (0, 4, 4), (2, 0, 0)):
        yield SampleInput((_tensor(_spd(rng, shape), dtype),), name=str(shape))
    yield SampleInput((_tensor(_spd(rng, (2, 65, 65)), dtype, noncontiguous=True),), name="noncontig")
    yield SampleInput((_tensor(_spd(rng, (6, 6)), dtype).mT.mT.expand(3, 6, 6),), name="expanded batch")
    failing = np.stack([_with_failure(rng, 70, 5), _with_failure(rng, 70, 66), _spd(rng, (70, 70))])
    yield SampleInput((_tensor(failing, dtype),), name="not positive-definite: info 5, 66, 0")


def _potrf_info(a: np.ndarray) -> int:
    """LAPACK potrf's info of the lower triangle of one matrix, by an unblocked column Cholesky."""
    n = a.shape[-1]
    low = np.tril(np.nan_to_num(a, nan=0.0))
    s = low + np.tril(low, -1).T
    L = np.zeros_like(s)
    for j in range(n):
        d = s[j, j] - L[j, :j] @ L[j, :j]
        if not d > 0:
            return j + 1
        L[j, j] = np.sqrt(d)
        L[j + 1:, j] = (s[j + 1:, j] - L[j + 1:, :j] @ L[j, :j]) / L[j, j]
    return 0


def _chol_check(result, sample):
    (A,) = sample.args
    L, info = result
    a, l, got_info = _host(A), _host(L), np.asarray(info.numpy(force=True))
    assert info.dtype is dt.int32 and got_info.shape == a.shape[:-2]
    assert l.shape == a.shape
    n = a.shape[-1]
    for idx in np.ndindex(*a.shape[:-2]):
        want = _potrf_info(a[idx])
        assert got_info[idx] == want, f"info {got_info[idx]} != {want} at {idx}"
        if want == 0 and n:
            assert not np.triu(l[idx], 1).any(), "strict upper triangle not zero"
            low = np.tril(a[idx])
            sym = low + np.tril(low, -1).T
            scale = np.abs(sym).max()
            np.testing.assert_allclose(l[idx] @ l[idx].T, sym, atol=_TOL[A.dtype] * scale * n ** 0.5, rtol=0)


def _tri_errors(rng):
    a3 = _tensor(np.eye(3), _F)
    yield err((a3, _tensor(np.ones((3, 2)), dt.float64), False), RuntimeError,
              "_linalg_tri_solve: expected tensors of one dtype, got strided.float32 and strided.float64")
    yield err((_tensor(np.eye(3), dt.int64), _tensor(np.ones((3, 2)), dt.int64), False), RuntimeError,
              "_linalg_tri_solve: expected a float32 or float64 tensor, got strided.int64")
    yield err((a3, _tensor(np.ones(3), _F), False), RuntimeError,
              "_linalg_tri_solve: The input tensor B must have at least 2 dimensions, but got 1")
    yield err((_tensor(np.ones((2, 3)), _F), _tensor(np.ones((2, 2)), _F), False), RuntimeError,
              "_linalg_tri_solve: expected A (*, n, n) and B (*, n, k), got [2, 3] and [2, 2]")
    yield err((a3, _tensor(np.ones((4, 2)), _F), True), RuntimeError,
              "_linalg_tri_solve: expected A (*, n, n) and B (*, n, k), got [3, 3] and [4, 2]")


def _chol_errors(rng):
    yield err((_tensor(np.eye(3), dt.int64),), RuntimeError,
              "_linalg_cholesky_lower: expected a float32 or float64 tensor, got strided.int64")
    yield err((_tensor(np.ones(3), _F),), RuntimeError,
              "_linalg_cholesky_lower: The input tensor A must have at least 2 dimensions, but got 1")
    yield err((_tensor(np.ones((2, 3)), _F),), RuntimeError,
              "_linalg_cholesky_lower: A must be batches of square matrices, but they are 2 by 3 matrices")


_DTYPES = (dt.float32, dt.float64)
OPS = [
    OpInfo("_linalg_tri_solve", _tri_samples, ref=None, dtypes=_DTYPES, check=_tri_check, errors=_tri_errors),
    OpInfo("_linalg_cholesky_lower", _chol_samples, ref=None, dtypes=_DTYPES, check=_chol_check,
           errors=_chol_errors),
]
