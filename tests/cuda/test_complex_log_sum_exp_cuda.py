"""Complex logsumexp and logcumsumexp on CUDA (Note [Complex log-sum-exp on CUDA]) against the CPU backend,
which matches torch's CPU (tests/backend/test_complex_math.py): values, special values, gradients, and no host
sync (a CUDA graph captures them)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]

DTYPES = ["complex64", "complex128"]
TOL = {"complex64": 2e-5, "complex128": 1e-11}


def _rand(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return np.asarray(rng.standard_normal(shape) + 3j * rng.standard_normal(shape)).astype(dtype)


def _same_log(got, want, tol):
    """Real parts close; imaginary parts equal up to a multiple of 2 pi (the branch of the logarithm)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got.real, want.real, rtol=tol, atol=tol, equal_nan=True)
    assert np.array_equal(np.isnan(got.imag), np.isnan(want.imag))
    finite = np.isfinite(got.imag) & np.isfinite(want.imag)
    turn = np.angle(np.exp(1j * (got.imag[finite] - want.imag[finite]).astype(np.float64)))
    np.testing.assert_allclose(turn, 0, atol=max(tol, 1e-12) * 100)


_CASES = {
    "logsumexp dim 1": ((4, 6), lambda x: st.logsumexp(x, 1)),
    "logsumexp dims keepdim": ((4, 6), lambda x: x.logsumexp((0, 1), keepdim=True)),
    "logsumexp transposed": ((4, 6), lambda x: x.t().logsumexp(1)),
    "logsumexp 0-dim": ((), lambda x: st.logsumexp(x, 0)),
    "logsumexp zero-size": ((0, 3), lambda x: st.logsumexp(x, 0)),
    "logcumsumexp dim 1": ((4, 6), lambda x: st.logcumsumexp(x, 1)),
    "logcumsumexp dim 0 sliced": ((5, 6), lambda x: x[1:, ::2].logcumsumexp(0)),
    "logcumsumexp long rows": ((3, 300), lambda x: st.logcumsumexp(x, 1)),
    "logcumsumexp 3-d": ((2, 7, 3), lambda x: st.logcumsumexp(x, -2)),
    "logcumsumexp 0-dim": ((), lambda x: st.logcumsumexp(x, 0)),
    "logcumsumexp zero-size": ((0, 3), lambda x: st.logcumsumexp(x, 0)),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(_CASES))
def test_values_match_the_cpu(name, dtype):
    shape, fn = _CASES[name]
    a = _rand(shape, dtype, seed=5)
    got = fn(st.from_numpy(a.copy()).cuda())
    assert got.device.type == "cuda" and got.dtype.name == dtype
    _same_log(got.cpu().numpy(), fn(st.from_numpy(a.copy())).numpy(), TOL[dtype])


def test_special_values_match_the_cpu():
    inf, nan = math.inf, math.nan
    rows = np.array([[complex(-inf, 2), 1 + 1j, complex(-inf, -1), complex(inf, 1), complex(inf, -2), 3j, 1, 2],
                     [complex(-inf, 2), complex(-inf, 3), 1, 500 + 1j, 2, complex(inf, 0), 1, 2],
                     [1, complex(0, nan), 2, 3, 4, 5, 6, 7]], np.complex128)
    for fn in (lambda x: st.logcumsumexp(x, 1), lambda x: st.logsumexp(x, 1), lambda x: st.logsumexp(x[:, :2], 1)):
        _same_log(fn(st.from_numpy(rows.copy()).cuda()).cpu().numpy(), fn(st.from_numpy(rows.copy())).numpy(), 1e-12)


@pytest.mark.parametrize("name", ["logsumexp dim 1", "logsumexp dims keepdim", "logcumsumexp dim 1",
                                  "logcumsumexp dim 0 sliced"])
def test_gradients_match_the_cpu(name):
    shape, fn = _CASES[name]
    a = _rand(shape, "complex128", seed=9)
    grads = []
    for dev in ("cuda", "cpu"):
        x = st.from_numpy(a.copy()).to(dev).requires_grad_()
        st.view_as_real(fn(x)).pow(2).sum().backward()  # a function of exp(result): the branch does not matter
        grads.append(x.grad.resolve_conj().cpu().numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-12)


def test_no_host_sync_and_captured_in_a_graph(sync_calls):
    x = st.from_numpy(_rand((4, 64), "complex64", seed=2)).cuda()
    eager = (st.logsumexp(x, 1), st.logcumsumexp(x, 1))
    cuda.synchronize()
    sync_calls.clear()
    st.logsumexp(x, 1)
    st.logcumsumexp(x, 1)
    assert sync_calls == []
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        outs = (st.logsumexp(x, 1), st.logcumsumexp(x, 1))
    g.replay()
    cuda.synchronize()
    for got, want in zip(outs, eager):
        np.testing.assert_array_equal(got.cpu().numpy(), want.cpu().numpy())
