"""Complex cov, corrcoef, ldexp, renorm, rms_norm, fold and embedding on CUDA: compositions of ops that take
complex values there, checked against the CPU backend (which matches torch's CPU: tests/backend/
test_complex_math.py) and, where it is installed, torch's CUDA results; gradients against the CPU backend's;
embedding's complex gradient refused in torch's words."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]

DTYPES = ["complex64", "complex128"]
TOL = {"complex64": 3e-5, "complex128": 1e-11}
_IDX = np.array([[0, 2], [1, 1]])


def _c(rng, *shape, dtype):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _close(got, want, tol):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    for x, y in ((got.real, want.real), (got.imag, want.imag)):
        np.testing.assert_allclose(x, y, rtol=tol, atol=tol, equal_nan=True)


def _tensor(m, a, device):
    t = m.from_numpy(np.ascontiguousarray(a))
    return t.to(device) if device != "cpu" else t


_FW, _AW = [1, 2, 1, 3, 1], [0.5, 1.0, 2.0, 1.0, 0.25]

# name -> (function of (module, x, device), input shape); every input has the test's complex dtype
_CASES = {
    "cov": (lambda m, x, d: m.cov(x), (3, 5)),
    "cov correction 0": (lambda m, x, d: m.cov(x, correction=0), (3, 5)),
    "cov 1-d": (lambda m, x, d: m.cov(x[0]), (3, 5)),
    "cov weights": (lambda m, x, d: m.cov(x, fweights=_tensor(m, np.array(_FW), d),
                                          aweights=_tensor(m, np.array(_AW), d)), (3, 5)),
    "cov transposed": (lambda m, x, d: m.cov(x.t()), (5, 3)),
    "corrcoef": (lambda m, x, d: m.corrcoef(x), (3, 5)),
    "rms_norm": (lambda m, x, d: m.nn.functional.rms_norm(x, (3,)), (2, 4, 3)),
    "rms_norm two dims eps": (lambda m, x, d: m.nn.functional.rms_norm(x, (4, 3), eps=1e-3), (2, 4, 3)),
    "rms_norm weight": (lambda m, x, d: m.nn.functional.rms_norm(
        x, (3,), _tensor(m, np.array([1 + 2j, -0.5j, 3], _np_dtype(x)), d)),
        (2, 4, 3)),
    "renorm p2 dim0": (lambda m, x, d: m.renorm(x, 2, 0, 1.0), (2, 4, 3)),
    "renorm p1 dim2": (lambda m, x, d: m.renorm(x, 1, 2, 0.5), (2, 4, 3)),
    "ldexp": (lambda m, x, d: m.ldexp(x, _tensor(m, np.array([1, -2, 3]), d)), (2, 4, 3)),
    "fold": (lambda m, x, d: m.nn.functional.fold(x, (3, 3), (2, 2)), (1, 4, 4)),
    "fold padded strided": (lambda m, x, d: m.nn.functional.fold(x, (4, 5), (2, 2), padding=1, stride=2),
                            (2, 8, 9)),
    "fold unbatched sliced": (lambda m, x, d: m.nn.functional.fold(x[:, ::2], (3, 3), (2, 2)), (4, 8)),
    "embedding": (lambda m, x, d: m.nn.functional.embedding(_tensor(m, _IDX, d), x), (4, 3)),
}


def _np_dtype(t):
    return "complex64" if "complex64" in str(t.dtype) else "complex128"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", sorted(_CASES))
def test_values_as_the_cpu_backend_and_torch(dtype, case):
    f, shape = _CASES[case]
    a = _c(np.random.default_rng(7), *shape, dtype=dtype)
    got = f(st, _tensor(st, a, "cuda"), "cuda")
    assert got.device.type == "cuda" and got.dtype.is_complex
    want = f(st, _tensor(st, a, "cpu"), "cpu")  # float64 aweights promote complex64 to complex128, as torch
    _close(got.cpu().numpy(), want.numpy(), TOL[dtype])
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        t = f(torch, _tensor(torch, a, "cuda"), "cuda")
        _close(got.cpu().numpy(), t.cpu().numpy(), TOL[dtype])


@pytest.mark.parametrize("case", sorted(set(_CASES) - {"embedding"}))
def test_gradients_as_the_cpu_backend(case):
    f, shape = _CASES[case]
    a = _c(np.random.default_rng(8), *shape, dtype="complex128")
    grads = []
    for device in ("cuda", "cpu"):
        x = _tensor(st, a, device).requires_grad_()
        st.view_as_real(f(st, x, device)).pow(2).sum().backward()
        grads.append(x.grad.cpu().numpy())
    _close(grads[0], grads[1], 1e-9)


def test_embedding_complex_gradient_refused_as_torch():
    w = _tensor(st, _c(np.random.default_rng(9), 4, 3, dtype="complex64"), "cuda").requires_grad_()
    with pytest.raises(RuntimeError, match="embedding does not support automatic differentiation for outputs "
                                           "with complex dtype"):
        st.nn.functional.embedding(_tensor(st, _IDX, "cuda"), w)
