"""The LU kernels (``linalg_lu.cu``): every instantiation compiles with NVRTC to sm_90 CUBIN without spilling, and
the CUDA source itself runs on the CPU under the block emulator (Note [CPU block emulator] in block_emulator.py),
driven by the real host loop of ``linalg_lu_ops`` and checked against a NumPy getrf."""

from __future__ import annotations

import re

import numpy as np
import pytest
from block_emulator import Buf, EmuKernel, build, emulator_source, ptxas_log

pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is not installed")

import strided as st  # noqa: E402
from strided.backends.cuda import compiler  # noqa: E402
from strided.backends.cuda.kernels import linalg_lu_ops as lu_ops  # noqa: E402


def _sources():
    for _file, names, text in lu_ops.lu_sources():
        dtype = "float64" if "#define SCALAR_T double" in text else "float32"
        yield pytest.param(names, text, id=dtype)


@pytest.mark.parametrize("names,text", list(_sources()))
def test_lu_kernels_compile_without_spills(names, text):
    assert compiler._compile(text, names[0], "sm_90", ())[:4] == b"\x7fELF"
    log = ptxas_log(text, "linalg_lu.cu")
    for name, threads in zip(names, (lu_ops.MAX_PANEL_THREADS, lu_ops.UPDATE_THREADS)):
        report = log.split(f"Compiling entry function '{name}'")[1].split("Compile time")[0]
        assert "0 bytes spill stores, 0 bytes spill loads" in report, report
        used = int(re.search(r"Used (\d+) registers", report).group(1))
        assert used * threads <= 65536, report  # the largest block fits the register file


# -- the CPU block emulator (Note [CPU block emulator] in block_emulator.py) ------------------------------------
LU_KERNELS = {"lu_panel": "LuPanel", "lu_update": "LuUpdate"}


def _emulator_source(ctype: str) -> str:
    text, counts = emulator_source(_kernel_text(), {"SCALAR_T": ctype, "ACC_T": ctype}, LU_KERNELS)
    assert counts == (1, 1, 2), "linalg_lu.cu changed: update the emulator's rewrites"
    return text


def _kernel_text() -> str:
    from strided.backends.cuda.kernels import HERE

    return (HERE / "linalg_lu.cu").read_text()


@pytest.fixture(scope="module")
def emulators(tmp_path_factory):
    out = tmp_path_factory.mktemp("lu_emulator")
    return {name: build(out, f"lu_{name}", _emulator_source(ctype))
            for name, ctype in (("float32", "float"), ("float64", "double"))}


def _emulate(libs, monkeypatch, a, pivot=True, order=0, smem_limit=None, whole_max_k=None):
    """Run ``_factor`` (the host loop) on the emulated kernels: (LU, pivots, perm, info, launches)."""
    a = np.asarray(a)
    name = a.dtype.name
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    count, k = int(np.prod(batch)), min(m, n)
    log = []
    monkeypatch.setattr(lu_ops, "get_kernel", lambda src, kname, fmt, dev: EmuKernel(
        libs[name], kname, fmt, order, log, threads=(64, lu_ops.MAX_PANEL_THREADS), max_grid=lu_ops.MAX_GRID))
    monkeypatch.setattr(lu_ops, "current_stream_handle", lambda dev: 0)
    monkeypatch.setattr(lu_ops, "_optin_smem", lambda dev: 227 * 1024 - lu_ops.STATIC_SMEM)
    monkeypatch.setattr(lu_ops, "PANEL_SMEM_LIMIT", smem_limit)
    if whole_max_k is not None:
        monkeypatch.setattr(lu_ops, "WHOLE_MAX_K", whole_max_k)
    LU = Buf((count, m, n), a.dtype, getattr(st, name), 12345.0)
    LU.array[...] = a.reshape(count, m, n)
    piv = Buf((count, k), np.int32, st.int32, -7)
    perm = Buf((count, m), np.int64, st.int64, -7)
    info = Buf((count,), np.int32, st.int32, -7)
    lu_ops._factor(LU, piv, perm, info, count, m, n, k, int(pivot))
    assert all(b.canaries_intact() for b in (LU, piv, perm, info)), "a kernel wrote out of bounds"
    return (LU.array.reshape(a.shape).copy(), piv.array.reshape(*batch, k).copy(), perm.array.reshape(*batch, m).copy(),
            info.array.reshape(batch).copy(), log)


def _getrf(a, pivot=True):
    """getrf in float64 NumPy: (LU, 1-based pivots, perm, info); first max on ties, zero columns unscaled."""
    a = np.array(a, dtype=np.float64)
    m, n = a.shape
    perm, pivots, info = np.arange(m), [], 0
    for j in range(min(m, n)):
        p = j + int(np.argmax(np.abs(a[j:, j]))) if pivot else j
        pivots.append(p + 1)
        a[[j, p]] = a[[p, j]]
        perm[[j, p]] = perm[[p, j]]
        if a[j, j] != 0:
            a[j + 1:, j] /= a[j, j]
        elif info == 0:
            info = j + 1
        a[j + 1:, j + 1:] -= np.outer(a[j + 1:, j], a[j, j + 1:])
    return a, np.array(pivots, dtype=np.int32), perm, info


def _check_against_getrf(a, got, pivot=True):
    LU, piv, perm, info, _ = got
    flat = a.reshape(-1, *a.shape[-2:])
    tol = 1e-4 if a.dtype == np.float32 else 1e-10
    for i, (mat, lu, pv, pm, inf) in enumerate(zip(flat, LU.reshape(flat.shape), piv.reshape(len(flat), -1),
                                                   perm.reshape(len(flat), -1), info.reshape(-1))):
        want_lu, want_piv, want_perm, want_info = _getrf(mat, pivot)
        np.testing.assert_array_equal(pv, want_piv, err_msg=f"pivots of matrix {i}")
        np.testing.assert_array_equal(pm, want_perm, err_msg=f"perm of matrix {i}")
        assert inf == want_info, f"info of matrix {i}"
        np.testing.assert_allclose(lu, want_lu, rtol=tol, atol=tol * max(1.0, np.abs(want_lu).max()))


def _random(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# (shape, panel shared-memory limit, whole-matrix max k): every path of the host loop
PATHS = [
    ((1, 1), None, None), ((2, 2), None, None), ((3, 5, 5), None, None), ((31, 31), None, None),
    ((33, 33), None, None), ((2, 40, 17), None, None), ((17, 40), None, None),  # whole matrix in shared memory
    ((65, 65), None, None), ((100, 37), None, 0), ((37, 100), None, 0),  # blocked, panels in shared memory
    ((2, 70, 70), None, None), ((70, 33), 0, 0), ((33, 70), 0, 0), ((2, 65, 65), 0, None),  # panels in global memory
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape,smem_limit,whole_max_k", PATHS, ids=lambda v: str(v))
def test_emulated_lu_matches_getrf_on_every_path(emulators, monkeypatch, dtype, shape, smem_limit, whole_max_k):
    a = _random(shape, dtype, seed=len(shape) + shape[-1])
    got = _emulate(emulators, monkeypatch, a, smem_limit=smem_limit, whole_max_k=whole_max_k)
    _check_against_getrf(a, got)
    k = min(shape[-2:])
    whole = k <= (lu_ops.WHOLE_MAX_K if whole_max_k is None else whole_max_k) and \
        (shape[-2] | 1) * shape[-1] * a.itemsize <= lu_ops.WHOLE_MAX_BYTES
    panels = [values for name, _, _, _, values in got[4] if name == "lu_panel"]
    updates = [values for name, _, _, _, values in got[4] if name == "lu_update"]
    if whole:
        assert len(got[4]) == 1 and panels[0][-5:] == (0, k, shape[-1], 1, 1)
    else:  # j0, steps, width, pivot, in shared memory
        assert [v[-5:] for v in panels] == [(j0, min(32, k - j0), min(32, k - j0), 1, int(smem_limit is None))
                                            for j0 in range(0, k, lu_ops.NB)]
        assert [v[4] for v in updates] == [j0 for j0 in range(0, k, lu_ops.NB)
                                           if j0 + 32 < shape[-2] and j0 + 32 < shape[-1]]


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("shape,smem_limit,whole_max_k", [((2, 45, 45), None, None), ((70, 70), None, None),
                                                          ((70, 40), 0, 0)], ids=str)
def test_emulated_lu_does_not_depend_on_thread_order(emulators, monkeypatch, order, shape, smem_limit, whole_max_k):
    """Bitwise the same results whatever order the threads run in between barriers: no races."""
    a = _random(shape, "float64", 3)
    a[..., 5, :] = a[..., 9, :]  # a tie in column 0's search is possible after row swaps; repeated rows besides
    first = _emulate(emulators, monkeypatch, a, smem_limit=smem_limit, whole_max_k=whole_max_k)
    other = _emulate(emulators, monkeypatch, a, order=order, smem_limit=smem_limit, whole_max_k=whole_max_k)
    for x, y in zip(first[:4], other[:4]):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("smem_limit,whole_max_k", [(None, None), (None, 0), (0, 0)])
def test_emulated_lu_ties_zero_columns_singular_and_no_pivoting(emulators, monkeypatch, smem_limit, whole_max_k):
    kw = dict(smem_limit=smem_limit, whole_max_k=whole_max_k)
    ties = np.random.default_rng(5).integers(-3, 4, (2, 40, 40)).astype(np.float64)  # many equal |values|
    _check_against_getrf(ties, _emulate(emulators, monkeypatch, ties, **kw))
    zero_col = _random((40, 40), "float64", 6)
    zero_col[:, 7] = 0  # column 7 is zero at and below the diagonal: unscaled, info = 8, the rest goes on
    got = _emulate(emulators, monkeypatch, zero_col, **kw)
    _check_against_getrf(zero_col, got)
    assert got[3] == 8
    singular = _random((36, 36), "float64", 7)
    singular[:, 35] = 0  # the last pivot is exactly zero
    got = _emulate(emulators, monkeypatch, singular, **kw)
    _check_against_getrf(singular, got)
    assert got[3] == 36
    dominant = _random((2, 37, 37), "float64", 8) + 40 * np.eye(37)
    got = _emulate(emulators, monkeypatch, dominant, pivot=False, **kw)
    _check_against_getrf(dominant, got, pivot=False)
    np.testing.assert_array_equal(got[1], np.broadcast_to(np.arange(1, 38, dtype=np.int32), (2, 37)))
    np.testing.assert_array_equal(got[2], np.broadcast_to(np.arange(37), (2, 37)))


@pytest.mark.parametrize("smem_limit,whole_max_k", [(None, None), (None, 0), (0, 0)])
def test_emulated_lu_of_nan_and_inf_terminates_in_range(emulators, monkeypatch, smem_limit, whole_max_k):
    a = _random((3, 40, 40), "float32", 9)
    a[0, 3, 0] = np.nan  # NaN wins the first search (as argmax)
    a[1, :, 5] = np.inf
    a[2] = np.nan
    LU, piv, perm, info, _ = _emulate(emulators, monkeypatch, a, smem_limit=smem_limit, whole_max_k=whole_max_k)
    assert piv[0, 0] == 4
    assert np.all((piv >= np.arange(1, 41)) & (piv <= 40))
    np.testing.assert_array_equal(np.sort(perm, -1), np.broadcast_to(np.arange(40), (3, 40)))
    assert np.isnan(LU[2]).all() and np.isnan(LU[0]).any()
