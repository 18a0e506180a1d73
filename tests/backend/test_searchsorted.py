"""searchsorted / bucketize against torch, NaN included (Note [searchsorted comparisons]), on every
available device (the op database checks NumPy's semantics without NaN)."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided.testing import available_devices


@pytest.mark.parametrize("device", [d for d in available_devices() if d != "meta"])
def test_matches_torch_with_nan(device):
    torch = pytest.importorskip("torch")
    seqs = [np.array([1.0, 3.0, 3.0, np.nan]), np.array([[1.0, np.nan, 4.0], [0.0, 2.0, 2.0]])]
    vals = [np.array([0.0, 3.0, np.nan, 9.0]), np.array([[np.nan, 4.0, 1.0], [2.0, -1.0, np.nan]])]
    for seq, val in zip(seqs, vals):
        for side in ("left", "right"):
            got = st.searchsorted(st.tensor(seq, device=device), st.tensor(val, device=device), side=side)
            want = torch.searchsorted(torch.tensor(seq), torch.tensor(val), side=side)
            np.testing.assert_array_equal(got.numpy(force=True), want.numpy())
    b = np.array([0.5, 2.5, 2.5, 7.0], dtype=np.float32)
    v = np.random.default_rng(0).uniform(-1, 8, 1000).astype(np.float32)
    for right in (False, True):
        got = st.bucketize(st.tensor(v, device=device), st.tensor(b, device=device), right=right, out_int32=True)
        want = torch.bucketize(torch.tensor(v), torch.tensor(b), right=right, out_int32=True)
        assert got.dtype is st.int32
        np.testing.assert_array_equal(got.numpy(force=True), want.numpy())
