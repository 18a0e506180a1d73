"""strided.signal.windows against torch.signal.windows: every window, symmetric and periodic, float32 and
float64, the parameters, the 0- and 1-point cases, gradients, and torch's errors."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st

torch = pytest.importorskip("torch")

WINDOWS = [("bartlett", {}), ("blackman", {}), ("cosine", {}), ("exponential", {}), ("exponential", {"tau": 2.5}),
           ("gaussian", {}), ("gaussian", {"std": 0.4}), ("general_cosine", {"a": [0.5, 0.3, 0.2]}),
           ("general_hamming", {}), ("general_hamming", {"alpha": 0.6}), ("hamming", {}), ("hann", {}),
           ("kaiser", {}), ("kaiser", {"beta": 3.0}), ("nuttall", {})]


@pytest.mark.parametrize("name,kw", WINDOWS)
@pytest.mark.parametrize("M", [0, 1, 2, 7, 16])
@pytest.mark.parametrize("sym", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_windows_equal_torchs(name, kw, M, sym, dtype):
    want = getattr(torch.signal.windows, name)(M, sym=sym, dtype=getattr(torch, dtype), **kw)
    got = getattr(st.signal.windows, name)(M, sym=sym, dtype=getattr(st, dtype), **kw)
    assert got.dtype.name == dtype and tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5 if dtype == "float32" else 1e-12, atol=1e-7)


def test_periodic_exponential_center_and_gradient():
    want = torch.signal.windows.exponential(9, center=2.0, sym=False, dtype=torch.float64)
    got = st.signal.windows.exponential(9, center=2.0, sym=False, dtype=st.float64)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
    w = st.signal.windows.hann(8, requires_grad=True)
    assert w.requires_grad
    w.sum().backward()


@pytest.mark.parametrize("call", [
    lambda L: L.signal.windows.hann(-1),
    lambda L: L.signal.windows.hann(4, dtype=L.int64),
    lambda L: L.signal.windows.exponential(4, tau=0.0),
    lambda L: L.signal.windows.exponential(4, center=1.0),
    lambda L: L.signal.windows.gaussian(4, std=-1.0),
    lambda L: L.signal.windows.kaiser(4, beta=-1.0),
    lambda L: L.signal.windows.general_cosine(4, a=[]),
    lambda L: L.signal.windows.general_cosine(4, a=3),
])
def test_errors_are_torchs(call):
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(type(want.value)) as got:
        call(st)
    assert str(got.value) == str(want.value).replace("torch.", "strided.")


@pytest.mark.parametrize("M", [2.5, "4", True])
def test_window_length_must_be_an_int(M):
    with pytest.raises(TypeError, match=r"hann\(\): argument 'M' must be int"):
        st.signal.windows.hann(M)
