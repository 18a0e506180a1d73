"""The orthogonal factorization ops ``_linalg_symmetric_jacobi``, ``_linalg_onesided_jacobi`` and
``_linalg_householder_qr`` on every backend (LAPACK on the CPU, the fused kernels of
backends/cuda/kernels/linalg_orthogonal_ops.py on CUDA, the composite's shapes on meta), called directly: their
defining properties against NumPy in float64, LAPACK's exact reflector conventions for QR, sizes on both sides
of the kernels' shared-memory thresholds (H100 / H200, 223 KiB: eigh keeps A and V in shared memory up to n = 118
(float64) / 168 (float32), A alone up to 167 / 237; the one-sided Jacobi and QR likewise by bytes, e.g. 256 x 128
float32 G and J both in, float64 J alone; QR 100 x 100 float64 A and Q in, 300 x 100 float64 neither; from min(m, n) =
128 on, QR takes the blocked path of test_linalg_kernels_blocked_qr.py), batches, broadcast and non-contiguous input,
degenerate and non-finite input."""

from __future__ import annotations

import math

import numpy as np
import pytest

import strided as st
from strided.ops import bound as ops
from strided.testing import available_devices

_CUDA = "cuda" in available_devices()
DEVICES = ["cpu", "meta", pytest.param("cuda", marks=pytest.mark.skipif(not _CUDA, reason="no CUDA device"))]
DATA_DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not _CUDA, reason="no CUDA device"))]
DTYPES = ["float32", "float64"]
EPS = {"float32": float(np.finfo(np.float32).eps), "float64": float(np.finfo(np.float64).eps)}


def _t(a, device, dtype):
    return st.tensor(np.asarray(a, dtype=dtype), device=device)


def _host(t):
    return np.asarray(t.cpu().numpy()).astype(np.float64)


def _mT(a):
    return np.swapaxes(a, -1, -2)


def _sym(shape, seed):
    a = np.random.default_rng(seed).standard_normal(shape)
    a = a + _mT(a)
    return a / np.abs(a).max() if a.size else a  # the caller's scaling (Note [eigh on the device])


def _orthogonal(n, seed):
    return np.linalg.qr(np.random.default_rng(seed).standard_normal((n, n)))[0]


# -- _linalg_symmetric_jacobi -------------------------------------------------------------------------------
def _check_eigh(s, w, V, dtype, device, c=8.0):
    """S = V diag(w) V^T with V orthonormal and w the eigenvalues, to ~n eps."""
    n = s.shape[-1]
    assert tuple(w.shape) == s.shape[:-1] and tuple(V.shape) == s.shape
    assert w.dtype.name == dtype and V.dtype.name == dtype and w.device.type == device
    if device == "meta":
        return
    w, V = _host(w), _host(V)
    scale = (np.abs(s).max() or 1.0) if s.size else 1.0
    tol = c * max(n, 1) * EPS[dtype]
    np.testing.assert_allclose((s @ V - V * w[..., None, :]) / scale, 0, atol=tol)
    np.testing.assert_allclose(_mT(V) @ V, np.broadcast_to(np.eye(n), V.shape), atol=tol)
    np.testing.assert_allclose(np.sort(w, -1) / scale, np.linalg.eigvalsh(s) / scale, atol=tol)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 2, 3, 15, 16, 17, 31, 32, 33, 64, 65, 100, 128, 200, 250])
def test_symmetric_jacobi_sizes(device, dtype, n):
    batch = (3,) if n <= 33 else ()
    s = _sym((*batch, n, n), seed=n).astype(dtype).astype(np.float64)
    w, V = ops._linalg_symmetric_jacobi(_t(s, device, dtype))
    _check_eigh(s, w, V, dtype, device)
    if n == 1 and device != "meta":  # as the composite: the diagonal and ones
        np.testing.assert_array_equal(_host(w), s[..., 0])
        np.testing.assert_array_equal(_host(V), np.ones_like(s))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_symmetric_jacobi_layouts(device, dtype):
    s = _sym((2, 3, 7, 7), seed=1).astype(dtype).astype(np.float64)
    base = _t(s, device, dtype)
    w, V = ops._linalg_symmetric_jacobi(base.transpose(0, 1))  # non-contiguous batch
    _check_eigh(np.swapaxes(s, 0, 1), w, V, dtype, device)
    w, V = ops._linalg_symmetric_jacobi(base.mT)  # transposed matrices (the same, symmetric)
    _check_eigh(_mT(s), w, V, dtype, device)
    w, V = ops._linalg_symmetric_jacobi(base[0, 1].expand(4, 7, 7))  # broadcast: stride-0 batch
    _check_eigh(np.broadcast_to(s[0, 1], (4, 7, 7)), w, V, dtype, device)
    for shape in [(0, 5, 5), (3, 0, 0), (2, 0, 1, 1)]:  # empty: shapes only
        w, V = ops._linalg_symmetric_jacobi(st.zeros(*shape, dtype=getattr(st, dtype), device=device))
        assert tuple(w.shape) == shape[:-1] and tuple(V.shape) == shape


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_symmetric_jacobi_special_spectra(device, dtype):
    q = _orthogonal(9, seed=3)
    cases = {
        "identity": np.eye(16),
        "zero": np.zeros((5, 5)),
        "diagonal": np.diag(np.linspace(-1, 1, 6)),
        "3-fold": (q * np.array([0.5, 0.5, 0.5, -1.0, 0.25, 0.25, 1.0, -0.75, 0.0])) @ q.T,
        "ill-conditioned": (q * np.logspace(0, -12, 9)) @ q.T,
        "rank one": np.outer(np.arange(1.0, 8.0), np.arange(1.0, 8.0)) / 49,
    }
    for name, s in cases.items():
        s = ((s + s.T) / 2).astype(dtype).astype(np.float64)
        w, V = ops._linalg_symmetric_jacobi(_t(s, device, dtype))
        _check_eigh(s, w, V, dtype, device)
        if name in ("identity", "zero", "diagonal"):  # nothing to rotate: exact
            np.testing.assert_array_equal(_host(w), np.diag(s), err_msg=name)
            np.testing.assert_array_equal(_host(V), np.eye(len(s)), err_msg=name)


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [4, 5, 40])
def test_symmetric_jacobi_non_finite_terminates(device, dtype, n):
    s = _sym((2, n, n), seed=n)
    s[0, 1, 2] = s[0, 2, 1] = math.nan
    s[1, 0, 0] = math.inf
    w, V = ops._linalg_symmetric_jacobi(_t(s, device, dtype))
    assert tuple(w.shape) == (2, n) and tuple(V.shape) == (2, n, n)
    assert not np.isfinite(_host(w)[0]).all()


# -- _linalg_onesided_jacobi ---------------------------------------------------------------------------------
def _check_onesided(g, GJ, J, dtype, device, c=8.0):
    """G J has mutually orthogonal columns, J is orthogonal, G J J^T = G, and the column norms are G's singular
    values."""
    m, n = g.shape[-2:]
    assert tuple(GJ.shape) == g.shape and tuple(J.shape) == (*g.shape[:-2], n, n)
    assert GJ.dtype.name == dtype and J.dtype.name == dtype and GJ.device.type == device
    if device == "meta":
        return
    GJ, J = _host(GJ), _host(J)
    scale = (np.abs(g).max() or 1.0) if g.size else 1.0
    tol = c * max(m, n, 1) * EPS[dtype]
    np.testing.assert_allclose(_mT(J) @ J, np.broadcast_to(np.eye(n), J.shape), atol=tol)
    np.testing.assert_allclose((g @ J - GJ) / scale, 0, atol=tol)
    np.testing.assert_allclose((GJ @ _mT(J) - g) / scale, 0, atol=tol)
    gram = _mT(GJ) @ GJ / scale**2
    norms = np.sqrt(np.diagonal(gram, 0, -2, -1))
    off = gram - np.einsum("...i,ij->...ij", np.diagonal(gram, 0, -2, -1), np.eye(n))
    np.testing.assert_array_less(np.abs(off), tol * (norms[..., :, None] * norms[..., None, :]) + tol * tol)
    if min(m, n):
        s = np.linalg.svd(g / scale, compute_uv=False)
        got = -np.sort(-norms, -1)[..., : min(m, n)]
        np.testing.assert_allclose(got, s, atol=tol * max(1.0, np.abs(s).max()))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (5, 1), (2, 2), (3, 3), (3, 2), (16, 15), (16, 16), (17, 17), (40, 31),
                                   (32, 32), (33, 33), (64, 64), (65, 65), (100, 100), (128, 128), (200, 100),
                                   (256, 128), (300, 200), (3, 5)])
def test_onesided_jacobi_sizes(device, dtype, shape):
    batch = (2,) if max(shape) <= 33 else ()
    g = np.random.default_rng(sum(shape)).standard_normal((*batch, *shape)).astype(dtype).astype(np.float64)
    GJ, J = ops._linalg_onesided_jacobi(_t(g, device, dtype))
    _check_onesided(g, GJ, J, dtype, device)
    if shape[-1] == 1 and device != "meta":  # as the composite: G itself and ones
        np.testing.assert_array_equal(_host(GJ), g)
        np.testing.assert_array_equal(_host(J), np.ones((*batch, 1, 1)))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_onesided_jacobi_layouts(device, dtype):
    g = np.random.default_rng(5).standard_normal((3, 9, 6)).astype(dtype).astype(np.float64)
    base = _t(g, device, dtype)
    GJ, J = ops._linalg_onesided_jacobi(base[:, ::2, :])  # every other row
    _check_onesided(g[:, ::2, :], GJ, J, dtype, device)
    GJ, J = ops._linalg_onesided_jacobi(base[1].mT.mT.expand(2, 9, 6))  # broadcast batch
    _check_onesided(np.broadcast_to(g[1], (2, 9, 6)), GJ, J, dtype, device)
    GJ, J = ops._linalg_onesided_jacobi(_t(np.ascontiguousarray(_mT(g)), device, dtype).mT)  # column-major
    _check_onesided(g, GJ, J, dtype, device)
    for shape in [(0, 5, 3), (2, 0, 3), (4, 3, 0), (1, 0, 0)]:
        GJ, J = ops._linalg_onesided_jacobi(st.zeros(*shape, dtype=getattr(st, dtype), device=device))
        assert tuple(GJ.shape) == shape and tuple(J.shape) == (*shape[:-2], shape[-1], shape[-1])
        if device != "meta" and shape[-1] >= 2 and shape[0]:  # no rows: nothing rotates, J = I
            np.testing.assert_array_equal(_host(J), np.broadcast_to(np.eye(shape[-1]), J.shape))


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_onesided_jacobi_degenerate(device, dtype):
    rng = np.random.default_rng(11)
    q1, q2 = _orthogonal(20, seed=1), _orthogonal(12, seed=2)
    zero_cols = rng.standard_normal((10, 6))
    zero_cols[:, [1, 4]] = 0
    cases = {
        "zero": np.zeros((6, 4)),
        "zero columns": zero_cols,
        "repeated column": np.repeat(rng.standard_normal((9, 1)), 5, axis=1),
        "rank 2": rng.standard_normal((12, 2)) @ rng.standard_normal((2, 7)),
        "ill-conditioned": (q1[:, :12] * np.logspace(0, -10, 12)) @ q2.T,
        "orthogonal": q1[:, :7],
    }
    for name, g in cases.items():
        g = g.astype(dtype).astype(np.float64)
        GJ, J = ops._linalg_onesided_jacobi(_t(g, device, dtype))
        _check_onesided(g, GJ, J, dtype, device)
        if name == "zero" and device != "meta":
            np.testing.assert_array_equal(_host(GJ), g, err_msg=name)
    if dtype == "float64":  # small singular values stay accurate to ~eps * s_max (not sqrt(eps), as A^T A)
        g = cases["ill-conditioned"]
        norms = np.sort(np.linalg.norm(_host(ops._linalg_onesided_jacobi(_t(g, device, dtype))[0]), axis=0))[::-1]
        np.testing.assert_allclose(norms, np.logspace(0, -10, 12), rtol=1e-6)


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(6, 4), (70, 40)])
def test_onesided_jacobi_non_finite_terminates(device, dtype, shape):
    g = np.random.default_rng(3).standard_normal((2, *shape))
    g[0, 1, 1] = math.nan
    g[1, 0, 2] = math.inf
    GJ, J = ops._linalg_onesided_jacobi(_t(g, device, dtype))
    assert tuple(GJ.shape) == (2, *shape) and tuple(J.shape) == (2, shape[1], shape[1])
    assert not np.isfinite(_host(GJ)[0]).all()


# -- _linalg_householder_qr ----------------------------------------------------------------------------------
def _well(shape, seed):
    """A random matrix whose leading square block has a dominant diagonal: Q and R are well-conditioned, so
    they agree with LAPACK's to rounding."""
    a = np.random.default_rng(seed).standard_normal(shape)
    k = min(shape[-2:])
    a[..., range(k), range(k)] += 3 * math.sqrt(max(shape[-2:])) * np.sign(a[..., range(k), range(k)] + 0.5)
    return a


def _check_qr(a, Q, R, dtype, device, complete, compute_q, c=10.0, vs_lapack=True):
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    rows, cols = (m, m) if complete else (k, k)
    assert tuple(R.shape) == (*batch, rows, n) and R.dtype.name == dtype and R.device.type == device
    assert tuple(Q.shape) == (*batch, m, cols if compute_q else 0) and Q.dtype.name == dtype
    if device == "meta":
        return
    Q, R = _host(Q), _host(R)
    scale = (np.abs(a).max() or 1.0) if a.size else 1.0
    tol = c * max(m, n, 1) * EPS[dtype]
    assert np.all(np.tril(R, -1) == 0)  # exactly
    if vs_lapack:  # LAPACK's reflectors: the same Q and R, signs included
        want = np.linalg.qr(a, mode="complete" if complete else "reduced")
        np.testing.assert_allclose(R / scale, want[1] / scale, atol=tol)
        if compute_q:
            np.testing.assert_allclose(Q, want[0], atol=tol)
    if compute_q:
        np.testing.assert_allclose(_mT(Q) @ Q, np.broadcast_to(np.eye(Q.shape[-1]), (*batch, cols, cols)), atol=tol)
        np.testing.assert_allclose((Q @ R - a) / scale, 0, atol=tol)


QR_SHAPES = [(1, 1), (1, 5), (5, 1), (2, 2), (3, 3), (4, 3), (3, 4), (16, 15), (15, 16), (16, 16), (17, 17), (31, 33),
             (33, 31), (64, 64), (65, 65), (100, 100), (128, 128), (200, 200), (256, 128), (300, 100), (100, 300),
             (512, 256)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", QR_SHAPES)
def test_householder_qr_sizes(device, dtype, shape):
    batch = (2,) if max(shape) <= 33 else ()
    a = _well((*batch, *shape), seed=sum(shape)).astype(dtype).astype(np.float64)
    for complete, compute_q in [(False, True), (True, True), (False, False), (True, False)]:
        Q, R = ops._linalg_householder_qr(_t(a, device, dtype), complete, compute_q)
        _check_qr(a, Q, R, dtype, device, complete, compute_q)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_householder_qr_layouts_and_empty(device, dtype):
    a = _well((3, 8, 5), seed=4).astype(dtype).astype(np.float64)
    base = _t(a, device, dtype)
    Q, R = ops._linalg_householder_qr(base.mT)  # transposed: wide, column-major
    _check_qr(_mT(a), Q, R, dtype, device, False, True)
    Q, R = ops._linalg_householder_qr(base[:, ::2, :], True)  # strided rows
    _check_qr(a[:, ::2, :], Q, R, dtype, device, True, True)
    Q, R = ops._linalg_householder_qr(base[2].expand(2, 8, 5))  # broadcast batch
    _check_qr(np.broadcast_to(a[2], (2, 8, 5)), Q, R, dtype, device, False, True)
    for shape, complete, q_shape, r_shape in [((0, 4, 3), False, (0, 4, 3), (0, 3, 3)),
                                              ((2, 0, 3), True, (2, 0, 0), (2, 0, 3)),
                                              ((3, 0), False, (3, 0), (0, 0)),
                                              ((3, 0), True, (3, 3), (3, 0))]:
        Q, R = ops._linalg_householder_qr(st.zeros(*shape, dtype=getattr(st, dtype), device=device), complete)
        assert (tuple(Q.shape), tuple(R.shape)) == (q_shape, r_shape)
    if device != "meta":  # no columns: the complete Q is the identity
        np.testing.assert_array_equal(_host(Q), np.eye(3))


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_householder_qr_degenerate(device, dtype):
    rng = np.random.default_rng(9)
    zero_cols = _well((7, 5), seed=2)
    zero_cols[:, [0, 3]] = 0
    cases = {"zero": (np.zeros((5, 3)), True), "zero columns": (zero_cols, True),
             "upper triangular": (np.triu(_well((5, 5), seed=1)), True),  # nothing below the diagonal: tau = 0
             "rank 1": (np.outer(rng.standard_normal(6), rng.standard_normal(4)), False),
             "ill-conditioned": ((_orthogonal(8, 1) * np.logspace(0, -9, 8)) @ _orthogonal(8, 2), False)}
    for a, vs_lapack in cases.values():
        a = a.astype(dtype).astype(np.float64)
        for complete in (False, True):
            Q, R = ops._linalg_householder_qr(_t(a, device, dtype), complete)
            _check_qr(a, Q, R, dtype, device, complete, True, vs_lapack=vs_lapack)
    Q, R = ops._linalg_householder_qr(_t(np.zeros((4, 3)), device, dtype))
    np.testing.assert_array_equal(_host(Q), np.eye(4, 3))  # tau = 0 everywhere: H = I
    np.testing.assert_array_equal(_host(R), np.zeros((3, 3)))


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("dtype, scale", [("float64", 1e-300), ("float64", 1e300), ("float32", 1e-30),
                                          ("float32", 1e30), ("float32", 1e-42)])
def test_householder_qr_extreme_magnitudes(device, dtype, scale):
    a = _well((6, 4), seed=6)
    x = (a * scale).astype(dtype)
    Q, R = ops._linalg_householder_qr(_t(x, device, dtype))  # squares would over- / underflow unscaled
    want_q, want_r = np.linalg.qr(x.astype(np.float64) / scale)
    tol = 1e-12 if dtype == "float64" else (1e-2 if scale < 1e-38 else 1e-5)  # (1e-42 is subnormal in float32)
    np.testing.assert_allclose(_host(R) / scale, want_r, atol=tol * np.abs(want_r).max())
    np.testing.assert_allclose(_host(Q), want_q, atol=tol)


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_householder_qr_non_finite(device, dtype):
    nan, inf = math.nan, math.inf
    q = np.array([[-1.0, -2.0], [-2.0, 1.0]]) / np.sqrt(5.0)
    for a, want_q, want_r in [([[1.0, 0.0], [nan, 3.0]], np.full((2, 2), nan), [[nan, nan], [0.0, nan]]),
                              ([[1.0, nan], [2.0, 3.0]], q, [[-np.sqrt(5.0), nan], [0.0, nan]]),
                              ([[1.0, inf], [2.0, 3.0]], q, [[-np.sqrt(5.0), nan], [0.0, -inf]])]:
        Q, R = ops._linalg_householder_qr(_t(a, device, dtype))  # LAPACK's propagation; nothing hangs
        np.testing.assert_allclose(_host(Q), want_q, rtol=1e-6)
        np.testing.assert_allclose(_host(R), want_r, rtol=1e-6)
    a = np.random.default_rng(2).standard_normal((40, 30))
    a[5, 7] = nan
    Q, R = ops._linalg_householder_qr(_t(a, device, dtype), True)
    assert tuple(Q.shape) == (40, 40) and tuple(R.shape) == (40, 30)
    assert np.isnan(_host(R)[:, 7:]).any() and np.all(np.tril(_host(R), -1) == 0)


@pytest.mark.parametrize("device", DEVICES)
def test_errors(device):
    x = st.zeros(3, 3, dtype=st.int64, device=device)
    for name, op in [("_linalg_symmetric_jacobi", ops._linalg_symmetric_jacobi),
                     ("_linalg_onesided_jacobi", ops._linalg_onesided_jacobi),
                     ("_linalg_householder_qr", ops._linalg_householder_qr)]:
        with pytest.raises(RuntimeError, match=f"{name}: expected a float32 or float64 tensor, got strided.int64"):
            op(x)
        with pytest.raises(RuntimeError, match=f"{name}: The input tensor A must have at least 2 dimensions"):
            op(st.zeros(3, device=device))
    with pytest.raises(RuntimeError, match="_linalg_symmetric_jacobi: A must be batches of square matrices, but "
                                           "they are 2 by 3 matrices"):
        ops._linalg_symmetric_jacobi(st.zeros(2, 3, device=device))
