"""``_linalg_lu_factor`` on every available backend -- the composite on the CPU, the fused kernels of
``backends/cuda/kernels/linalg_lu_ops.py`` on CUDA, shapes on meta -- against a float64 NumPy getrf: the exact
pivots, row order and ``info`` (LAPACK's conventions), LU to rounding, and the factorization's properties
(A[perm] = L U, |L| <= 1). Sizes straddle every threshold of the CUDA kernels (the whole-matrix path, the 32-column
panels, panels too tall for shared memory); ties, zero columns, singular, ill-conditioned and NaN input."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided.ops import bound as ops
from strided.testing import available_devices

DEVICES = available_devices()
DATA_DEVICES = [d for d in DEVICES if d != "meta"]
needs_cuda = pytest.mark.skipif("cuda" not in DEVICES, reason="no usable CUDA device here; the GPU run covers it")


def _getrf(a, pivot=True):
    """LAPACK's getrf (getf2's column loop) in float64 NumPy, one matrix: (LU, 1-based pivots, perm, info). The
    first max on ties; a zero pivot leaves its column unscaled and sets info if it is the first."""
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


def _perm_of_pivots(piv, m):
    perm = np.arange(m)
    for j, p in enumerate(piv):
        perm[[j, p - 1]] = perm[[p - 1, j]]
    return perm


def _lu(a, device="cpu", pivot=True, dtype=None):
    t = st.tensor(np.asarray(a), device=device)
    if dtype is not None:
        t = t.to(dtype)
    return ops._linalg_lu_factor(t, pivot)


def _host(t):
    return np.asarray(t.cpu().numpy())


def _check_layout(out, batch, m, n, dtype, device):
    LU, piv, perm, info = out
    k = min(m, n)
    assert tuple(LU.shape) == (*batch, m, n) and LU.dtype is dtype and LU.is_contiguous()
    assert tuple(piv.shape) == (*batch, k) and piv.dtype is st.int32
    assert tuple(perm.shape) == (*batch, m) and perm.dtype is st.int64
    assert tuple(info.shape) == tuple(batch) and info.dtype is st.int32
    assert all(t.device.type == device for t in out)


def _check_properties(a, out, rtol):
    """A[perm] = L U to ``rtol`` of |A|, |L| <= 1, perm the composition of the pivots' swaps, pivots in range."""
    LU, piv, perm, _ = (_host(t) for t in out)
    m, n = a.shape[-2:]
    k = min(m, n)
    for i in np.ndindex(*a.shape[:-2]):
        L = np.tril(LU[i][:, :k].astype(np.float64), -1) + np.eye(m, k)
        U = np.triu(LU[i][:k, :].astype(np.float64))
        np.testing.assert_array_equal(perm[i], _perm_of_pivots(piv[i], m))
        assert np.all(piv[i] >= np.arange(1, k + 1)) and np.all(piv[i] <= m)
        assert np.abs(L).max() <= 1 + 1e-6
        scale = max(np.abs(a[i]).max(), 1e-300)
        np.testing.assert_allclose(L @ U, a[i][perm[i]], rtol=0, atol=rtol * scale * max(m, n))


def _check_exact(a, out, pivot=True, rtol=1e-11):
    """pivots, perm and info exactly as the reference's; LU to rounding."""
    LU, piv, perm, info = (_host(t) for t in out)
    for i in np.ndindex(*a.shape[:-2]):
        want_lu, want_piv, want_perm, want_info = _getrf(a[i], pivot)
        np.testing.assert_array_equal(piv[i], want_piv, err_msg=f"pivots of batch element {i}")
        np.testing.assert_array_equal(perm[i], want_perm, err_msg=f"perm of batch element {i}")
        assert info[i] == want_info, f"info of batch element {i}: {info[i]} != {want_info}"
        scale = max(np.abs(want_lu).max(), 1.0)
        np.testing.assert_allclose(LU[i], want_lu, rtol=0, atol=rtol * scale * max(a.shape[-2:]))


def _random(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# around the CUDA kernels' thresholds: the whole matrix in shared memory (min(m, n) <= 64 and <= 48 KiB), 32-column
# panels (multiples and not), panels too tall for shared memory (the last two)
SHAPES = [(1, 1), (2, 2), (31, 31), (32, 32), (33, 33), (64, 64), (65, 65), (100, 100), (130, 130), (257, 257),
          (100, 37), (37, 100), (300, 64), (64, 300), (1, 7), (7, 1), (3, 5, 5), (2, 3, 33, 33), (4, 70, 70),
          (2, 96, 40), (1000, 40), (2000, 33)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_float64_matches_getrf_exactly(device, shape):
    a = _random(shape, seed=shape[-1] + len(shape))
    out = _lu(a, device)
    _check_layout(out, shape[:-2], *shape[-2:], st.float64, device)
    if device != "meta":
        _check_exact(a, out)
        _check_properties(a, out, 1e-13)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_float32_factorization_properties(device, shape):
    a = _random(shape, seed=shape[-2] + 3).astype(np.float32)
    out = _lu(a, device)
    _check_layout(out, shape[:-2], *shape[-2:], st.float32, device)
    if device != "meta":
        _check_properties(a, out, 2e-6)
        np.testing.assert_array_equal(_host(out[3]), np.zeros(shape[:-2], np.int32))


def _hadamard_rows(size, seed):
    """A Sylvester Hadamard matrix with its rows shuffled and sign-flipped: getrf of any top-left block of it stays
    in small dyadic rationals (exact in float32 too; checked with fractions.Fraction when this test was written),
    and almost every column search has several rows of the same largest |value|, often singular blocks."""
    h = np.array([[1.0]])
    while h.shape[0] < size:
        h = np.block([[h, h], [h, -h]])
    rng = np.random.default_rng(seed)
    return h[rng.permutation(size)] * rng.choice([-1.0, 1.0], (size, 1))


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("dtype", [st.float64, st.float32], ids=str)
@pytest.mark.parametrize("shape", [(2, 2), (33, 33), (64, 64), (65, 65), (100, 100), (70, 40), (40, 70), (128, 128),
                                   (200, 200)], ids=str)
def test_ties_pick_the_first_row_and_exact_zero_pivots_set_info(device, dtype, shape):
    a = np.stack([_hadamard_rows(256 if shape[0] > 128 else 128, s)[:shape[0], :shape[1]] for s in range(2)])
    want_lu = _getrf(a[0])[0]
    assert np.array_equal(want_lu * 64, np.round(want_lu * 64))  # the input keeps the arithmetic exact
    _check_exact(a, _lu(a, device, dtype=dtype), rtol=0)


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("n", [12, 40, 90])
def test_zero_columns_are_left_unscaled_and_info_is_the_first(device, n):
    a = _random((n, n), 11)
    a[:, 7] = 0  # stays zero at and below the diagonal: an unscaled zero pivot, the factorization goes on
    a[:, n - 3] = 0
    out = _lu(a, device)
    _check_exact(a, out)
    assert _host(out[3]) == 8
    zero = np.zeros((2, n, n))
    LU, piv, perm, info = (_host(t) for t in _lu(zero, device))
    np.testing.assert_array_equal(LU, zero)
    np.testing.assert_array_equal(piv, np.broadcast_to(np.arange(1, n + 1), (2, n)))
    np.testing.assert_array_equal(perm, np.broadcast_to(np.arange(n), (2, n)))
    np.testing.assert_array_equal(info, [1, 1])


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("n", [10, 60, 100])
def test_ill_conditioned_input(device, n):
    i = np.arange(n)
    hilbert = 1.0 / (i[:, None] + i[None, :] + 1)  # cond ~ 1e18 and beyond: only the backward error is small
    vander = np.vander(np.linspace(-1, 1, n), increasing=True)
    a = np.stack([hilbert, vander])
    out = _lu(a, device)
    _check_properties(a, out, 1e-14)
    assert np.all(_host(out[3]) == 0)


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("shape", [(3, 37, 37), (70, 70), (130, 90), (40, 100)], ids=str)
def test_without_pivoting(device, shape):
    a = _random(shape, 12)
    a = a + 3 * max(shape[-2:]) ** 0.5 * np.eye(*shape[-2:])  # diagonally dominant enough: no zero pivots
    out = _lu(a, device, pivot=False)
    _check_exact(a, out, pivot=False)
    k = min(shape[-2:])
    np.testing.assert_array_equal(_host(out[1]), np.broadcast_to(np.arange(1, k + 1), (*shape[:-2], k)))
    np.testing.assert_array_equal(_host(out[2]), np.broadcast_to(np.arange(shape[-2]), shape[:-1]))
    zero_pivot = _random((5, 5), 13)
    zero_pivot[0, 0] = 0  # left unscaled as getf2 does, info = 1
    _check_exact(zero_pivot, _lu(zero_pivot, device, pivot=False), pivot=False)


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_batched_broadcast_and_non_contiguous_inputs(device):
    base = _random((3, 50, 50), 14)
    t = st.tensor(base, device=device)
    cases = {
        "transposed": (t.mT, np.swapaxes(base, -1, -2)),
        "expanded batch": (t[:1].expand(4, 50, 50), np.broadcast_to(base[:1], (4, 50, 50))),
        "strided rows and columns": (t[:, ::2, 1::2], base[:, ::2, 1::2]),
        "large expanded batch": (st.tensor(_random((1, 70, 70), 15), device=device).expand(3, 2, 70, 70),
                                 np.broadcast_to(_random((1, 70, 70), 15), (3, 2, 70, 70))),
    }
    for name, (x, want) in cases.items():
        assert not x.is_contiguous(), name
        out = ops._linalg_lu_factor(x, True)
        _check_layout(out, want.shape[:-2], *want.shape[-2:], st.float64, device)
        _check_exact(np.ascontiguousarray(want), out)
        np.testing.assert_array_equal(_host(x), want)  # the input is not factored in place


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's invalid-value warnings of the CPU's NaN arithmetic
@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("shape", [(3, 40, 40), (100, 100), (2, 70, 50)], ids=str)
def test_nan_and_inf_input_terminates_with_the_right_shapes(device, shape):
    a = _random(shape, 16).astype(np.float32)
    flat = a.reshape(-1, *shape[-2:])
    flat[0, 3, 0] = np.nan  # NaN wins the first search, as argmax
    if len(flat) > 1:
        flat[1, :, 5] = np.inf
    a_nan = np.full(shape, np.nan, np.float32)
    for x in (a, a_nan):
        out = _lu(x, device)
        _check_layout(out, shape[:-2], *shape[-2:], st.float32, device)
        LU, piv, perm, _ = (_host(t) for t in out)
        k, m = min(shape[-2:]), shape[-2]
        assert np.all((piv >= np.arange(1, k + 1)) & (piv <= m))
        np.testing.assert_array_equal(np.sort(perm, -1), np.broadcast_to(np.arange(m), perm.shape))
        assert np.isnan(LU).any()
    assert _host(_lu(a, device)[1]).reshape(-1, min(shape[-2:]))[0, 0] == 4


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [(0, 3, 3), (3, 0), (0, 4), (2, 0, 5), (0, 0), (2, 5, 0)], ids=str)
def test_empty_input(device, shape):
    out = _lu(np.zeros(shape), device)
    batch, (m, n) = shape[:-2], shape[-2:]
    _check_layout(out, batch, m, n, st.float64, device)
    if device != "meta":
        k = min(m, n)
        np.testing.assert_array_equal(_host(out[1]), np.broadcast_to(np.arange(1, k + 1), (*batch, k)))
        np.testing.assert_array_equal(_host(out[2]), np.broadcast_to(np.arange(m), (*batch, m)))
        np.testing.assert_array_equal(_host(out[3]), np.zeros(batch, np.int32))


@pytest.mark.parametrize("device", DEVICES)
def test_bad_input_is_refused_in_the_composites_words(device):
    with pytest.raises(RuntimeError, match="_linalg_lu_factor: The input tensor A must have at least 2 dimensions"):
        ops._linalg_lu_factor(st.zeros((3,), device=device), True)
    with pytest.raises(RuntimeError, match="_linalg_lu_factor: expected a float32 or float64 tensor, got"):
        ops._linalg_lu_factor(st.zeros((3, 3), dtype=st.int32, device=device), True)


@needs_cuda
@pytest.mark.parametrize("dtype", [st.float64, st.float32], ids=str)
@pytest.mark.parametrize("shape", [(1, 1), (5, 5), (2, 33, 33), (40, 100), (100, 40), (97, 97), (2, 130, 70)], ids=str)
@pytest.mark.parametrize("panel_limit,whole_max_k", [(None, 0), (0, 0), (0, None)], ids=["blocked", "global", "mixed"])
def test_every_cuda_path_matches_the_cpu(monkeypatch, dtype, shape, panel_limit, whole_max_k):
    """The blocked path for small matrices too, and panels in global memory for every size (module knobs)."""
    from strided.backends.cuda.kernels import linalg_lu_ops

    monkeypatch.setattr(linalg_lu_ops, "PANEL_SMEM_LIMIT", panel_limit)
    if whole_max_k is not None:
        monkeypatch.setattr(linalg_lu_ops, "WHOLE_MAX_K", whole_max_k)
    a = _random(shape, 17)
    out = _lu(a, "cuda", dtype=dtype)
    if dtype is st.float64:
        _check_exact(a, out)
    _check_properties(a.astype(np.float32) if dtype is st.float32 else a, out, 2e-6 if dtype is st.float32 else 1e-13)
    h = _hadamard_rows(128, 3)[:shape[-2], :shape[-1]] if max(shape[-2:]) <= 128 else _hadamard_rows(256, 3)[
        :shape[-2], :shape[-1]]
    _check_exact(h, _lu(h, "cuda", dtype=dtype), rtol=0)


@needs_cuda
def test_cuda_matches_the_composite_on_a_large_batch():
    a = _random((300, 24, 24), 18)
    cuda = [_host(t) for t in _lu(a, "cuda")]
    cpu = [_host(t) for t in _lu(a, "cpu")]
    for got, want in zip(cuda[1:], cpu[1:]):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(cuda[0], cpu[0], rtol=0, atol=1e-11)
