"""Forward derivatives with a formula of their own (Note [Explicit forward formulas]): logcumsumexp's tangent
against its definition, at any magnitude and at -inf (no torch needed)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import strided as st
import strided.autograd.forward_ad as fwAD


def _lcse_tangent(x, t, dim):
    """sum_{j <= i} softmax_j(x[:i + 1]) t[j], in float64 (Note [Explicit forward formulas])."""
    x, t = np.moveaxis(x.astype(np.float64), dim, -1), np.moveaxis(t.astype(np.float64), dim, -1)
    out = np.empty_like(x)
    for i in range(x.shape[-1]):
        w = np.exp(x[..., :i + 1] - x[..., :i + 1].max(-1, keepdims=True))
        out[..., i] = (w * t[..., :i + 1]).sum(-1) / w.sum(-1)
    return np.moveaxis(out, -1, dim)


@pytest.mark.parametrize("scale", [1.0, 30.0, 300.0])
@pytest.mark.parametrize("dtype, tol", [(np.float32, 1e-4), (np.float64, 1e-12)])
def test_logcumsumexp_tangent_at_any_magnitude(scale, dtype, tol):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((4, 9)) * scale).astype(dtype)
    t = rng.standard_normal((4, 9)).astype(dtype)
    for dim in (0, 1):
        with fwAD.dual_level():
            y = st.logcumsumexp(fwAD.make_dual(st.tensor(x), st.tensor(t)), dim)
            got = fwAD.unpack_dual(y).tangent.numpy()
        np.testing.assert_allclose(got, _lcse_tangent(x, t, dim), rtol=tol, atol=tol)


def test_logcumsumexp_tangent_at_minus_infinity():
    x = st.tensor([-math.inf, 0.0, 1.0], dtype=st.float64)
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(st.logcumsumexp(fwAD.make_dual(x, st.ones(3, dtype=st.float64)), 0)).tangent
        assert tangent.tolist() == [0.0, 1.0, 1.0]  # it was [nan, 1, 1] (torch: [0, 1, 1])
        nan_first = st.tensor([math.nan, 1.0, 1.0], dtype=st.float64)
        tangent = fwAD.unpack_dual(st.logcumsumexp(fwAD.make_dual(x, nan_first), 0)).tangent
        assert all(math.isnan(v) for v in tangent.tolist())
