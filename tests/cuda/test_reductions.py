"""CUDA reductions, scans, softmax, layer_norm and cross_entropy at sizes that take every path of
the engine (warp and block rows, outer columns, split reductions), against float64 NumPy (and
torch on the GPU when it is importable): layouts, keepdim, zero-size, poisoned outputs, NaN rules
and run-to-run determinism."""

from __future__ import annotations

import math

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]

try:
    import torch

    HAVE_TORCH_CUDA = torch.cuda.is_available()
except Exception:  # noqa: BLE001 - torch is an optional yardstick
    torch = None
    HAVE_TORCH_CUDA = False

RNG = np.random.default_rng(7)


def _gpu(a):
    return st.from_numpy(np.ascontiguousarray(a)).to("cuda")


def _np(t):
    return t.cpu().numpy()


def _poison(nbytes):
    """Leave NaN-filled blocks in the caching allocator so that unwritten outputs show."""
    for n in (nbytes, 512, 4096, 1 << 16):
        p = st.full((max(n // 4, 1),), math.nan, device="cuda")
        del p


def _close(got, want, rtol=2e-5, atol=1e-5):
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), want, rtol=rtol, atol=atol, equal_nan=True)


# (shape, dim) pairs covering: warp rows, block rows, split rows, outer columns, narrow columns.
LAYOUTS = [((512, 777), 1), ((64, 100_003), 1), ((3, 1 << 20), 1), ((1 << 21,), 0), ((4097, 1000), 0),
           ((100_000, 3), 0), ((37, 129, 65), (0, 2)), ((16, 8, 3000), 1)]


@pytest.mark.parametrize("shape,dim", LAYOUTS)
def test_sum_mean_paths(shape, dim):
    a = RNG.standard_normal(shape).astype(np.float32)
    x = _gpu(a)
    axis = dim if isinstance(dim, int) else tuple(dim)
    _poison(a.nbytes)
    _close(_np(st.sum(x, dim)), a.astype(np.float64).sum(axis=axis), rtol=1e-4, atol=1e-3)
    _close(_np(st.mean(x, dim, True)), a.astype(np.float64).mean(axis=axis, keepdims=True), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("view", ["t", "slice", "permute"])
def test_noncontiguous_inputs(view):
    a = RNG.standard_normal((300, 2048)).astype(np.float32)
    x = _gpu(a)
    if view == "t":
        xv, av = x.t(), a.T
    elif view == "slice":
        xv, av = x[:, 1::3], a[:, 1::3]
    else:
        xv, av = x.reshape(300, 32, 64).permute(2, 0, 1), a.reshape(300, 32, 64).transpose(2, 0, 1)
    for d in range(xv.dim()):
        _close(_np(st.sum(xv, d)), av.astype(np.float64).sum(axis=d), rtol=1e-4, atol=1e-3)
        _close(_np(st.amax(xv, d)), av.max(axis=d))
    _close(_np(st.sum(xv)), av.astype(np.float64).sum(), rtol=1e-4)
    assert int(_np(st.argmax(xv))) == int(np.argmax(av))


def test_half_types_accumulate_in_float():
    a = RNG.random((256, 5000)).astype(np.float32)
    for d in (st.float16, st.bfloat16):
        x = _gpu(a).to(d)
        ref = _np(x.float()).astype(np.float64)
        tol = 1e-2 if d is st.bfloat16 else 2e-3
        _close(_np(st.sum(x, 1).float()), ref.sum(1), rtol=tol)
        _close(_np(st.sum(x, 0).float()), ref.sum(0), rtol=tol)
        _close(_np(st.var(x, 1).float()), ref.var(1, ddof=1), rtol=3 * tol, atol=1e-3)


def test_integer_and_logical():
    a = RNG.integers(-5, 6, (1000, 999)).astype(np.int32)
    x = _gpu(a)
    s = st.sum(x, 1)
    assert s.dtype is st.int64
    np.testing.assert_array_equal(_np(s), a.astype(np.int64).sum(1))
    np.testing.assert_array_equal(_np(st.sum(x)), a.astype(np.int64).sum())
    np.testing.assert_array_equal(_np(st.amin(x, 0)), a.min(0))
    np.testing.assert_array_equal(_np(st.all(x != 0, 1)), (a != 0).all(1))
    np.testing.assert_array_equal(_np(st.any(x == 5, 0)), (a == 5).any(0))


@pytest.mark.parametrize("dim", [0, 1])
def test_max_min_indices_ties_and_nan(dim):
    a = RNG.integers(0, 4, (3000, 700)).astype(np.float32)  # many ties: the first index wins
    a[17, 5] = np.nan
    a[2000, 5] = np.nan
    a[5, 600] = np.nan
    x = _gpu(a)
    v, i = st.max(x, dim)
    ref_i = np.argmax(a, axis=dim)  # NumPy: first extreme, NaN counts as the extreme
    np.testing.assert_array_equal(_np(i), ref_i)
    _close(_np(v), np.take_along_axis(a, np.expand_dims(ref_i, dim), dim).squeeze(dim))
    v, i = st.min(x, dim, keepdim=True)
    np.testing.assert_array_equal(_np(i), np.argmin(a, axis=dim, keepdims=True))
    np.testing.assert_array_equal(_np(st.argmin(x, dim)), np.argmin(a, axis=dim))
    assert math.isnan(float(st.amax(x))) and math.isnan(float(st.max(x)))


def test_statistics_large():
    a = (RNG.standard_normal((200, 30_000)) * 3 + 100).astype(np.float32)
    x = _gpu(a)
    a64 = a.astype(np.float64)
    for d in (0, 1, None):
        _close(_np(st.var(x, d)), a64.var(axis=d, ddof=1), rtol=1e-3, atol=1e-4)
        _close(_np(st.std(x, d, correction=0)), a64.std(axis=d), rtol=1e-3, atol=1e-4)
    for p in (2, 1, math.inf, -math.inf, 0, 3.5):
        want = np.linalg.norm(a64.reshape(-1), ord=p) if p not in (0, 3.5) else (
            np.count_nonzero(a64) if p == 0 else (np.abs(a64) ** p).sum() ** (1 / p))
        _close(_np(st.norm(x, p)), want, rtol=1e-4)
    _close(_np(st.logsumexp(x, 1)), np.log(np.exp(a64 - a64.max(1, keepdims=True)).sum(1)) + a64.max(1),
           rtol=1e-5)
    _close(_np(st.prod(_gpu(np.full((3, 100_000), 1.0001, np.float64)), 1)), np.full(3, 1.0001 ** 100_000),
           rtol=1e-9)


def test_zero_size_and_identities():
    x = st.empty((0, 5), device="cuda")
    _poison(64)
    np.testing.assert_array_equal(_np(st.sum(x, 0)), np.zeros(5, np.float32))
    np.testing.assert_array_equal(_np(st.prod(x, 0)), np.ones(5, np.float32))
    assert np.isnan(_np(st.mean(x, 0))).all()
    assert _np(st.all(x, 0)).all() and not _np(st.any(x, 0)).any()
    assert np.isneginf(_np(st.logsumexp(x, 0))).all()
    assert st.sum(x, 1).shape == (0,) and st.softmax(x, 1).shape == (0, 5)
    with pytest.raises(IndexError, match="Expected reduction dim 0 to have non-zero size"):
        st.amax(x, 0)


def test_deterministic_bits():
    a = RNG.standard_normal((1 << 22,)).astype(np.float32)
    x = _gpu(a)
    m = _gpu(RNG.standard_normal((20_000, 300)).astype(np.float32))
    for fn in (lambda: st.sum(x), lambda: st.var(x), lambda: st.sum(m, 0), lambda: st.norm(m),
               lambda: st.softmax(m, 1), lambda: st.cumsum(x, 0)):
        assert np.array_equal(_np(fn()), _np(fn()), equal_nan=True)


@pytest.mark.parametrize("shape,dim", [((300, 5000), 1), ((1000, 50), 1), ((700, 300), 0), ((4, 5, 6000), 1),
                                       ((64, 16384), 1), ((16, 40_000), 1), ((2000, 2048), 1),
                                       ((333, 96), 1), ((50, 32768), 1)])
def test_softmax_log_softmax(shape, dim):
    a = (RNG.standard_normal(shape) * 4).astype(np.float32)
    x = _gpu(a)
    a64 = a.astype(np.float64)
    z = a64 - a64.max(axis=dim, keepdims=True)
    lse = np.log(np.exp(z).sum(axis=dim, keepdims=True))
    _poison(a.nbytes)
    _close(_np(st.softmax(x, dim)), np.exp(z - lse), rtol=1e-4, atol=1e-7)
    _close(_np(st.log_softmax(x, dim)), z - lse, rtol=1e-5, atol=1e-5)
    xb = x.to(st.bfloat16)
    _close(_np(st.softmax(xb, dim, st.float32)), _np(st.softmax(xb.float(), dim)), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("n", [40, 4096, 16384])  # lanes, a block of registers, shared memory (Note [Softmax paths])
def test_softmax_nan_rules(n):
    rows = np.array([[-np.inf] * n, [np.inf] + [1.0] * (n - 1), [-np.inf] + [0.0] * (n - 1),
                     [1.0] * (n - 1) + [np.nan]], np.float32)
    got = _np(st.softmax(_gpu(rows), 1))
    assert np.isnan(got[0]).all() and np.isnan(got[1]).all() and np.isnan(got[3]).all()
    _close(got[2], np.r_[0.0, np.full(n - 1, 1 / (n - 1))], rtol=1e-6)


@pytest.mark.parametrize("shape,n", [((2000, 4096), 1), ((64, 50_000), 1), ((8, 30, 33), 2), ((5000, 20), 1)])
def test_layer_norm(shape, n):
    a = (RNG.standard_normal(shape) * 2 + 5).astype(np.float32)
    norm_shape = shape[-n:]
    w = RNG.standard_normal(norm_shape).astype(np.float32)
    b = RNG.standard_normal(norm_shape).astype(np.float32)
    axes = tuple(range(a.ndim - n, a.ndim))
    a64 = a.astype(np.float64)
    mu = a64.mean(axis=axes, keepdims=True)
    y = (a64 - mu) / np.sqrt(a64.var(axis=axes, keepdims=True) + 1e-5)
    _poison(a.nbytes)
    _close(_np(st.layer_norm(_gpu(a), list(norm_shape), _gpu(w), _gpu(b))), y * w + b, rtol=1e-4, atol=1e-4)
    _close(_np(st.layer_norm(_gpu(a), list(norm_shape))), y, rtol=1e-4, atol=1e-4)
    h = _gpu(a).to(st.bfloat16)
    got = _np(st.layer_norm(h, list(norm_shape), _gpu(w), _gpu(b)).float())
    _close(got, _np(st.layer_norm(h.float(), list(norm_shape), _gpu(w), _gpu(b))), rtol=2e-2, atol=3e-2)


@pytest.mark.parametrize("shape,dim", [((3, 100_000), 1), ((5000, 64), 0), ((7, 3000, 5), 1), ((50,), 0)])
def test_cumsum(shape, dim):
    a = RNG.integers(-3, 4, shape).astype(np.int64)
    x = _gpu(a)
    np.testing.assert_array_equal(_np(st.cumsum(x, dim)), np.cumsum(a, axis=dim))
    f = RNG.random(shape).astype(np.float32)
    _close(_np(st.cumsum(_gpu(f), dim)), np.cumsum(f.astype(np.float64), axis=dim), rtol=1e-4, atol=1e-3)
    t = _gpu(f).transpose(0, -1) if len(shape) > 1 else _gpu(f)
    _close(_np(st.cumsum(t, 0)), np.cumsum(np.swapaxes(f, 0, -1).astype(np.float64), axis=0), rtol=1e-4,
           atol=1e-3)


def test_cross_entropy_large_and_invalid_target():
    a = RNG.standard_normal((4096, 1000)).astype(np.float32)
    t = RNG.integers(0, 1000, 4096)
    t[::7] = -100
    a64 = a.astype(np.float64)
    lp = a64 - a64.max(1, keepdims=True)
    lp = lp - np.log(np.exp(lp).sum(1, keepdims=True))
    keep = t != -100
    nll = -lp[np.arange(4096), np.where(keep, t, 0)] * keep
    x, tg = _gpu(a), _gpu(t)
    _close(_np(st.cross_entropy_loss(x, tg, None, 1)), nll.sum() / keep.sum(), rtol=1e-5)
    _close(_np(st.cross_entropy_loss(x, tg, None, 0)), nll, rtol=1e-5, atol=1e-6)
    bad = t.copy()
    bad[3] = 1000  # out of range: NaN (Note [cross_entropy on CUDA]), never a fault
    got = _np(st.cross_entropy_loss(x, _gpu(bad), None, 0))
    assert np.isnan(got[3]) and not np.isnan(np.delete(got, 3)).any()
    assert np.isnan(_np(st.cross_entropy_loss(x, _gpu(bad), None, 1)))


@pytest.mark.skipif(not HAVE_TORCH_CUDA, reason="torch with CUDA is not importable")
def test_against_torch_on_gpu():
    a = RNG.standard_normal((1024, 3000)).astype(np.float32)
    x, ta = _gpu(a), torch.from_numpy(a).cuda()
    pairs = [(st.sum(x, 0), ta.sum(0)), (st.sum(x, 1), ta.sum(1)), (st.softmax(x, 1), torch.softmax(ta, 1)),
             (st.layer_norm(x, [3000]), torch.nn.functional.layer_norm(ta, [3000])),
             (st.logsumexp(x, 1), torch.logsumexp(ta, 1)), (st.var(x, 0), ta.var(0))]
    for ours, theirs in pairs:
        _close(_np(ours), theirs.double().cpu().numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("rows,D,dtype", [(1024, 768, st.float32), (1024, 768, st.bfloat16), (64, 8192, st.float32),
                                          (3, 50001, st.float32), (5000, 3, st.float16)])
def test_fused_layer_norm_backward_matches_cpu(rows, D, dtype):
    """Warp-per-row and block-per-row groups, several row chunks in the column pass, odd widths."""
    rng = np.random.default_rng(rows + D)
    host = [st.from_numpy(rng.standard_normal(s).astype(np.float32)).to(dtype) for s in ((rows, D), (rows, D), (D,))]
    mask = [True, True, True]
    want = st.ops.aten._layer_norm_backward(host[0], host[1], [D], host[2], 1e-5, mask)
    got = st.ops.aten._layer_norm_backward(*(t.cuda() for t in host[:2]), [D], host[2].cuda(), 1e-5, mask)
    tol = {st.float32: 2e-4, st.bfloat16: 3e-2, st.float16: 4e-3}[dtype]
    for w, g in zip(want, got):
        w, g = w.float().numpy(), g.cpu().float().numpy()
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol * max(1.0, float(np.abs(w).max())))


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("shape,dim,dtype", [((48, 256, 256), -1, st.float32), ((1024, 50257), 1, st.float32),
                                             ((64, 4096), -1, st.bfloat16), ((8, 300, 5), 1, st.float16)])
def test_fused_softmax_backward_matches_cpu(shape, dim, dtype, log):
    """Warp and block row groups, 50257-wide rows, a middle dim (moved last), half types."""
    rng = np.random.default_rng(sum(shape))
    x = st.from_numpy(rng.standard_normal(shape).astype(np.float32))
    y = (st.log_softmax if log else st.softmax)(x, dim).to(dtype)
    g = st.from_numpy(rng.standard_normal(shape).astype(np.float32)).to(dtype)
    op = st.ops.aten._log_softmax_backward_data if log else st.ops.aten._softmax_backward_data
    want = op(g, y, dim, dtype).float().numpy()
    got = op(g.cuda(), y.cuda(), dim, dtype).cpu().float().numpy()
    tol = {st.float32: 1e-5, st.bfloat16: 2e-2, st.float16: 4e-3}[dtype]
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, float(np.abs(want).max())))
