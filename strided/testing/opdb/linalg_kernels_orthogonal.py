"""OpInfos: the orthogonal factorization ops of Note [Linear-algebra kernels] (``_linalg_symmetric_jacobi``,
``_linalg_onesided_jacobi``, ``_linalg_householder_qr``) and geqrf. A factorization need not match the CPU's bit for bit
(eigenvector signs, the order of the eigenvalues, the rotations), so each OpInfo checks the defining properties
against NumPy in float64 instead of comparing with a reference."""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ...factories import from_numpy
from ..opinfo import ErrorInput, OpInfo, SampleInput
from .helpers import err

__all__ = ["OPS"]

_DTYPES = (dt.float32, dt.float64)
_EPS = {dt.float32: float(np.finfo(np.float32).eps), dt.float64: float(np.finfo(np.float64).eps)}


def _arr(a, d):
    return from_numpy(np.ascontiguousarray(a, dtype=d.numpy_dtype))


def _host(t) -> np.ndarray:
    return np.asarray(t.cpu().numpy(), dtype=np.float64)


def _input(sample) -> np.ndarray:
    return _host(sample.args[0])


def _tol(sample, shape) -> float:
    return 10 * max(*shape, 1) * _EPS[sample.args[0].dtype]


def _mT(a):
    return np.swapaxes(a, -1, -2)


def _close(got, want, tol, what):
    np.testing.assert_allclose(got, want, atol=tol, err_msg=what)


# -- _linalg_symmetric_jacobi ----------------------------------------------------------------------------------
def _sym(shape, d, rng):
    a = rng.uniform(-1, 1, size=shape)
    return (a + _mT(a)) / 2


def _symmetric_samples(d, rng):
    yield SampleInput((_arr(_sym((5, 5), d, rng), d),), name="5x5")
    yield SampleInput((_arr(_sym((2, 3, 4, 4), d, rng), d),), name="batched")
    yield SampleInput((_arr(_sym((3, 6, 6), d, rng), d).mT,), name="noncontiguous")
    yield SampleInput((_arr(_sym((33, 33), d, rng), d),), name="33x33 (odd)")
    yield SampleInput((_arr(np.eye(4), d),), name="identity")
    yield SampleInput((_arr(_sym((1, 1), d, rng), d),), name="1x1")
    yield SampleInput((_arr(np.zeros((0, 3, 3)), d),), name="empty batch")


def _symmetric_check(result, sample):
    s = _input(sample)
    w, V = (_host(r) for r in result)
    n = s.shape[-1]
    assert w.shape == s.shape[:-1] and V.shape == s.shape, (w.shape, V.shape)
    tol = _tol(sample, (n,))
    _close(s @ V - V * w[..., None, :], 0, tol, "S V = V diag(w)")
    _close(_mT(V) @ V, np.broadcast_to(np.eye(n), V.shape), tol, "V^T V = I")
    _close(np.sort(w, -1), np.linalg.eigvalsh(s) if s.size else w, tol, "eigenvalues")


def _symmetric_errors(rng):
    name = "_linalg_symmetric_jacobi"
    yield err((_arr(np.eye(3), dt.int64),), RuntimeError, f"{name}: expected a float32 or float64 tensor, got "
                                                          "strided.int64")
    yield err((_arr(np.ones(3), dt.float32),), RuntimeError, f"{name}: The input tensor A must have at least 2 "
                                                             "dimensions, but got 1")
    yield err((_arr(np.ones((2, 3)), dt.float32),), RuntimeError, f"{name}: A must be batches of square matrices, "
                                                                  "but they are 2 by 3 matrices")


# -- _linalg_onesided_jacobi -----------------------------------------------------------------------------------
def _onesided_samples(d, rng):
    yield SampleInput((_arr(rng.uniform(-1, 1, (7, 4)), d),), name="7x4")
    yield SampleInput((_arr(rng.uniform(-1, 1, (2, 6, 5)), d),), name="batched, odd n")
    yield SampleInput((_arr(rng.uniform(-1, 1, (3, 8, 6)), d)[:, ::2, :],), name="noncontiguous")
    yield SampleInput((_arr(rng.uniform(-1, 1, (40, 33)), d),), name="40x33")
    zero_col = rng.uniform(-1, 1, (5, 3))
    zero_col[:, 1] = 0
    yield SampleInput((_arr(zero_col, d),), name="a zero column")
    yield SampleInput((_arr(rng.uniform(-1, 1, (4, 1)), d),), name="one column")
    yield SampleInput((_arr(np.zeros((0, 4, 3)), d),), name="empty batch")


def _onesided_check(result, sample):
    g = _input(sample)
    GJ, J = (_host(r) for r in result)
    m, n = g.shape[-2:]
    assert GJ.shape == g.shape and J.shape == (*g.shape[:-2], n, n), (GJ.shape, J.shape)
    tol = _tol(sample, (m, n))
    _close(_mT(J) @ J, np.broadcast_to(np.eye(n), J.shape), tol, "J^T J = I")
    _close(g @ J - GJ, 0, tol, "G J")
    gram = _mT(GJ) @ GJ
    norms = np.sqrt(np.diagonal(gram, 0, -2, -1))
    off = np.abs(gram * (1 - np.eye(n)))
    assert np.all(off <= tol * norms[..., :, None] * norms[..., None, :] + tol * tol), "columns not orthogonal"
    if g.size:
        _close(-np.sort(-norms, -1)[..., :min(m, n)], np.linalg.svd(g, compute_uv=False), tol, "singular values")


def _onesided_errors(rng):
    name = "_linalg_onesided_jacobi"
    yield err((_arr(np.eye(3), dt.int32),), RuntimeError, f"{name}: expected a float32 or float64 tensor, got "
                                                          "strided.int32")
    yield err((_arr(np.ones(3), dt.float64),), RuntimeError, f"{name}: The input tensor A must have at least 2 "
                                                             "dimensions, but got 1")


# -- _linalg_householder_qr ------------------------------------------------------------------------------------
def _qr_samples(d, rng):
    yield SampleInput((_arr(rng.uniform(-1, 1, (6, 4)), d),), name="tall")
    yield SampleInput((_arr(rng.uniform(-1, 1, (2, 3, 5)), d), True), name="wide, complete")
    yield SampleInput((_arr(rng.uniform(-1, 1, (2, 6, 4)), d), True), name="tall, complete")
    yield SampleInput((_arr(rng.uniform(-1, 1, (3, 8, 5)), d)[:, ::2, :], False, False), name="noncontiguous, R only")
    yield SampleInput((_arr(rng.uniform(-1, 1, (35, 33)), d),), name="35x33")
    zero_col = rng.uniform(-1, 1, (5, 4))
    zero_col[:, 0] = 0
    yield SampleInput((_arr(zero_col, d),), name="a zero column")
    yield SampleInput((_arr(np.zeros((3, 0)), d), True), name="no columns, complete")
    yield SampleInput((_arr(np.zeros((0, 3, 2)), d),), name="empty batch")


def _qr_check(result, sample):
    a = _input(sample)
    complete = sample.args[1] if len(sample.args) > 1 else False
    compute_q = sample.args[2] if len(sample.args) > 2 else True
    Q, R = (_host(r) for r in result)
    m, n = a.shape[-2:]
    rows = m if complete else min(m, n)
    assert R.shape == (*a.shape[:-2], rows, n) and Q.shape == (*a.shape[:-2], m, rows if compute_q else 0)
    assert np.all(np.tril(R, -1) == 0), "R is not upper triangular"
    tol = _tol(sample, (m, n))
    # LAPACK's reflectors (numpy.linalg.qr): the same Q and R up to rounding, signs included
    want_q, want_r = np.linalg.qr(a, mode="complete" if complete else "reduced")
    _close(R, want_r, tol, "R")
    if compute_q:
        _close(Q, want_q, tol, "Q")
        _close(Q @ R, a, tol, "Q R = A")


def _qr_errors(rng):
    name = "_linalg_householder_qr"
    yield err((_arr(np.eye(3), dt.int64),), RuntimeError, f"{name}: expected a float32 or float64 tensor, got "
                                                          "strided.int64")
    yield err((_arr(np.ones(3), dt.float32),), RuntimeError, f"{name}: The input tensor A must have at least 2 "
                                                             "dimensions, but got 1")


# -- geqrf: LAPACK's compact QR (numpy.linalg.qr's "raw" mode, transposed) ------------------------------------
def _geqrf_samples(d, rng):
    yield SampleInput((_arr(rng.uniform(-1, 1, (6, 4)), d),), name="tall")
    yield SampleInput((_arr(rng.uniform(-1, 1, (2, 3, 5)), d),), name="wide, batched")
    yield SampleInput((_arr(rng.uniform(-1, 1, (4, 4)), d),), name="square")
    yield SampleInput((_arr(rng.uniform(-1, 1, (3, 8, 5)), d)[:, ::2, :],), name="noncontiguous")
    yield SampleInput((_arr(np.zeros((0, 3, 2)), d),), name="empty batch")


def _geqrf_check(result, sample):
    a = _input(sample)
    got_a, got_tau = (_host(r) for r in result)
    assert got_a.shape == a.shape and got_tau.shape == (*a.shape[:-2], min(a.shape[-2:]))
    if a.size:
        h, tau = np.linalg.qr(a, mode="raw")
        tol = _tol(sample, a.shape[-2:])
        _close(got_a, _mT(h), tol, "a")
        _close(got_tau, tau, tol, "tau")


def _geqrf_errors(rng):
    yield err((_arr(np.ones(3), dt.float32),), RuntimeError, "torch.geqrf: input must have at least 2 dimensions.")
    yield ErrorInput(SampleInput((_arr(np.eye(3), dt.int64),)), NotImplementedError,
                     r'"geqrf_(cpu|cuda|meta)" not implemented for \'Long\'')  # the kernel's device named


OPS = [
    OpInfo("_linalg_symmetric_jacobi", _symmetric_samples, ref=None, dtypes=_DTYPES, check=_symmetric_check,
           errors=_symmetric_errors),
    OpInfo("_linalg_onesided_jacobi", _onesided_samples, ref=None, dtypes=_DTYPES, check=_onesided_check,
           errors=_onesided_errors),
    OpInfo("_linalg_householder_qr", _qr_samples, ref=None, dtypes=_DTYPES, check=_qr_check, errors=_qr_errors),
    OpInfo("geqrf", _geqrf_samples, ref=None, dtypes=_DTYPES, check=_geqrf_check, errors=_geqrf_errors),
]
