"""Complex logaddexp (c10's complex log-add-exp, complex.cuh) and silu on CUDA, against the CPU backend (which
matches torch's CPU: tests/backend/test_complex_math.py) and, where it is installed, torch's CUDA kernels:
values, mixed real / complex and broadcast operands, non-contiguous inputs, special values, logaddexp's
gradient, and silu's gradient refused in torch's words."""

from __future__ import annotations

import math

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]

DTYPES = ["complex64", "complex128"]
TOL = {"complex64": 2e-5, "complex128": 1e-12}


def _rand(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    return np.asarray(rng.standard_normal(shape) + 3j * rng.standard_normal(shape)).astype(dtype)


def _close(got, want, tol):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    for x, y in ((got.real, want.real), (got.imag, want.imag)):  # infinities and NaNs compare as values
        np.testing.assert_allclose(x, y, rtol=tol, atol=tol, equal_nan=True)


_CASES = {
    "logaddexp": lambda m, x, y: m.logaddexp(x, y),
    "logaddexp real other": lambda m, x, y: m.logaddexp(x, y.real),
    "logaddexp real self": lambda m, x, y: m.logaddexp(x.real, y),
    "logaddexp broadcast": lambda m, x, y: m.logaddexp(x[:, :1], y),
    "logaddexp transposed": lambda m, x, y: m.logaddexp(x.t(), y.t()),
    "silu": lambda m, x, y: m.nn.functional.silu(x),
    "silu sliced": lambda m, x, y: m.nn.functional.silu(x[1:, ::2]),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", sorted(_CASES))
def test_values_as_the_cpu_backend_and_torch(dtype, case):
    a, b = _rand((3, 4), dtype, 1), _rand((3, 4), dtype, 2)
    f = _CASES[case]
    got = f(st, st.from_numpy(a.copy()).cuda(), st.from_numpy(b.copy()).cuda())
    assert got.device.type == "cuda"
    want = f(st, st.from_numpy(a.copy()), st.from_numpy(b.copy()))
    _close(got.cpu().numpy(), want.numpy(), TOL[dtype])
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        t = f(torch, torch.from_numpy(a.copy()).cuda(), torch.from_numpy(b.copy()).cuda())
        _close(got.cpu().numpy(), t.cpu().numpy(), TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
def test_logaddexp_special_values(dtype):
    """NaN in either part of either input: nan + nan i; equal infinite real parts: -inf gives the smaller
    input (the second when the real parts tie), +inf log(exp(x) + exp(y)); else log1p(exp(lo - hi)) + hi."""
    inf, nan = math.inf, math.nan
    x = np.array([complex(-inf, 2), complex(inf, 1), complex(nan, 0), 1 + 1j, complex(-inf, 0), 3, complex(2, nan),
                  complex(inf, 0)], dtype)
    y = np.array([complex(-inf, 1), complex(inf, -2), 1, complex(0, nan), 2, complex(-inf, 5), 1, 4], dtype)
    got = st.logaddexp(st.from_numpy(x).cuda(), st.from_numpy(y).cuda()).cpu().numpy()
    _close(got, st.logaddexp(st.from_numpy(x), st.from_numpy(y)).numpy(), TOL[dtype])
    assert np.isnan(got[2].real) and np.isnan(got[2].imag) and np.isnan(got[3].imag) and np.isnan(got[6].real)
    assert got[0] == complex(-inf, 1)  # equal real parts: c10 takes the second input as the smaller
    assert got[4].real == 2 and got[5].real == 3 and got[7] == complex(inf, 0)


def test_logaddexp_gradient_and_silu_gradient_refused():
    a, b = _rand((3, 4), "complex128", 3), _rand((3, 4), "complex128", 4)
    grads = []
    for dev in ("cpu", "cuda"):
        xs = [st.from_numpy(v.copy()).to(dev).requires_grad_() for v in (a, b)]
        st.view_as_real(st.logaddexp(*xs)).pow(2).sum().backward()
        grads.append([x.grad.cpu().resolve_conj().numpy() for x in xs])
    for g, w in zip(*grads):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    x = st.from_numpy(a.copy()).cuda().requires_grad_()
    with pytest.raises(RuntimeError, match="silu does not support automatic differentiation for outputs with "
                                           "complex dtype"):
        st.nn.functional.silu(x)
