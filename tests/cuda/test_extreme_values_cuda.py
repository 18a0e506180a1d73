"""CUDA kernels on inf / nan / signed zeros as torch's CUDA kernels compute them (found by an extreme-value sweep of
the op database, CUDA against CPU and torch)."""

from __future__ import annotations

import math

import pytest

import strided as st
import strided.cuda as cuda

pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")

INF, NAN = math.inf, math.nan
X = [-INF, -0.0, -1.0, 4.0, INF, NAN]


def _same(got, expected):
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        if math.isnan(e):
            assert math.isnan(g), (got, expected)
        else:
            assert g == e and math.copysign(1, g) == math.copysign(1, e), (got, expected)


@pytest.mark.parametrize("dtype", [st.float32, st.float64, st.float16, st.bfloat16], ids=lambda d: d.name)
def test_pow_half_and_minus_half_are_sqrt_and_rsqrt(dtype):
    # torch's pow_tensor_scalar_kernel on CUDA: 0.5 -> sqrt, -0.5 -> rsqrt (powf would give inf at -inf, +0 at -0)
    x = st.tensor(X, dtype=dtype, device="cuda")
    _same((x ** 0.5).float().tolist(), [NAN, -0.0, NAN, 2.0, INF, NAN])
    _same(st.pow(x, -0.5).float().tolist(), [NAN, -INF, NAN, 0.5, 0.0, NAN])
    _same(st.pow(x, st.tensor(0.5)).float().tolist(), [NAN, -0.0, NAN, 2.0, INF, NAN])  # a 0-dim CPU exponent
    y = x.clone()
    y.pow_(0.5)
    _same(y.float().tolist(), [NAN, -0.0, NAN, 2.0, INF, NAN])
    _same((x ** 1.5).float().tolist(), [INF, 0.0, NAN, 8.0, INF, NAN])  # other exponents: pow
