"""strided.unique / unique_consecutive (Note [unique as sort + boundaries]): the Python forms and what the
op database's NumPy reference cannot check (NaN: each is its own value, as torch)."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st


def test_python_forms_return_what_was_asked():
    x = st.tensor([3, 1, 2, 1, 3, 3])
    np.testing.assert_array_equal(st.unique(x).numpy(), [1, 2, 3])
    values, inverse = st.unique(x, return_inverse=True)
    np.testing.assert_array_equal(values.numpy()[inverse.numpy()], x.numpy())
    values, counts = x.unique(return_counts=True)
    np.testing.assert_array_equal(counts.numpy(), [2, 1, 3])
    values, inverse, counts = st.unique_consecutive(x, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(values.numpy(), [3, 1, 2, 1, 3])
    np.testing.assert_array_equal(inverse.numpy(), [0, 1, 2, 3, 4, 4])
    np.testing.assert_array_equal(counts.numpy(), [1, 1, 1, 1, 2])
    rows = st.tensor([[1, 2], [0, 5], [1, 2]])
    np.testing.assert_array_equal(rows.unique(dim=0).numpy(), [[0, 5], [1, 2]])
    with pytest.raises(TypeError, match="argument 'input' \\(position 1\\) must be Tensor, not list"):
        st.unique([1, 2])


def test_meta_raises_data_dependent():
    with pytest.raises(NotImplementedError, match="meta tensors"):
        st.unique(st.empty(4, device="meta"))


def test_nan_and_inverse_match_torch():
    torch = pytest.importorskip("torch")
    a = np.array([1.0, np.nan, -0.0, 0.0, np.nan, 1.0, np.inf], dtype=np.float32)
    for fn in ("unique", "unique_consecutive"):
        s = getattr(st, fn)(st.tensor(a), return_inverse=True, return_counts=True)
        t = getattr(torch, fn)(torch.tensor(a), return_inverse=True, return_counts=True)
        for x, y in zip(s, t):
            np.testing.assert_array_equal(x.numpy(), y.numpy())
