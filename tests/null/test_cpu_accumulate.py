"""Note [Accumulation in rounds]: the CPU backend's accumulating writes give np.add.at's sums bit for bit (the
element-by-element order torch's CPU kernels add in), for distinct, repeated and very repeated indices, and torch's
sums on large flat accumulations."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided.backends.cpu import accumulate

RNG = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def rounds_at_any_size(monkeypatch):
    """These arrays are small: take the rounds wherever the cap allows, not np.add.at's cheaper loop."""
    monkeypatch.setattr(accumulate, "MIN_ELEMENTS", 0)
    monkeypatch.setattr(accumulate, "_round_budget", lambda elements: accumulate.MAX_ROUNDS)


@pytest.mark.parametrize("repeats", ["distinct", "some", "many"])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_add_rows_equals_add_at_bit_for_bit(repeats, axis):
    shape = [3, 4, 5]
    size = shape[axis]
    k = {"distinct": size, "some": 3 * size, "many": accumulate.MAX_ROUNDS * 2 + 5}[repeats]
    idx = RNG.permutation(size) if repeats == "distinct" else RNG.integers(0, size, k)
    if repeats == "many":
        idx[:] = 1  # past MAX_ROUNDS: np.add.at itself
    src_shape = list(shape)
    src_shape[axis] = idx.size
    src = RNG.standard_normal(src_shape).astype(np.float32)
    acc = RNG.standard_normal(shape).astype(np.float32)
    want = acc.copy()
    np.add.at(want, (slice(None),) * axis + (idx,), src)
    accumulate.add_rows(acc, axis, idx, src)
    np.testing.assert_array_equal(acc, want)


def test_large_flat_accumulations_equal_torchs_bit_for_bit():
    """scatter_add and the max-pooling backward (add_flat: np.add.at's fast path) over 50k additions with repeats,
    in float32 and float64, against torch's CPU kernels."""
    torch = pytest.importorskip("torch")
    for dtype in ("float32", "float64"):
        base = RNG.standard_normal((64, 96)).astype(dtype)
        idx = RNG.integers(0, 64, (800, 96))
        src = RNG.standard_normal((800, 96)).astype(dtype)
        got = st.tensor(base).scatter_add(0, st.tensor(idx), st.tensor(src)).numpy()
        want = torch.tensor(base).scatter_add(0, torch.tensor(idx), torch.tensor(src)).numpy()
        np.testing.assert_array_equal(got, want)
        x = RNG.standard_normal((4, 8, 30, 30)).astype(dtype)
        grads = []
        for lib in (st, torch):
            t = lib.tensor(x, requires_grad=True)
            lib.nn.functional.max_pool2d(t, 3, 2, 1).mul(lib.tensor(x[:, :, :15, :15])).sum().backward()
            grads.append(t.grad.numpy())
        np.testing.assert_array_equal(grads[0], grads[1])


def test_index_add_and_scatter_add_equal_torchs_bit_for_bit():
    torch = pytest.importorskip("torch")
    for _ in range(50):
        n, k, m = (int(v) for v in RNG.integers(1, 6, 3))
        k *= 4
        base = RNG.standard_normal((n, m)).astype(np.float32)
        idx = RNG.integers(0, n, k)
        src = RNG.standard_normal((k, m)).astype(np.float32)
        got = st.index_add(st.tensor(base), 0, st.tensor(idx), st.tensor(src), alpha=0.5).numpy()
        want = torch.index_add(torch.tensor(base), 0, torch.tensor(idx), torch.tensor(src), alpha=0.5).numpy()
        np.testing.assert_array_equal(got, want)
        idx2 = RNG.integers(0, n, (k, m))
        got = st.scatter_add(st.tensor(base), 0, st.tensor(idx2), st.tensor(src)).numpy()
        want = torch.scatter_add(torch.tensor(base), 0, torch.tensor(idx2), torch.tensor(src)).numpy()
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_index_put_accumulate_equals_add_at_bit_for_bit(dim):
    """``x[..., idx, ...] += v`` (an advanced-indexing backward): one index array, negative indices and a
    broadcast value included; two index arrays keep np.add.at."""
    shape = (3, 4, 5)
    idx = RNG.integers(-shape[dim], shape[dim], 17)
    key = [slice(None)] * 3
    key[dim] = idx
    vshape = list(shape)
    vshape[dim] = idx.size
    base = RNG.standard_normal(shape).astype(np.float32)
    for v in (RNG.standard_normal(vshape).astype(np.float32), np.float32(0.3)):
        indices = [st.tensor(idx) if j == dim else None for j in range(3)]
        got = st.ops.aten.index_put(st.tensor(base), indices, st.tensor(v), True).numpy()
        want = base.copy()
        np.add.at(want, tuple(key), v)
        np.testing.assert_array_equal(got, want)
    rows, cols = RNG.integers(0, 3, 9), RNG.integers(0, 4, 9)
    v = RNG.standard_normal((9, 5)).astype(np.float32)
    got = st.ops.aten.index_put(st.tensor(base), [st.tensor(rows), st.tensor(cols)], st.tensor(v), True).numpy()
    want = base.copy()
    np.add.at(want, (rows, cols), v)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("shape,k", [((50, 40), 2), ((20, 30, 8), 2), ((6, 7, 8, 3), 3)], ids=str)
def test_index_put_accumulate_with_leading_index_arrays_equals_torchs_bit_for_bit(shape, k):
    """``x[i, j] += v`` (index arrays on the leading dims): one flat row index, np.add.at's sums (and torch's, for
    unbroadcast indices), negative indices included."""
    torch = pytest.importorskip("torch")
    base = RNG.standard_normal(shape).astype(np.float32)
    idx = [RNG.integers(-shape[d], shape[d], 4000) for d in range(k)]
    v = RNG.standard_normal((4000, *shape[k:])).astype(np.float32)
    got = st.tensor(base).index_put(tuple(st.tensor(i) for i in idx), st.tensor(v), accumulate=True).numpy()
    want = base.copy()
    np.add.at(want, tuple(idx), v)
    np.testing.assert_array_equal(got, want)
    theirs = torch.tensor(base).index_put(tuple(torch.tensor(i) for i in idx), torch.tensor(v), accumulate=True)
    np.testing.assert_array_equal(got, theirs.numpy())


@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("longest", [1, 2, 3, 7, 8, 12])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_sorted_runs_into_zeros_equal_add_at_bit_for_bit(axis, longest, dtype):
    # Note [Sorted segments]: sorted indices into zeros along a non-leading axis are summed run by run; a nonzero
    # accumulator (and axis 0) takes the rounds; both give np.add.at's sums, signs of zero included
    shape = [6, 7, 9]
    size = shape[axis]
    runs = RNG.integers(1, longest + 1, size)
    runs[RNG.integers(0, size)] = longest
    idx = np.repeat(np.arange(size), runs)
    idx = idx[idx != 2]  # a target no run reaches: not a range, fancy indexing
    src_shape = list(shape)
    src_shape[axis] = idx.size
    src = (RNG.standard_normal(src_shape) * 10.0 ** RNG.integers(-8, 8, src_shape)).astype(dtype)
    if dtype == "complex64":
        src = src + 1j * RNG.standard_normal(src_shape).astype(np.float32)
    flat = src.reshape(-1)
    flat[::11] = -0.0  # signed zeros, specials
    flat[5] = np.inf
    flat[17] = np.nan
    for acc in (np.zeros(shape, dtype), -np.zeros(shape, dtype), RNG.standard_normal(shape).astype(dtype)):
        want = acc.copy()
        np.add.at(want, (slice(None),) * axis + (idx,), src)
        got = acc.copy()
        accumulate.add_rows(got, axis, idx, src)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got.real), np.signbit(want.real))


def test_bilinear_upsampling_gradient_is_torchs():
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((2, 3, 16, 16)).astype(np.float32)
    grads = []
    for lib in (st, torch):
        t = lib.tensor(x, requires_grad=True)
        lib.nn.functional.interpolate(t, scale_factor=2, mode="bilinear").pow(2).sum().backward()
        grads.append(t.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n_in,n_out,align", [(16, 32, False), (16, 48, False), (16, 32, True), (32, 16, False),
                                              (7, 64, False), (16, 16, False)])
@pytest.mark.parametrize("axis", [2, 3])
def test_interpolation_index_patterns_equal_add_at_bit_for_bit(n_in, n_out, align, axis):
    # the lo / hi indices of linear interpolation: a few evenly spaced pieces, summed by slices
    pos = np.arange(n_out, dtype=np.float64)
    src_pos = pos * (n_in - 1) / (n_out - 1) if align else np.maximum((pos + 0.5) * n_in / n_out - 0.5, 0)
    lo = np.clip(np.floor(src_pos), 0, n_in - 1).astype(np.int64)
    for idx in (lo, np.minimum(lo + 1, n_in - 1)):
        shape = [2, 3, 5, 5]
        shape[axis] = n_in
        src_shape = list(shape)
        src_shape[axis] = n_out
        src = RNG.standard_normal(src_shape).astype(np.float32)
        want = np.zeros(shape, np.float32)
        np.add.at(want, (slice(None),) * axis + (idx,), src)
        got = np.zeros(shape, np.float32)
        accumulate.add_rows(got, axis, idx, src)
        np.testing.assert_array_equal(got, want)
