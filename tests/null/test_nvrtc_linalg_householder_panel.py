"""The blocked QR's kernels (``householder_panel``, ``householder_scale`` in linalg_householder.cu; Note [Blocked
Householder QR]): they compile with NVRTC to sm_90 CUBIN without spills or local memory, and the real source runs
on the CPU under the block emulator (Note [CPU block emulator] in block_emulator.py) -- a panel alone against
LAPACK's geqrf (numpy.linalg.qr(mode="raw"): R, V and tau) and larft's T, and the whole host loop of
``linalg_blocked_qr`` against numpy.linalg.qr -- with results bitwise independent of the threads' order."""

from __future__ import annotations

import math
import re
import struct

import numpy as np
import pytest
from block_emulator import Buf, EmuKernel, build, emulator_source, ptxas_log

pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is not installed")

import strided as st  # noqa: E402
from strided.backends.cuda.kernels import linalg_blocked_qr as blocked  # noqa: E402
from strided.ops import bound  # noqa: E402

KERNELS = {"householder_qr": "HouseholderQrArgs", "householder_scale": "HouseholderScaleArgs",
           "householder_panel": "HouseholderPanelArgs"}
CTYPES = {"float32": "float", "float64": "double"}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_blocked_kernels_compile_without_spills(dtype):
    text = blocked.householder_source(dtype)
    checks = "".join(f'\nstatic_assert(sizeof({s}) == {struct.calcsize(f)}, "{s}");'
                     for s, f in (("HouseholderPanelArgs", blocked.PANEL_FMT),
                                  ("HouseholderScaleArgs", blocked.SCALE_FMT)))
    log = ptxas_log(text + checks + "\n", "linalg_householder.cu")
    for name, threads in (("householder_panel", blocked.PANEL_THREADS), ("householder_scale", blocked.SCALE_THREADS)):
        report = log.split(f"Compiling entry function '{name}'")[1].split("Compile time")[0]
        assert "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads" in report, report  # no local memory
        used = int(re.search(r"Used (\d+) registers", report).group(1))
        assert used * threads <= 65536, report  # the largest block fits the register file
        smem = re.search(r"(\d+) bytes smem", report)
        assert (int(smem.group(1)) if smem else 0) + 1024 <= blocked.PANEL_STATIC_SMEM, report


# -- the emulator ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    from strided.backends.cuda.kernels import HERE

    text = (HERE / "linalg_householder.cu").read_text()
    out = tmp_path_factory.mktemp("householder_emulator")
    built = {}
    for name, ctype in CTYPES.items():
        source, counts = emulator_source(text, {"SCALAR_T": ctype}, KERNELS)
        assert counts == (2, 0, 3), "linalg_householder.cu changed: update the emulator's rewrites"
        built[name] = build(out, f"householder_{name}", source)
    return built


def _raw_qr(panel):
    """LAPACK's geqrf of ``panel`` in float64: (R's rows (w x w, upper), V (unit lower trapezoidal), tau)."""
    h, tau = np.linalg.qr(panel, mode="raw")
    h = h.T
    w = panel.shape[1]
    return np.triu(h[:w]), np.tril(h, -1) + np.eye(*h.shape), tau


def _larft(V, tau):
    w = len(tau)
    T = np.zeros((w, w))
    for j in range(w):
        T[j, j] = tau[j]
        T[:j, j] = -tau[j] * (T[:j, :j] @ (V[:, :j].T @ V[:, j]))
    return T


def _exponent(mat) -> int:
    """The e with R = 2^e (the panel's R) for ``_launch_panel``'s top = max |mat| 2^20."""
    return int(np.frexp(np.abs(mat).max() * 2.0 ** 20)[1])


def _launch_panel(lib, dtype, mats, r0, w, prev=None, order=0, in_shared=True, threads=64):
    """One ``householder_panel`` launch on ``mats (count, m, n)`` (the working matrix: the panel is rows r0.. of
    its first w columns; ``prev`` (count, p, n - r0) the previous panel's R rows), every output between canaries:
    (R, Vt, T, tau) arrays."""
    npd = np.dtype(dtype)
    sdt = getattr(st, dtype)
    count, m, n = mats.shape
    k = min(m, n)
    rows = m - r0
    src = Buf(mats[:, r0:, :].shape, npd, sdt, 7.0)
    src.array[...] = mats[:, r0:, :]
    p = prev if prev is not None else np.zeros((count, 0, n - r0))
    g = Buf(p.shape, npd, sdt, 7.0)
    g.array[...] = p
    R, Vt, T, tau = (Buf(s, npd, sdt, np.nan) for s in ((count, m, n), (count, k, m), (count, k, 32), (count, k)))
    top = Buf((count,), npd, sdt, 7.0)
    top.array[...] = np.abs(mats).max(axis=(1, 2)) * 2.0 ** 20  # (R is scaled back: _exponent)
    log = []
    kernel = EmuKernel(lib, "householder_panel", blocked.PANEL_FMT, order, log, threads=(64, 512))
    smem = rows * w * npd.itemsize if in_shared else 0
    kernel.launch_smem(count, threads, smem, 0, src.data_ptr(), g.data_ptr(), R.data_ptr(), Vt.data_ptr(),
                       T.data_ptr(), tau.data_ptr(), top.data_ptr(), count, m, n, k, m, (m - r0) * n, n,
                       p.shape[1] * (n - r0), n - r0, p.shape[1], r0, w, int(in_shared))
    assert all(b.canaries_intact() for b in (src, g, R, Vt, T, tau, top)), "a kernel wrote out of bounds"
    return R.array, Vt.array, T.array, tau.array


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("in_shared", [1, 0])
def test_emulated_panel_matches_geqrf_and_larft(libs, dtype, in_shared):
    rng = np.random.default_rng(1)
    m, n, r0, w = 75, 50, 9, 32
    mats = rng.standard_normal((2, m, n)).astype(dtype)
    mats[1, r0:, 3] = 0  # a zero column: tau = 0, T's column 0
    prev = rng.standard_normal((2, 4, n - r0)).astype(dtype)
    R, Vt, T, tau = _launch_panel(libs[dtype], dtype, mats, r0, w, prev, in_shared=in_shared, threads=64)
    tol = 1e-12 if dtype == "float64" else 2e-5
    for b in range(2):
        scale = 2.0 ** _exponent(mats[b])
        want_r, want_v, want_tau = _raw_qr(mats[b, r0:, :w].astype(np.float64))
        np.testing.assert_allclose(R[b, r0:r0 + w, r0:r0 + w] / scale, want_r, rtol=0, atol=tol * 10)
        assert np.all(R[b, r0:r0 + w, :r0] == 0) and np.all(np.tril(R[b, r0:r0 + w, r0:r0 + w], -1) == 0)
        np.testing.assert_array_equal(R[b, r0 - 4:r0, r0:], prev[b] * scale)  # the copy, scaled back
        assert np.isnan(R[b, :r0 - 4]).all() and np.isnan(R[b, r0 + w:]).all()  # nothing else written
        np.testing.assert_allclose(Vt[b, r0:r0 + w, r0:].T, want_v, rtol=0, atol=tol * 10)
        np.testing.assert_allclose(tau[b, r0:r0 + w], want_tau, rtol=0, atol=tol)
        np.testing.assert_allclose(T[b, r0:r0 + w, :w], _larft(want_v, want_tau), rtol=0, atol=tol * 10)
    assert tau[1, r0 + 3] == 0 and np.all(T[1, r0:r0 + w, 3] == 0)


def test_emulated_panel_narrow_last_and_order(libs):
    """A last panel narrower than 32 (w = 7, a complete R's rows below k zeroed), 128 threads over 4 warps; the
    same bits whatever order the threads run in."""
    rng = np.random.default_rng(2)
    mats = rng.standard_normal((1, 140, 39)).astype(np.float64)
    runs = [_launch_panel(libs["float64"], "float64", mats, 32, 7, order=order, threads=128) for order in (0, 1, 2)]
    for other in runs[1:]:
        for x, y in zip(runs[0], other):
            np.testing.assert_array_equal(x, y)
    R, Vt, T, tau = runs[0]
    want_r, want_v, want_tau = _raw_qr(mats[0, 32:, :7])
    np.testing.assert_allclose(R[0, 32:39, 32:39] / 2.0 ** _exponent(mats[0]), want_r, rtol=0, atol=1e-12)
    assert np.all(R[0, 39:] == 0)  # the last panel (r0 + w = k): rows k .. m - 1
    np.testing.assert_allclose(T[0, 32:39, :7], _larft(want_v, want_tau), rtol=0, atol=1e-12)


# -- the host loop on the emulated kernels ----------------------------------------------------------------------
@pytest.fixture
def emulate(libs, monkeypatch):
    """Run ``blocked_householder_qr`` on CPU tensors, its launches on the emulator in thread ``order``; every
    buffer it allocates between NaN canaries, checked afterwards."""

    def run(a, complete=False, compute_q=True, order=0, limit=None):
        dtype = a.dtype.name
        guarded = []

        def new_output(sizes, dt, dev, strides=None):
            numel = math.prod(sizes)
            full = bound.full((numel + 128,), math.nan, dtype=dt)
            guarded.append(full)
            return full[64:64 + numel].view(*sizes)

        monkeypatch.setattr(blocked, "get_kernel", lambda src, name, fmt, dev: EmuKernel(
            libs[dtype], name, fmt, order, [], threads=(64, blocked.PANEL_THREADS), max_grid=blocked.MAX_GRID))
        monkeypatch.setattr(blocked, "current_stream_handle", lambda dev: 0)
        monkeypatch.setattr(blocked, "_optin_smem", lambda dev: 227 * 1024 - blocked.PANEL_STATIC_SMEM)
        monkeypatch.setattr(blocked, "PANEL_SMEM_LIMIT", limit)
        monkeypatch.setattr(blocked, "new_output", new_output)
        Q, R = blocked.blocked_householder_qr(st.tensor(a), complete, compute_q)
        for full in guarded:
            edges = np.concatenate([full.numpy()[:64], full.numpy()[-64:]])
            assert np.isnan(edges).all(), "a kernel wrote out of bounds"
        return Q.numpy().astype(np.float64), R.numpy().astype(np.float64)

    return run


@pytest.mark.parametrize("dtype,shape,complete,limit", [
    ("float64", (70, 45), True, None),  # tall: two panels, the second narrow; a complete Q and R
    ("float32", (40, 72), False, None),  # wide: the last launch copies R's rows right of the last panel
    ("float64", (2, 66, 66), False, 0),  # a batch of two, panels in global memory (in place in V)
], ids=str)
def test_emulated_blocked_qr_matches_lapack(emulate, dtype, shape, complete, limit):
    rng = np.random.default_rng(3)
    a = rng.standard_normal(shape)
    a[..., range(min(shape[-2:])), range(min(shape[-2:]))] += 8
    a = a.astype(dtype)
    Q, R = emulate(a, complete, limit=limit)
    want_q, want_r = np.linalg.qr(a.astype(np.float64), mode="complete" if complete else "reduced")
    tol = 1e-12 if dtype == "float64" else 3e-5
    np.testing.assert_allclose(R, want_r, rtol=0, atol=tol * np.abs(want_r).max())
    np.testing.assert_allclose(Q, want_q, rtol=0, atol=tol)
    assert np.all(np.tril(R, -1) == 0)


def test_emulated_blocked_qr_thread_order_and_non_finite(emulate):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((2, 50, 40))
    a[1, :, 6] = 0  # tau = 0
    a[1, 30, 20] = np.nan  # NaN from column 20 on
    runs = [emulate(a, True, order=order) for order in (0, 1, 2)]
    for Q, R in runs[1:]:
        np.testing.assert_array_equal(Q, runs[0][0])
        np.testing.assert_array_equal(R, runs[0][1])
    Q, R = runs[0]
    want_q, want_r = np.linalg.qr(a[0], mode="complete")
    np.testing.assert_allclose(R[0], want_r, rtol=0, atol=1e-12 * np.abs(want_r).max())
    np.testing.assert_allclose(Q[0], want_q, rtol=0, atol=1e-12)
    assert np.isnan(R[1, :21, 20]).all() and np.isfinite(R[1, :20, :20]).all() and np.all(np.tril(R[1], -1) == 0)


def test_emulated_fused_and_blocked_paths_agree(libs, monkeypatch):
    """``_linalg_householder_qr`` on both paths (the threshold forced), every kernel emulated: the same reflectors,
    so the same Q and R up to rounding -- including a huge matrix (both scale by the same power of two)."""
    from strided.backends.cuda.kernels import linalg_orthogonal_ops as orth

    def kernel(src, name, fmt, dev):
        return EmuKernel(libs["float64"], name, fmt, 2, [], threads=(32, 1024))

    for module in (orth, blocked):
        monkeypatch.setattr(module, "get_kernel", kernel)
        monkeypatch.setattr(module, "current_stream_handle", lambda dev: 0)
    monkeypatch.setattr(orth, "_smem_budget", lambda dev: 227 * 1024 - orth.SMEM_MARGIN)
    monkeypatch.setattr(blocked, "_optin_smem", lambda dev: 227 * 1024 - blocked.PANEL_STATIC_SMEM)
    rng = np.random.default_rng(5)
    a = rng.standard_normal((2, 45, 36)) * np.array([1.0, 1e300])[:, None, None]
    got = {}
    for threshold in (1, 10 ** 9):
        monkeypatch.setattr(blocked, "BLOCKED_MIN_K", threshold)
        got[threshold] = [t.numpy() for t in orth._linalg_householder_qr(st.tensor(a), True, True)]
    for fused, block in zip(got[10 ** 9], got[1]):
        scale = np.abs(fused).max(axis=(1, 2), keepdims=True)
        np.testing.assert_allclose(block / scale, fused / scale, rtol=0, atol=1e-13)
    want_q, want_r = np.linalg.qr(a[0], mode="complete")
    np.testing.assert_allclose(got[1][0][0], want_q, rtol=0, atol=1e-12)
