"""Note [Blocked sums]: sums over the trailing axes of contiguous float arrays, by blocks, keep a cascade's
accuracy (einsum alone lost it on long rows) and NumPy's shapes; other layouts fall back to NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided.backends.cpu.blocked_sums import _BLOCK, _MIN_SIZE, blocked_row_sums, sum_trailing


@pytest.mark.parametrize("shape", [(512, 1024), (16, 100_003), (4096, 7), (3, _BLOCK * 2 + 5), (1, 300_000)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_sums_are_as_accurate_as_a_cascade(shape, dtype):
    rng = np.random.default_rng(0)
    m = (rng.standard_normal(shape) + 3).astype(dtype)
    exact = m.astype(np.longdouble).sum(axis=1)
    got = blocked_row_sums(m)
    assert got.dtype == dtype and got.shape == (shape[0],)
    eps = np.finfo(dtype).eps
    # a cascade of blocks stays within a few ulps of the row's scale; einsum alone drifted 20x further on 100,000
    assert float(np.max(np.abs(got - exact) / np.abs(exact))) < 8 * eps


def test_sum_trailing_matches_numpy_shapes_and_declines_other_cases():
    a = np.arange(4 * 8 * 300, dtype=np.float64).reshape(4, 8, 300)
    for axes in (2, -1, (1, 2), (2, 1), None):
        for keep in (False, True):
            want = np.add.reduce(a, axis=axes, keepdims=keep)
            got = sum_trailing(a, axes, keep)
            assert got.shape == want.shape and np.allclose(got, want, rtol=1e-14)
    assert sum_trailing(a, 1, False) is None  # not the trailing axes
    assert sum_trailing(a, (0, 2), False) is None
    assert sum_trailing(a.transpose(0, 2, 1), 2, False) is None  # not contiguous
    assert sum_trailing(a.astype(np.int64), 2, False) is None  # integer sums stay NumPy's
    assert sum_trailing(np.ones(_MIN_SIZE - 1), 0, False) is None  # small: NumPy's loop is as fast


def test_tensor_sums_and_softmax_take_the_blocked_path_with_torchs_values():
    x = st.randn(64, 3000)
    ref = x.numpy().astype(np.float64)
    np.testing.assert_allclose(x.sum(-1).numpy(), ref.sum(-1), rtol=2e-6, atol=1e-4)
    np.testing.assert_allclose(x.mean(-1, keepdim=True).numpy(), ref.mean(-1, keepdims=True), rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(x.sum().item(), ref.sum(), rtol=1e-6)
    p = x.softmax(-1).numpy().astype(np.float64)
    np.testing.assert_allclose(p.sum(-1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(x.logsumexp(-1).numpy(), np.log(np.exp(ref).sum(-1)), rtol=1e-6)
