"""The blocked Householder QR of ``_linalg_householder_qr`` on CUDA (Note [Blocked Householder QR] in
backends/cuda/kernels/linalg_blocked_qr.py).

Its host loop runs here on CPU tensors, each launch replaced by a NumPy model of its kernel (``householder_scale``,
``householder_panel``: geqr2 with dlarfg's conventions and larft's T) that reads and writes the launch's memory
through the packed pointers and strides, every buffer the loop allocates starting as NaN (a read of something
no launch wrote shows): Q orthonormal, Q R = A, R upper triangular and equal to LAPACK's (numpy.linalg.qr in
float64) up to rounding, across panel counts, shapes, modes, batches and degenerate input. The CUDA cases (skipped
without a GPU) run the real kernels through the op and ``strided.linalg.qr`` on both sides of the threshold."""

from __future__ import annotations

import ctypes
import math
import struct
import warnings
from types import SimpleNamespace

import numpy as np
import pytest

import strided as st
from strided.ops import bound
from strided.testing import available_devices

HAS_CUDA = "cuda" in available_devices()
CUDA = pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device")
DTYPES = ["float32", "float64"]
EPS = {"float32": float(np.finfo(np.float32).eps), "float64": float(np.finfo(np.float64).eps)}


def _t(a, device, dtype):
    return st.tensor(np.ascontiguousarray(a, dtype=dtype), device=device)


def _host(t) -> np.ndarray:
    return np.asarray(t.numpy(force=True), dtype=np.float64)


def _well(shape, seed):
    """Random, with a dominant diagonal in the leading square block: Q and R are LAPACK's to rounding."""
    a = np.random.default_rng(seed).standard_normal(shape)
    k = min(shape[-2:])
    a[..., range(k), range(k)] += 3 * math.sqrt(max(shape[-2:])) * np.sign(a[..., range(k), range(k)] + 0.5)
    return a


def _check_qr(a, Q, R, dtype, complete, compute_q, c=10.0, vs_lapack=True):
    """Shapes, R exactly upper triangular, Q^T Q = I, Q R = A and (``vs_lapack``) LAPACK's Q and R."""
    m, n = a.shape[-2:]
    k, batch = min(m, n), a.shape[:-2]
    cols = m if complete else k
    assert tuple(R.shape) == (*batch, cols, n) and R.dtype.name == dtype
    assert tuple(Q.shape) == (*batch, m, cols if compute_q else 0) and Q.dtype.name == dtype
    Q, R = _host(Q), _host(R)
    scale = (np.abs(a).max() or 1.0) if a.size else 1.0
    tol = c * max(m, n, 1) * EPS[dtype]
    assert np.all(np.tril(R, -1) == 0)  # exactly
    if vs_lapack:  # the same reflectors: the same Q and R, signs included
        want_q, want_r = np.linalg.qr(a, mode="complete" if complete else "reduced")
        np.testing.assert_allclose(R / scale, want_r / scale, rtol=0, atol=tol)
        if compute_q:
            np.testing.assert_allclose(Q, want_q, rtol=0, atol=tol)
    if compute_q:
        eye = np.broadcast_to(np.eye(cols), (*batch, cols, cols))
        np.testing.assert_allclose(np.swapaxes(Q, -1, -2) @ Q, eye, rtol=0, atol=tol)
        np.testing.assert_allclose((Q @ R - a) / scale, 0, rtol=0, atol=tol)


# -- NumPy models of the kernels -----------------------------------------------------------------------------------
def _memory(ptr, dtype, shape, strides):
    """A NumPy view of ``shape`` / element ``strides`` over raw memory at ``ptr`` (non-negative strides)."""
    np_dtype = np.dtype(dtype)
    if 0 in shape:
        return np.empty(shape, np_dtype)
    extent = 1 + sum((s - 1) * st_ for s, st_ in zip(shape, strides))
    base = np.ctypeslib.as_array((ctypes.c_byte * (extent * np_dtype.itemsize)).from_address(ptr)).view(np_dtype)
    return np.lib.stride_tricks.as_strided(base, shape, [s * np_dtype.itemsize for s in strides])


def _exponent(top) -> int:
    """qr_scale_exponent: frexp's exponent of a positive finite maximum, else 0."""
    return int(np.frexp(top)[1]) if top > 0 and np.isfinite(top) else 0


def geqr2(P):
    """LAPACK's geqr2 of ``P (rows, w)`` in its own dtype, in place (R above the diagonal, v below, beta on it),
    dlarfg's conventions as the kernels: (tau, beta)."""
    rows, w = P.shape
    tp = P.dtype.type
    taus, betas = np.zeros(w, P.dtype), np.zeros(w, P.dtype)
    with np.errstate(all="ignore"):
        for j in range(w):
            alpha, x = P[j, j], P[j + 1:, j]
            xnorm2 = tp(np.dot(x, x)) if x.size else tp(0)
            beta, tau = alpha, tp(0)
            if xnorm2 != 0:  # NaN goes on
                beta = -np.copysign(np.hypot(alpha, np.sqrt(xnorm2)), alpha)
                tau = (beta - alpha) / beta
                x *= tp(1) / (alpha - beta)
            P[j, j] = beta
            if tau != 0:
                v = np.concatenate([[tp(1)], x]).astype(P.dtype)
                P[j:, j + 1:] -= np.outer(tau * v, v @ P[j:, j + 1:])
            taus[j], betas[j] = tau, beta
    return taus, betas


def larft(V, taus):
    """LAPACK's larft (forward, columnwise): T with H_0 ... H_{w-1} = I - V T V^T; a tau = 0 column is 0."""
    w = V.shape[1]
    T = np.zeros((w, w), V.dtype)
    with np.errstate(all="ignore"):
        for j in range(w):
            if taus[j] != 0:
                T[j, j] = taus[j]
                T[:j, j] = -taus[j] * (T[:j, :j] @ (V[:, :j].T @ V[:, j]))
    return T


def scale_model(dtype, A, S, top, count, m, n, sb, sr, sc):
    a = _memory(A, dtype, (count, m, n), (sb, sr, sc))
    s = _memory(S, dtype, (count, m, n), (m * n, n, 1))
    t = _memory(top, dtype, (count,), (1,))
    for b in range(count):
        s[b] = np.ldexp(a[b], -_exponent(t[b]))


def panel_model(dtype, nb, src, prev, R, Vt, T, tau, top, count, m, n, k, rrows, src_bs, src_ld, prev_bs, prev_ld,
                prev_rows, r0, w):
    """householder_panel: R's rows of the previous panel right of it, then geqr2 + larft of this panel."""
    item = np.dtype(dtype).itemsize
    rows, cols = m - r0, n - r0
    Rm = _memory(R, dtype, (count, rrows, n), (rrows * n, n, 1))
    Vm = _memory(Vt, dtype, (count, k, m), (k * m, m, 1))
    Tm = _memory(T, dtype, (count, k, nb), (k * nb, nb, 1))
    taum = _memory(tau, dtype, (count, k), (k, 1))
    tops = _memory(top, dtype, (count,), (1,))
    for b in range(count):
        e = _exponent(tops[b])
        if prev_rows:
            G = _memory(prev + b * prev_bs * item, dtype, (prev_rows, cols), (prev_ld, 1))
            Rm[b, r0 - prev_rows:r0, r0:] = np.ldexp(G, e)
        if w == 0:
            continue
        P = _memory(src + b * src_bs * item, dtype, (rows, w), (src_ld, 1)).copy()
        taus, betas = geqr2(P)
        V = np.tril(P, -1) + np.eye(rows, w, dtype=dtype)
        Rm[b, r0:r0 + w, :r0 + w] = 0
        Rm[b, r0:r0 + w, r0:r0 + w] = np.ldexp(np.triu(P[:w], 1) + np.diag(betas), e)
        if r0 + w == k:
            Rm[b, k:] = 0
        Vm[b, r0:r0 + w, r0:] = V.T
        Tm[b, r0:r0 + w, :w] = larft(V, taus)
        taum[b, r0:r0 + w] = taus


@pytest.fixture
def emulated(monkeypatch):
    """The blocked host loop on CPU tensors, launches run by the models; ``launches`` records (name, r0, w,
    in_shared, threads, smem) of each; every buffer the loop allocates starts as NaN."""
    from strided.backends.cuda.kernels import linalg_blocked_qr as blocked
    from strided.backends.cuda.kernels import linalg_orthogonal_ops as orth
    from strided.backends.cuda.matmul import float32_scope

    launches = []
    limit = 227 * 1024 - blocked.PANEL_STATIC_SMEM

    def launch(like, name, fmt, blocks, threads, smem, *values):
        values = struct.unpack(fmt, struct.pack(fmt, *values))  # what the kernel would receive
        dtype = like.dtype.numpy_dtype
        assert threads % 32 == 0 and blocks >= 1
        if name == "householder_scale":
            assert fmt == blocked.SCALE_FMT and smem == 0 and threads == blocked.SCALE_THREADS
            launches.append((name,))
            scale_model(dtype, *values)
            return
        assert name == "householder_panel" and fmt == blocked.PANEL_FMT
        m, r0, w, in_shared = values[8], values[17], values[18], values[19]
        assert threads == (blocked._panel_threads(m - r0) if w else 64) and blocks == min(values[7], blocked.MAX_GRID)
        assert smem == ((m - r0) * w * dtype.itemsize if in_shared else 0)
        assert smem <= (limit if blocked.PANEL_SMEM_LIMIT is None else blocked.PANEL_SMEM_LIMIT)
        if like.dtype is st.float32:  # the GEMMs of the loop run without TF32
            assert float32_scope.tf32 is False
        launches.append((name, r0, w, in_shared, threads, smem))
        panel_model(dtype, blocked.NB, *values[:19])

    def gemm(op):
        def checked(*args, **kwargs):
            if args[0].dtype is st.float32:
                assert float32_scope.tf32 is False, "a float32 GEMM outside full_float32_matmuls()"
            return op(*args, **kwargs)
        return checked

    def nan_output(sizes, dtype, dev, strides=None):
        t = new_output(sizes, dtype, dev, strides)
        return bound.fill_(t, math.nan) if dtype.is_floating_point else t

    new_output = blocked.new_output
    monkeypatch.setattr(blocked, "_launch", launch)
    monkeypatch.setattr(blocked, "_optin_smem", lambda dev: limit)
    monkeypatch.setattr(blocked, "new_output", nan_output)
    for name in ("bmm", "baddbmm"):
        monkeypatch.setattr(bound, name, gemm(getattr(bound, name)))
    return SimpleNamespace(qr=blocked.blocked_householder_qr, op=orth._linalg_householder_qr, launches=launches,
                           blocked=blocked, monkeypatch=monkeypatch)


def _run(emulated, a, dtype, complete=False, compute_q=True):
    emulated.launches.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return emulated.qr(_t(a, "cpu", dtype), complete, compute_q)


SHAPES = [(1, 1), (1, 5), (5, 1), (5, 3), (3, 5), (32, 32), (33, 33), (64, 64), (70, 40), (40, 70), (100, 65),
          (65, 100), (97, 97), (130, 33)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_emulated_blocked_qr_matches_lapack(emulated, dtype, shape):
    a = _well(shape, seed=sum(shape)).astype(dtype).astype(np.float64)
    m, n = shape
    k = min(m, n)
    for complete, compute_q in [(False, True), (True, True), (False, False)]:
        Q, R = _run(emulated, a, dtype, complete, compute_q)
        _check_qr(a, Q, R, dtype, complete, compute_q)
        panels = [x for x in emulated.launches if x[0] == "householder_panel"]
        want = [(r0, min(32, k - r0)) for r0 in range(0, k, 32)] + ([(k, 0)] if k < n else [])
        assert [(x[1], x[2]) for x in panels] == want  # (a last launch copies a wide R's rows)
        assert emulated.launches[0] == ("householder_scale",)


@pytest.mark.parametrize("dtype", DTYPES)
def test_emulated_blocked_qr_batch_and_layouts(emulated, dtype):
    a = _well((2, 3, 50, 40), seed=3).astype(dtype).astype(np.float64)
    for complete in (False, True):
        Q, R = _run(emulated, a, dtype, complete)
        _check_qr(a, Q, R, dtype, complete, True)
    base = _t(_well((3, 40, 70), seed=4), "cpu", dtype)
    a = _host(base)
    Q, R = emulated.qr(base.mT, False, True)  # transposed (column-major) input: the scale kernel reads strides
    _check_qr(np.swapaxes(a, -1, -2), Q, R, dtype, False, True)
    Q, R = emulated.qr(base[1].expand(2, 40, 70), True, True)  # a stride-0 batch
    _check_qr(np.broadcast_to(a[1], (2, 40, 70)), Q, R, dtype, True, True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("limit_rows,want", [(0, [0, 0, 0]), (70, [0, 1, 1])], ids=["global", "mixed"])
def test_emulated_blocked_qr_panels_in_global_memory(emulated, dtype, limit_rows, want):
    """Panels too tall for the shared-memory limit work in place in V (``in_shared`` 0)."""
    item = np.dtype(dtype).itemsize
    emulated.monkeypatch.setattr(emulated.blocked, "PANEL_SMEM_LIMIT", limit_rows * 32 * item)
    a = _well((100, 70), seed=5).astype(dtype).astype(np.float64)
    Q, R = _run(emulated, a, dtype, True)
    _check_qr(a, Q, R, dtype, True, True)
    assert [x[3] for x in emulated.launches if x[0] == "householder_panel"] == want


@pytest.mark.parametrize("dtype", DTYPES)
def test_emulated_blocked_qr_degenerate(emulated, dtype):
    zero_cols = _well((70, 50), seed=6)
    zero_cols[:, [0, 5, 33, 49]] = 0  # tau = 0 in the first and the second panel: T's column is 0
    Q, R = _run(emulated, zero_cols, dtype, True)
    _check_qr(zero_cols, Q, R, dtype, True, True)
    upper = np.triu(_well((40, 40), seed=7))  # nothing below the diagonal: every tau is 0, Q = I
    Q, R = _run(emulated, upper, dtype)
    np.testing.assert_array_equal(_host(Q), np.eye(40))
    np.testing.assert_array_equal(_host(R), upper.astype(dtype))
    Q, R = _run(emulated, np.zeros((45, 36)), dtype, True)
    np.testing.assert_array_equal(_host(Q), np.eye(45))
    np.testing.assert_array_equal(_host(R), np.zeros((45, 36)))
    rng = np.random.default_rng(12)
    rank2 = (rng.standard_normal((40, 2)) @ rng.standard_normal((2, 35))).astype(dtype).astype(np.float64)
    Q, R = _run(emulated, rank2, dtype)  # columns 2.. reflect rounding noise: Q is not LAPACK's, but orthonormal
    _check_qr(rank2, Q, R, dtype, False, True, vs_lapack=False)


@pytest.mark.parametrize("dtype,scale", [("float64", 1e-300), ("float64", 1e300), ("float32", 1e-30),
                                         ("float32", 1e30), ("float32", 1e-42)])
def test_emulated_blocked_qr_extreme_magnitudes(emulated, dtype, scale):
    a = _well((50, 40), seed=8)
    x = (a * scale).astype(dtype)  # squares would over- / underflow unscaled
    Q, R = _run(emulated, x, dtype)
    want_q, want_r = np.linalg.qr(x.astype(np.float64) / scale)
    tol = 1e-12 if dtype == "float64" else (1e-2 if scale < 1e-38 else 1e-5)  # (1e-42 is subnormal in float32)
    np.testing.assert_allclose(_host(R) / scale, want_r, rtol=0, atol=tol * np.abs(want_r).max())
    np.testing.assert_allclose(_host(Q), want_q, rtol=0, atol=tol)


@pytest.mark.parametrize("dtype", DTYPES)
def test_emulated_blocked_qr_non_finite(emulated, dtype):
    """NaN / inf input terminates and propagates as LAPACK's (and the fused kernel's) column loop does."""
    a = _well((60, 45), seed=9)
    a[40, 36] = np.nan  # the second panel's column 4: it, and R's columns right of it from row 36 on, are NaN
    Q, R = _run(emulated, a, dtype, True)
    q, r = _host(Q), _host(R)
    assert q.shape == (60, 60) and r.shape == (60, 45) and np.all(np.tril(r, -1) == 0)
    assert np.isnan(r[:37, 36]).all() and np.isnan(r[36:45, 36:][np.triu_indices(9)]).all()
    assert np.isfinite(np.delete(r[:36], 36, axis=1)).all() and np.isnan(q[:, 36:]).all()
    want_r = np.linalg.qr(np.where(np.isnan(a), 0, a))[1]  # (R's first 36 columns do not depend on column 36)
    np.testing.assert_allclose(r[:36, :36], want_r[:36, :36], rtol=0, atol=200 * EPS[dtype] * np.abs(want_r).max())
    all_nan = np.full((50, 40), np.nan)
    Q, R = _run(emulated, all_nan, dtype)
    assert np.isnan(_host(Q)).all() and np.isnan(_host(R)[np.triu_indices(40)]).all()
    b = _well((40, 40), seed=10)
    b[0, 39] = np.inf  # the last column: it becomes NaN, the rest stays LAPACK's
    Q, R = _run(emulated, b, dtype)
    want_q, want_r = np.linalg.qr(np.where(np.isinf(b), 0, b))
    np.testing.assert_allclose(_host(Q), want_q, rtol=0, atol=400 * EPS[dtype])
    np.testing.assert_allclose(_host(R)[:, :39], want_r[:, :39], rtol=0, atol=400 * 40 * EPS[dtype])
    assert not np.isfinite(_host(R)[0, 39])


def test_emulated_op_dispatch_threshold_and_threads(emulated):
    """``_linalg_householder_qr`` takes the blocked path from ``BLOCKED_MIN_K`` on (a knob), with its shapes."""
    blocked = emulated.blocked
    assert blocked.BLOCKED_MIN_K >= 2 * blocked.NB
    emulated.monkeypatch.setattr(blocked, "BLOCKED_MIN_K", 40)
    a = _well((2, 60, 40), seed=11)
    Q, R = emulated.op(_t(a, "cpu", "float64"), True, True)
    _check_qr(a, Q, R, "float64", True, True)
    assert emulated.launches[0] == ("householder_scale",)
    Q, R = emulated.op(_t(a, "cpu", "float64"), False, False)
    assert tuple(Q.shape) == (2, 60, 0)
    _check_qr(a, Q, R, "float64", False, False)
    emulated.launches.clear()
    emulated.monkeypatch.setattr(blocked, "BLOCKED_MIN_K", 0)  # empty matrices and batches never reach it
    Q, R = emulated.op(st.zeros(0, 40, 40, dtype=st.float64), True, True)
    assert (tuple(Q.shape), tuple(R.shape)) == ((0, 40, 40), (0, 40, 40))
    Q, R = emulated.op(st.zeros(5, 0, dtype=st.float64))
    assert (tuple(Q.shape), tuple(R.shape)) == ((5, 0), (0, 0)) and emulated.launches == []
    assert [blocked._panel_threads(r) for r in (1, 256, 257, 1024, 2048, 10 ** 5)] == [64, 64, 128, 256, 512, 512]


# -- CUDA: the real kernels through the op and strided.linalg.qr ----------------------------------------------------
CUDA_SHAPES = [(127, 127), (128, 128), (200, 130), (130, 200), (300, 300), (513, 257), (1024, 1024), (2048, 512)]


@CUDA
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", CUDA_SHAPES, ids=str)
def test_cuda_householder_qr_both_paths(dtype, shape):
    if dtype == "float64" and max(shape) > 1100:
        pytest.skip("float64: the smaller sizes cover it")
    a = _well(shape, seed=sum(shape)).astype(dtype).astype(np.float64)
    x = _t(a, "cuda", dtype)
    for complete, compute_q in [(False, True), (True, True), (False, False)]:
        Q, R = bound._linalg_householder_qr(x, complete, compute_q)
        _check_qr(a, Q, R, dtype, complete, compute_q, c=20.0)
        if min(shape) <= 300:  # the CPU backend (LAPACK) gives the same factors
            Qc, Rc = bound._linalg_householder_qr(_t(a, "cpu", dtype), complete, compute_q)
            tol = 20 * max(shape) * EPS[dtype]
            np.testing.assert_allclose(_host(R), _host(Rc), rtol=0, atol=tol * np.abs(a).max())
            np.testing.assert_allclose(_host(Q), _host(Qc), rtol=0, atol=tol)


@CUDA
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 150, 100), (200, 200), (512, 256)], ids=str)
def test_cuda_blocked_equals_fused(monkeypatch, dtype, shape):
    """The two paths give the same factors (the same reflectors), the threshold forced either way (the fused
    kernel keeps its large-matrix cases: workspaces in global memory)."""
    from strided.backends.cuda.kernels import linalg_blocked_qr as blocked

    a = _well(shape, seed=12).astype(dtype).astype(np.float64)
    x = _t(a, "cuda", dtype)
    got = {}
    for threshold in (1, 10 ** 9):
        monkeypatch.setattr(blocked, "BLOCKED_MIN_K", threshold)
        got[threshold] = [_host(t) for t in bound._linalg_householder_qr(x, True, True)]
        _check_qr(a, *bound._linalg_householder_qr(x), dtype, False, True, c=20.0)
    tol = 20 * max(shape) * EPS[dtype]
    for fused, block in zip(got[10 ** 9], got[1]):
        np.testing.assert_allclose(block, fused, rtol=0, atol=tol * max(1.0, np.abs(fused).max()))


@CUDA
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
@pytest.mark.parametrize("shape", [(64, 48), (1024, 1024), (2048, 512), (300, 700)], ids=str)
def test_cuda_linalg_qr(mode, shape):
    a = _well(shape, seed=13).astype(np.float32)
    Q, R = st.linalg.qr(_t(a, "cuda", "float32"), mode=mode)
    want_q, want_r = np.linalg.qr(a.astype(np.float64), mode="complete" if mode == "complete" else "reduced")
    tol = 20 * max(shape) * EPS["float32"]
    np.testing.assert_allclose(_host(R), want_r, rtol=0, atol=tol * np.abs(a).max())
    if mode != "r":
        np.testing.assert_allclose(_host(Q), want_q, rtol=0, atol=tol)
    else:
        assert tuple(Q.shape) == (0,)


@CUDA
def test_cuda_blocked_qr_non_finite_and_tf32():
    """NaN input finishes (NaN propagates), and TF32 allowed for matmuls does not reach the factorization."""
    from strided.backends.cuda import matmul

    a = _well((300, 200), seed=14).astype(np.float32)
    a[250, 150] = np.nan
    Q, R = bound._linalg_householder_qr(_t(a, "cuda", "float32"))
    r = _host(R)
    assert np.isnan(r[:151, 150]).all() and np.isfinite(r[:128, :128]).all() and np.all(np.tril(r, -1) == 0)
    b = _well((512, 512), seed=15).astype(np.float32)
    matmul.set_float32_matmul_precision("high")
    try:
        Q, R = bound._linalg_householder_qr(_t(b, "cuda", "float32"))
    finally:
        matmul.set_float32_matmul_precision("highest")
    q, r = _host(Q), _host(R)
    # full float32: ~1e-6 here; TF32 (a 10-bit mantissa) in the GEMMs would leave ~1e-3
    assert np.abs(q.T @ q - np.eye(512)).max() < 1e-4
    assert np.abs(q @ r - b).max() < 1e-4 * np.abs(b).max()
