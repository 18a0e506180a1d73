"""igamma / igammac for large ``a`` near ``x`` on CUDA (Note [Incomplete gamma for large a]): the device code's
Temme expansion and prefactor give the CPU's values."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]


@pytest.mark.parametrize("fn", ["igamma", "igammac"])
@pytest.mark.parametrize("dtype", [st.float64, st.float32])
def test_large_a_on_cuda_is_the_cpus(fn, dtype):
    rng = np.random.default_rng(0)
    a = np.exp(rng.uniform(np.log(10.0), np.log(1e12), 4000))
    x = a * (1 + rng.uniform(-0.5, 0.5, 4000) * rng.choice([1.0, 0.1, 0.01, 1e-4], 4000))
    at, xt = st.tensor(a, dtype=dtype), st.tensor(x, dtype=dtype)
    want = getattr(st, fn)(at, xt).numpy()
    got = getattr(st, fn)(at.cuda(), xt.cuda()).cpu().numpy()
    rtol = 1e-11 if dtype is st.float64 else 1e-6
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-300)
    known = getattr(st, fn)(st.tensor([4988429.2, 1e20], dtype=st.float64, device="cuda"),
                            st.tensor([4988429.2, 1e20], dtype=st.float64, device="cuda")).cpu().numpy()
    p = np.array([0.5000595397360789, 0.500000000013298])
    np.testing.assert_allclose(known, p if fn == "igamma" else 1 - p, rtol=1e-12)
