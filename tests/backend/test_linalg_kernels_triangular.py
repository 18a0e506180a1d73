"""``_linalg_tri_solve`` and ``_linalg_cholesky_lower`` on every backend (the fused CUDA kernels of Note [Fused
triangular kernels] on a GPU; CUDA cases skip here when there is none) against NumPy in float64: A X = B and
the solution, L L^T = A, L's zero upper part, potrf's ``info`` exactly, across the kernels' size thresholds
(32, 64, multiples of 64), batches, broadcast and non-contiguous operands, garbage in the triangle that is not
read, singular / non-positive-definite and NaN input.

The CUDA kernels' host side (blocking, views, strides, the packed launch arguments) also runs here on CPU
tensors, each launch replaced by a NumPy model of the kernel that reads and writes the launch's memory
through the packed pointers and strides (``_emulated``): a check of the glue that needs no GPU. The kernels
themselves are checked on a GPU by the device-parameterized tests."""

from __future__ import annotations

import ctypes
import struct
import threading
import warnings
from types import SimpleNamespace

import numpy as np
import pytest

import strided as st
from strided.ops import bound as ops
from strided.testing import available_devices

HAS_CUDA = "cuda" in available_devices()
DEVICES = ["cpu", "meta", pytest.param("cuda", marks=pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device"))]
SIZES = [1, 2, 31, 32, 33, 63, 64, 65, 100, 130, 257]
DTYPES = ["float32", "float64"]
TOL = {"float32": 3e-5, "float64": 1e-12}  # residual relative to the operands' scale, per sqrt(n)


def _t(a, device, dtype):
    return st.tensor(np.ascontiguousarray(a)).to(getattr(st, dtype)).to(device)


def _host(t) -> np.ndarray:
    return np.asarray(t.numpy(force=True), dtype=np.float64)


def _triangular(rng, shape, upper, unit, garbage=np.nan):
    """A well-conditioned triangular matrix (batch) with ``garbage`` where the op must not read."""
    n = shape[-1]
    a = rng.uniform(-1, 1, shape) / max(n, 1) ** 0.5 + (0 if unit else 2 * np.eye(n))
    unread = np.triu(np.ones((n, n), bool), 0 if unit else 1)
    return np.where(unread.T if upper else unread, garbage, a)


def _tri_of(a, upper, unit):
    t = np.triu(a) if upper else np.tril(a)
    return np.where(np.eye(a.shape[-1], dtype=bool), 1.0, t) if unit else t


def _check_solve(x, a, b, upper, unit, device, dtype):
    n, k = a.shape[-1], b.shape[-1]
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    assert tuple(x.shape) == (*batch, n, k) and x.dtype is getattr(st, dtype) and x.device.type == device
    if device == "meta":
        return
    assert x.is_contiguous()
    got = _host(x)
    tri = _tri_of(a.astype(getattr(np, dtype)).astype(np.float64), upper, unit)
    bb = np.broadcast_to(b.astype(getattr(np, dtype)).astype(np.float64), got.shape)
    want = np.linalg.solve(np.broadcast_to(tri, (*batch, n, n)), bb) if got.size else got
    scale = max(n, 1) ** 0.5 * (np.abs(want).max(initial=0) * max(n, 1) ** 0.5 + np.abs(bb).max(initial=0))
    np.testing.assert_allclose(tri @ got, bb, rtol=0, atol=TOL[dtype] * scale)
    np.testing.assert_allclose(got, want, rtol=0, atol=TOL[dtype] * 10 * scale)  # well-conditioned: close


def _spd(rng, shape, cond=10.0, garbage=np.nan):
    """SPD (batch) with eigenvalues 1 .. cond and ``garbage`` above the diagonal (never read)."""
    n = shape[-1]
    q, _ = np.linalg.qr(rng.standard_normal(shape))
    a = (q * np.geomspace(1, cond, n)) @ np.swapaxes(q, -1, -2)
    return np.where(np.triu(np.ones((n, n), bool), 1), garbage, a)


def _failing(rng, n, at):
    """Leading minors positive-definite up to order at - 1, the at-th pivot -1: potrf's info is ``at``."""
    unit_lower = np.tril(rng.uniform(-1, 1, (n, n)) / n, -1) + np.eye(n)
    d = np.ones(n)
    d[at - 1] = -1.0
    return (unit_lower * d) @ unit_lower.T


def _check_cholesky(result, a, device, dtype, info=None):
    L, got_info = result
    batch = a.shape[:-2]
    assert tuple(L.shape) == a.shape and L.dtype is getattr(st, dtype) and L.device.type == device
    assert tuple(got_info.shape) == batch and got_info.dtype is st.int32
    if device == "meta":
        return
    info = np.zeros(batch, np.int32) if info is None else np.asarray(info)
    np.testing.assert_array_equal(np.asarray(got_info.numpy(force=True)), info)
    assert L.is_contiguous()
    l = _host(L)
    n = a.shape[-1]
    low = np.tril(np.nan_to_num(a.astype(getattr(np, dtype)).astype(np.float64)))
    sym = low + np.swapaxes(np.tril(low, -1), -1, -2)
    for idx in np.ndindex(*batch):
        if info[idx] == 0 and n:
            assert not np.triu(l[idx], 1).any(), "the strict upper triangle is not exactly 0"
            scale = np.abs(sym[idx]).max() * n ** 0.5
            np.testing.assert_allclose(l[idx] @ l[idx].T, sym[idx], rtol=0, atol=TOL[dtype] * scale)
            np.testing.assert_allclose(l[idx], np.linalg.cholesky(sym[idx]), rtol=0, atol=TOL[dtype] * 30 * scale)


# -- _linalg_tri_solve ----------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("upper,unit", [(False, False), (True, False), (False, True), (True, True)])
def test_tri_solve_sizes(device, dtype, n, upper, unit):
    rng = np.random.default_rng(n)
    a = _triangular(rng, (n, n), upper, unit)
    b = rng.standard_normal((n, 3))
    x = ops._linalg_tri_solve(_t(a, device, dtype), _t(b, device, dtype), upper, unit)
    _check_solve(x, a, b, upper, unit, device, dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("a_shape,b_shape", [
    ((4, 33, 33), (4, 33, 1)),  # batched, one right-hand side
    ((2, 1, 70, 70), (3, 70, 2)),  # batch dims broadcast both ways
    ((65, 65), (3, 65, 5)),  # one A for a batch of B
    ((3, 130, 130), (130, 70)),  # one B for a batch of A, k > 64
    ((2, 20, 20), (2, 20, 130)),  # many right-hand sides, one block
], ids=str)
@pytest.mark.parametrize("upper", [False, True])
def test_tri_solve_batched_and_broadcast(device, dtype, a_shape, b_shape, upper):
    rng = np.random.default_rng(5)
    a = _triangular(rng, a_shape, upper, False)
    b = rng.standard_normal(b_shape)
    x = ops._linalg_tri_solve(_t(a, device, dtype), _t(b, device, dtype), upper)
    _check_solve(x, a, b, upper, False, device, dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [7, 100])
def test_tri_solve_non_contiguous(device, dtype, n):
    rng = np.random.default_rng(6)
    a = _triangular(rng, (2, n, n), False, False)
    b = rng.standard_normal((2, 2 * n, 5))
    A = _t(np.swapaxes(a, -1, -2), device, dtype).mT  # lower A through a transposed view
    B = _t(b, device, dtype)[:, ::2, :]  # every other row
    assert not A.is_contiguous() and not B.is_contiguous()
    _check_solve(ops._linalg_tri_solve(A, B, False), a, b[:, ::2, :], False, False, device, dtype)
    Bx = _t(b[0, :n], device, dtype).expand(3, 2, n, 5)  # stride-0 batch dims
    _check_solve(ops._linalg_tri_solve(A, Bx, False), a, np.broadcast_to(b[0, :n], (3, 2, n, 5)), False, False,
                 device, dtype)
    U = A.mT  # the same memory as an upper matrix
    _check_solve(ops._linalg_tri_solve(U, B, True), np.swapaxes(a, -1, -2), b[:, ::2, :], True, False, device, dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("a_shape,b_shape", [((0, 0), (0, 3)), ((5, 5), (5, 0)), ((0, 5, 5), (5, 2)),
                                             ((2, 0, 0), (0, 4)), ((3, 0, 4, 4), (4, 1))], ids=str)
def test_tri_solve_empty(device, a_shape, b_shape):
    a, b = np.ones(a_shape), np.ones(b_shape)
    x = ops._linalg_tri_solve(_t(a, device, "float64"), _t(b, device, "float64"), False)
    batch = np.broadcast_shapes(a_shape[:-2], b_shape[:-2])
    assert tuple(x.shape) == (*batch, a_shape[-1], b_shape[-1]) and x.dtype is st.float64


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n,zero_at", [(5, 2), (70, 66), (130, 3)])
@pytest.mark.parametrize("upper", [False, True])
def test_tri_solve_zero_diagonal_gives_inf_or_nan(device, dtype, n, zero_at, upper):
    rng = np.random.default_rng(7)
    a = _triangular(rng, (n, n), upper, False, garbage=0.0)
    a[zero_at, zero_at] = 0.0
    b = rng.standard_normal((n, 2))
    x = ops._linalg_tri_solve(_t(a, device, dtype), _t(b, device, dtype), upper)
    assert tuple(x.shape) == (n, 2)
    if device == "meta":
        return
    got = _host(x)
    solved_first = slice(zero_at + 1, n) if upper else slice(0, zero_at)  # rows that do not depend on it
    assert not np.isfinite(got[zero_at]).any()
    assert np.isfinite(got[solved_first]).all()
    tri = np.triu(a) if upper else np.tril(a)
    sub = tri[solved_first, solved_first]
    want = np.linalg.solve(sub, b[solved_first]) if sub.size else b[solved_first]
    np.testing.assert_allclose(got[solved_first], want, rtol=0, atol=TOL[dtype] * 100 * n)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [4, 100])
def test_tri_solve_nan_input(device, dtype, n):
    """NaN reaches every solution entry that depends on it; the columns and matrices that do not stay finite
    (within a column, an algorithm may spread it further: 0 * NaN in a block product)."""
    rng = np.random.default_rng(8)
    a = _triangular(rng, (2, n, n), False, False, garbage=0.0)
    b = rng.standard_normal((2, n, 3))
    a[0, n - 1, 0] = np.nan  # the last row of matrix 0
    b[1, 1, 0] = np.nan  # column 0 of matrix 1 from row 1 on
    x = ops._linalg_tri_solve(_t(a, device, dtype), _t(b, device, dtype), False)
    assert tuple(x.shape) == (2, n, 3)
    if device == "meta":
        return
    got = _host(x)
    assert np.isnan(got[0, n - 1]).all()
    assert np.isnan(got[1, 1:, 0]).all() and np.isfinite(got[1, :, 1:]).all()
    np.testing.assert_allclose(got[1, :, 1:], np.linalg.solve(np.tril(a[1]), b[1, :, 1:]), rtol=0,
                               atol=TOL[dtype] * 100 * n)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n", [40, 200])
def test_tri_solve_ill_conditioned(device, n):
    """Rows scaled from 1 to 1e-8 (condition number ~1e8): the residual stays small relative to |A| |X| + |B|
    (componentwise backward stability)."""
    rng = np.random.default_rng(9)
    scale = np.geomspace(1, 1e-8, n)[:, None]
    a = scale * (np.tril(rng.uniform(-1, 1, (n, n)) / n, -1) + np.eye(n))
    b = rng.standard_normal((n, 4))
    x = ops._linalg_tri_solve(_t(a, device, "float64"), _t(b, device, "float64"), False)
    if device == "meta":
        return
    got = _host(x)
    bound = (np.abs(a) @ np.abs(got) + np.abs(b)) * n * 1e-15
    assert (np.abs(a @ got - b) <= bound).all()


# -- _linalg_cholesky_lower -----------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_cholesky_sizes(device, dtype, n):
    a = _spd(np.random.default_rng(n), (n, n))
    _check_cholesky(ops._linalg_cholesky_lower(_t(a, device, dtype)), a, device, dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(256, 8, 8), (3, 32, 32), (2, 3, 65, 65), (2, 130, 130), (0, 5, 5), (3, 0, 0),
                                   (0, 0)], ids=str)
def test_cholesky_batched(device, dtype, shape):
    a = _spd(np.random.default_rng(11), shape)
    _check_cholesky(ops._linalg_cholesky_lower(_t(a, device, dtype)), a, device, dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [6, 100])
def test_cholesky_non_contiguous_and_expanded(device, dtype, n):
    rng = np.random.default_rng(12)
    a = _spd(rng, (2, n, n), garbage=0.0)
    a = a + np.swapaxes(np.tril(a, -1), -1, -2)  # symmetric: its transpose reads the same lower triangle
    wide = np.zeros((2, n, 2 * n))
    wide[..., ::2] = a
    A = _t(wide, device, dtype)[..., ::2]
    assert not A.is_contiguous()
    _check_cholesky(ops._linalg_cholesky_lower(A), a, device, dtype)
    _check_cholesky(ops._linalg_cholesky_lower(A.mT), a, device, dtype)
    E = _t(a[0], device, dtype).expand(3, n, n)
    _check_cholesky(ops._linalg_cholesky_lower(E), np.broadcast_to(a[0], (3, n, n)), device, dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n,fail_at", [(1, 1), (8, 5), (64, 64), (70, 5), (70, 64), (70, 65), (70, 66), (130, 129),
                                       (257, 257), (257, 193)])
def test_cholesky_info_of_non_positive_definite(device, dtype, n, fail_at):
    rng = np.random.default_rng(13)
    a = np.stack([_failing(rng, n, fail_at), _spd(rng, (n, n)), _failing(rng, n, max(1, fail_at - 3))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = ops._linalg_cholesky_lower(_t(a, device, dtype))
    _check_cholesky(result, a, device, dtype, info=[fail_at, 0, max(1, fail_at - 3)])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_cholesky_small_pivots(device, dtype):
    a = np.array([[[4.0]], [[0.0]], [[-1.0]], [[np.nan]]])  # (an inf pivot: implementations differ)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        L, info = ops._linalg_cholesky_lower(_t(a, device, dtype))
    assert tuple(L.shape) == (4, 1, 1)
    if device != "meta":
        assert np.asarray(info.numpy(force=True)).tolist() == [0, 1, 1, 1]
        assert _host(L)[0, 0, 0] == 2.0


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n,row,col", [(10, 0, 0), (10, 6, 2), (100, 80, 3), (100, 99, 70), (130, 128, 128)])
def test_cholesky_nan_input(device, dtype, n, row, col):
    """A NaN at (row, col) of the lower triangle makes pivot ``row`` the first NaN: info row + 1; NaN above the
    diagonal is never read."""
    rng = np.random.default_rng(14)
    a = _spd(rng, (2, n, n), garbage=np.nan)
    a[0, row, col] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = ops._linalg_cholesky_lower(_t(a, device, dtype))
    _check_cholesky(result, a, device, dtype, info=[row + 1, 0])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n", [50, 150])
def test_cholesky_ill_conditioned(device, n):
    a = _spd(np.random.default_rng(15), (n, n), cond=1e10, garbage=0.0)
    L, info = ops._linalg_cholesky_lower(_t(a, device, "float64"))
    if device == "meta":
        return
    assert int(info.item()) == 0
    low = np.tril(a)
    sym = low + np.tril(low, -1).T
    l = _host(L)
    np.testing.assert_allclose(l @ l.T, sym, rtol=0, atol=n * 1e-15 * np.abs(sym).max())


# -- the CUDA host side on CPU tensors, each launch run by a NumPy model of its kernel --------------------------
def _memory(ptr, dtype, shape, strides):
    """A NumPy view of ``shape`` / element ``strides`` over raw memory at ``ptr`` (non-negative strides)."""
    np_dtype = np.dtype(dtype)
    if 0 in shape:
        return np.empty(shape, np_dtype)
    extent = 1 + sum((s - 1) * st_ for s, st_ in zip(shape, strides))
    base = np.ctypeslib.as_array((ctypes.c_byte * (extent * np_dtype.itemsize)).from_address(ptr)).view(np_dtype)
    return np.lib.stride_tricks.as_strided(base, shape, [s * np_dtype.itemsize for s in strides])


def _trsm_model(nb, dtype, tri, tsb, tsr, tsc, rhs, rsb, rsr, rsc, sub, out, osb, osr, osc, batch, h, k,
                col_blocks, upper, unit, warps):
    """trsm_block: out = T^-1 (rhs - sub) per matrix, with the kernel's reads (own triangle; the diagonal
    unless unit; upper as the reversed lower) and its column coverage (col_blocks x warps columns)."""
    assert 1 <= h <= nb and col_blocks * warps >= k and (col_blocks - 1) * warps < k
    A = _memory(tri, dtype, (batch, h, h), (tsb, tsr, tsc))
    R = _memory(rhs, dtype, (batch, h, k), (rsb, rsr, rsc))
    S = _memory(sub, dtype, (batch, h, k), (h * k, k, 1)) if sub else None
    X = _memory(out, dtype, (batch, h, k), (osb, osr, osc))
    order = np.arange(h)[::-1] if upper else np.arange(h)
    own = np.tril(np.ones((h, h), bool), -1) | (np.eye(h, dtype=bool) & (not unit))
    for b in range(batch):
        T = np.where(own, A[b][np.ix_(order, order)], np.eye(h, dtype=dtype))
        v = R[b][order] - (S[b][order] if S is not None else 0)
        for j in range(h):
            v[j] = v[j] / T[j, j]
            v[j + 1:] -= T[j + 1:, j, None] * v[j]
        X[b][order] = v


def _chol_model(nb, dtype, src, ssb, ssr, ssc, L, n, info, batch, h, r0, threads):
    """chol_block: the deferred-scaling factorization of the h x h block, L's block and zeros, info."""
    assert 1 <= h <= nb and threads % nb == 0 and r0 + h <= n
    A = _memory(src, dtype, (batch, h, h), (ssb, ssr, ssc))
    Lm = _memory(L, dtype, (batch, n, n), (n * n, n, 1))
    I = _memory(info, np.int32, (batch,), (1,))
    for b in range(batch):
        S = np.where(np.tril(np.ones((h, h), bool)), A[b], 0).astype(dtype)
        fail = -1
        for j in range(h):
            d = S[j, j]
            if fail < 0 and not d > 0:
                fail = j
            t = S[j + 1:, j] / d
            S[j + 1:, j + 1:] -= np.tril(np.outer(S[j + 1:, j], t))
        diag = np.sqrt(np.diagonal(S)).astype(dtype)
        Lblock = np.tril(S / diag[None, :], -1) + np.diag(diag)
        Lm[b, r0:r0 + h, r0:r0 + h] = Lblock
        Lm[b, r0:r0 + h, r0 + h:] = 0
        if r0 == 0:
            I[b] = 0 if fail < 0 else fail + 1
        elif fail >= 0 and I[b] == 0:
            I[b] = r0 + fail + 1


@pytest.fixture
def emulated(monkeypatch):
    """The CUDA kernel functions (``_linalg_tri_solve``, ``_linalg_cholesky_lower``), called on CPU tensors with
    their launches run by the models above; ``launches`` records the kernel names in order."""
    from strided.backends.cuda.kernels import linalg_triangular_ops as glue
    from strided.backends.cuda.matmul import float32_scope

    launches = []

    def launch(like, name, fmt, units, threads, *values):
        values = struct.unpack(fmt, struct.pack(fmt, *values))  # what the kernel would receive
        assert name in glue.KERNELS and units >= 1 and threads % 32 == 0 and threads <= 1024
        if like.dtype is st.float32:  # the GEMMs between launches run without TF32
            assert float32_scope.tf32 is False
        dtype = like.dtype.numpy_dtype
        launches.append(name)
        kind, nb = name.rsplit("_", 1)
        if kind == "trsm_block":
            _trsm_model(int(nb), dtype, *values, warps=threads // 32)
        else:
            assert kind == "chol_block"
            _chol_model(int(nb), dtype, *values, threads=threads)

    monkeypatch.setattr(glue, "_launch", launch)
    return SimpleNamespace(tri_solve=glue._linalg_tri_solve, cholesky=glue._linalg_cholesky_lower, NB=glue.NB,
                           launches=launches)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("upper,unit", [(False, False), (True, False), (True, True)])
def test_glue_tri_solve_emulated(emulated, dtype, n, upper, unit):
    rng = np.random.default_rng(20 + n)
    for a_shape, b_shape in (((n, n), (n, 70)), ((2, 1, n, n), (3, n, 2))):
        a = _triangular(rng, a_shape, upper, unit)
        b = rng.standard_normal(b_shape)
        emulated.launches.clear()
        x = emulated.tri_solve(_t(a, "cpu", dtype), _t(b, "cpu", dtype), upper, unit)
        _check_solve(x, a, b, upper, unit, "cpu", dtype)
        heights = [min(emulated.NB, n - r0) for r0 in range(0, n, emulated.NB)]  # (upper: in reverse)
        assert sorted(emulated.launches) == sorted(f"trsm_block_{32 if h <= 32 else 64}" for h in heights)


def test_glue_keeps_tf32_out_of_factorizations(emulated):
    """Under ``set_float32_matmul_precision("high")`` the launches run in a full-float32 scope (checked in
    ``emulated``), the setting is untouched, and bad arguments raise before any launch."""
    from strided.backends.cuda import matmul

    rng = np.random.default_rng(22)
    matmul.set_float32_matmul_precision("high")
    try:
        a = _spd(rng, (100, 100))
        _check_cholesky(emulated.cholesky(_t(a, "cpu", "float32")), a, "cpu", "float32")
        assert matmul.get_float32_matmul_precision() == "high"
        t = _triangular(rng, (100, 100), True, False)
        b = rng.standard_normal((100, 2))
        _check_solve(emulated.tri_solve(_t(t, "cpu", "float32"), _t(b, "cpu", "float32"), True), t, b, True, False,
                     "cpu", "float32")
        assert matmul.get_float32_matmul_precision() == "high"
        emulated.launches.clear()
        with pytest.raises(RuntimeError, match="expected A"):
            emulated.tri_solve(_t(t, "cpu", "float32"), _t(b[:5], "cpu", "float32"), True)
        assert matmul.get_float32_matmul_precision() == "high" and emulated.launches == []
        assert matmul.float32_scope.tf32 is None
    finally:
        matmul.set_float32_matmul_precision("highest")


def test_full_float32_scope_is_per_thread():
    """The scope nests (the innermost wins, the outer comes back), ends on an exception, and neither changes the
    process-wide flag nor reaches another thread (Note [Full float32 scopes])."""
    from strided.backends.cuda import matmul

    seen = []
    with matmul.float32_matmuls(True):
        with matmul.full_float32_matmuls():
            assert matmul.float32_scope.tf32 is False
        assert matmul.float32_scope.tf32 is True
        worker = threading.Thread(target=lambda: seen.append(matmul.float32_scope.tf32))
        worker.start()
        worker.join()
        assert matmul.get_float32_matmul_precision() == "highest"
    assert seen == [None] and matmul.float32_scope.tf32 is None
    with pytest.raises(KeyError), matmul.full_float32_matmuls():
        raise KeyError("inside the scope")
    assert matmul.float32_scope.tf32 is None
