"""nanmedian / nanquantile (Note [NaN-ignoring order statistics]): lines of NaN only, and torch's results."""

from __future__ import annotations

import math

import numpy as np
import pytest

import strided as st

ROWS = np.array([[1.0, np.nan, 3.0, 2.0], [np.nan] * 4, [5.0, 4.0, 6.0, 1.0]])


def test_lines_of_nan_give_nan():
    values, indices = st.nanmedian(st.tensor(ROWS), 1)
    assert math.isnan(values[1].item()) and 0 <= indices[1].item() < 4
    np.testing.assert_array_equal(values.numpy()[[0, 2]], [2.0, 4.0])
    assert math.isnan(st.nanmedian(st.tensor([np.nan, np.nan])).item())
    q = st.nanquantile(st.tensor(ROWS), 0.5, dim=1)
    assert math.isnan(q[1].item())
    np.testing.assert_allclose(q.numpy()[[0, 2]], [2.0, 4.5])
    assert st.tensor(ROWS).nanquantile(0.4).item() == pytest.approx(2.4)


def test_matches_torch():
    torch = pytest.importorskip("torch")
    xs, xt = st.tensor(ROWS), torch.tensor(ROWS)
    for interp in ("linear", "lower", "higher", "midpoint", "nearest"):
        for dim in (None, 0, 1):
            np.testing.assert_allclose(st.nanquantile(xs, 0.3, dim=dim, interpolation=interp).numpy(),
                                       torch.nanquantile(xt, 0.3, dim=dim, interpolation=interp).numpy(),
                                       equal_nan=True)
    got = st.nanmedian(xs, 1)
    want = torch.nanmedian(xt, 1)
    np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
    np.testing.assert_array_equal(got.indices.numpy()[[0, 2]], want.indices.numpy()[[0, 2]])  # line 1: unspecified
    g = st.tensor(ROWS[[0, 2]], requires_grad=True)
    st.nanquantile(g, 0.3, dim=1).sum().backward()
    gt = torch.tensor(ROWS[[0, 2]], requires_grad=True)
    torch.nanquantile(gt, 0.3, dim=1).sum().backward()
    np.testing.assert_allclose(g.grad.numpy(), gt.grad.numpy())
