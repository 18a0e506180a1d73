"""topk picks the first k of the stable sort (Note [Sort order]); for k <= n / 4 the CPU kernel finds them by a
partition (Note [Top k by partition]). Checked against an independent oracle -- a lexicographic sort by
(NaN first, value, position) -- on inputs full of ties and NaNs, and against torch where values are distinct."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(5)


def _oracle(a: np.ndarray, k: int, dim: int, largest: bool) -> np.ndarray:
    moved = np.moveaxis(a.astype(np.float64), dim, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    out = []
    for row in rows:
        nan = np.isnan(row)
        value = np.where(nan, 0.0, row)
        position = np.arange(row.size)
        keys = (position, -value, -nan.astype(int)) if largest else (position, value, nan.astype(int))
        out.append(np.lexsort(keys)[:k])
    return np.moveaxis(np.array(out).reshape(moved.shape[:-1] + (k,)), -1, dim)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "int8", "uint8"])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("largest", [True, False])
def test_ties_and_nans_keep_the_stable_order(dtype, dim, largest):
    shape = (3, 40, 24)
    a = RNG.integers(0, 4, shape).astype(np.float64)
    if dtype.startswith(("float", "bfloat")):
        a[RNG.random(shape) < 0.2] = np.nan
        a[RNG.random(shape) < 0.05] = np.inf
    t = st.tensor(a).to(getattr(st, dtype))
    n = shape[dim]
    for k in (1, n // 4, n // 2):
        got = st.topk(t, k, dim, largest)
        want = _oracle(t.float().numpy(), k, dim, largest)
        np.testing.assert_array_equal(got.indices.numpy(), want)
        np.testing.assert_array_equal(got.values.float().numpy(), np.take_along_axis(t.float().numpy(), want, dim))


@pytest.mark.parametrize("dim", [0, -1])
def test_distinct_values_as_torch(dim):
    a = RNG.standard_normal((300, 200)).astype(np.float32)
    for k in (1, 7, 50):
        for largest in (True, False):
            got = st.topk(st.tensor(a), k, dim, largest)
            want = torch.topk(torch.tensor(a), k, dim, largest)
            np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
            np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
