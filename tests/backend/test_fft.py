"""strided.fft against torch.fft: every front-end's values (float32 / float64 / complex64 / complex128 and
integer inputs, each norm, n / s / dim variants), errors, the Meta answers, CUDA against the CPU, and gradients (finite
differences through real views, and real losses against torch's gradients)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import strided as st
from strided.autograd import gradcheck

torch = pytest.importorskip("torch")  # the oracle

_TOL = {"float32": 2e-5, "float64": 1e-12, "complex64": 2e-5, "complex128": 1e-12}
_C2C = ["fft", "ifft"]
_R2C = ["rfft", "ihfft"]
_C2R = ["irfft", "hfft"]
_ND = ["fft2", "ifft2", "fftn", "ifftn", "rfft2", "rfftn", "ihfft2", "ihfftn", "irfft2", "irfftn", "hfft2", "hfftn"]
_REAL_ONLY = set(_R2C) | {"rfft2", "rfftn", "ihfft2", "ihfftn"}


def _pair(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    a = a.astype(dtype)
    return st.from_numpy(a.copy()), torch.from_numpy(a.copy())


def _close(got, want, dtype):
    want = want.resolve_conj()
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(want.shape)
    tol = _TOL[dtype] * max(1.0, float(want.abs().max()) if want.numel() else 1.0)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=0, atol=tol)


@pytest.mark.parametrize("dtype", list(_TOL))
@pytest.mark.parametrize("name", _C2C + _R2C + _C2R)
@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
def test_one_dim_front_ends_match_torch(name, dtype, norm):
    if name in _REAL_ONLY and dtype.startswith("complex"):
        return
    x, tx = _pair((3, 6), dtype)
    f, tf = getattr(st.fft, name), getattr(torch.fft, name)
    _close(f(x, norm=norm), tf(tx, norm=norm), dtype)
    for n in (4, 7, 11):  # trimmed and zero-padded, odd and even
        _close(f(x, n=n, dim=0, norm=norm), tf(tx, n=n, dim=0, norm=norm), dtype)
    _close(f(x.t(), dim=-2, norm=norm), tf(tx.t(), dim=-2, norm=norm), dtype)


@pytest.mark.parametrize("dtype", list(_TOL))
@pytest.mark.parametrize("name", _ND)
def test_n_dim_front_ends_match_torch(name, dtype):
    if name in _REAL_ONLY and dtype.startswith("complex"):
        return
    x, tx = _pair((3, 4, 6), dtype)
    f, tf = getattr(st.fft, name), getattr(torch.fft, name)
    for kw in ({}, {"norm": "ortho"}, {"norm": "forward"}, {"s": (5, 3)}, {"s": (-1, 8), "dim": (0, 2)},
               {"dim": (2, 0)}, {"dim": (-1,)}, {"s": (2, 7, 4)}):
        if name.endswith("2") and "dim" in kw and len(kw["dim"]) != 2:
            continue
        if name.endswith("2") and "s" in kw and len(kw["s"]) != 2:
            continue
        _close(f(x, **kw), tf(tx, **kw), dtype)


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "hfft", "ihfft", "fftn", "rfftn", "irfftn"])
def test_integer_inputs_promote_to_the_default_dtype(name):
    a = np.arange(12).reshape(3, 4)
    got, want = getattr(st.fft, name)(st.from_numpy(a.copy())), getattr(torch.fft, name)(torch.from_numpy(a.copy()))
    _close(got, want, "float32")


def test_zero_dim_and_zero_size_inputs():
    x, tx = _pair((), "float64")
    _close(st.fft.fftn(x), torch.fft.fftn(tx), "float64")
    x, _ = _pair((0, 5), "complex64")  # torch's MKL path fails here ("Inconsistent configuration parameters")
    y = st.fft.fft(x)
    assert tuple(y.shape) == (0, 5) and y.dtype is st.complex64


def test_out_arguments():
    x, tx = _pair((4, 5), "float64")
    out, tout = st.empty(0, dtype=st.complex128), torch.empty(0, dtype=torch.complex128)
    assert st.fft.rfft(x, out=out) is out
    torch.fft.rfft(tx, out=tout)
    _close(out, tout, "complex128")
    with pytest.raises(RuntimeError, match="rfft expects a complex output tensor, but got Double"):
        st.fft.rfft(x, out=st.empty(0, dtype=st.float64))
    with pytest.raises(RuntimeError, match="irfft expects a floating point output tensor, but got ComplexDouble"):
        st.fft.irfft(x, out=st.empty(0, dtype=st.complex128))


def test_freq_and_shift_helpers():
    for n, d in ((5, 1.0), (6, 0.25), (1, 2.0), (0, 1.0)):
        _close(st.fft.fftfreq(n, d), torch.fft.fftfreq(n, d), "float32")
        if n:
            _close(st.fft.rfftfreq(n, d), torch.fft.rfftfreq(n, d), "float32")
    _close(st.fft.fftfreq(7, dtype=st.float64), torch.fft.fftfreq(7, dtype=torch.float64), "float64")
    for dtype in ("float32", "complex128"):
        x, tx = _pair((4, 5, 3), dtype)
        for dim in (None, 1, (0, -1), [2]):
            _close(st.fft.fftshift(x, dim=dim), torch.fft.fftshift(tx, dim=dim), dtype)
            _close(st.fft.ifftshift(x, dim=dim), torch.fft.ifftshift(tx, dim=dim), dtype)


_ERRORS = [
    ("fft", lambda m, x, z: m.fft.fft(x, n=0), RuntimeError, "Invalid number of data points (0) specified"),
    ("fft", lambda m, x, z: m.fft.fft(x, dim=2), IndexError, "Dimension out of range"),
    ("fft", lambda m, x, z: m.fft.fft(x, norm="bad"), RuntimeError, 'Invalid normalization mode: "bad"'),
    ("rfft", lambda m, x, z: m.fft.rfft(z), TypeError, "rfft expects a real input tensor, but got ComplexFloat"),
    ("ihfft", lambda m, x, z: m.fft.ihfft(z), TypeError, "ihfft expects a real input tensor, but got ComplexFloat"),
    ("rfftn", lambda m, x, z: m.fft.rfftn(z), TypeError, "rfftn expects a real-valued input tensor, but got"),
    ("fftn", lambda m, x, z: m.fft.fftn(x, s=(3, 3, 3)), RuntimeError,
     "Got shape with 3 values but input tensor only has 2 dimensions."),
    ("fftn", lambda m, x, z: m.fft.fftn(x, s=(3,), dim=(0, 1)), RuntimeError,
     "When given, dim and shape arguments must have the same length"),
    ("fftn", lambda m, x, z: m.fft.fftn(x, dim=(0, -2)), RuntimeError, "FFT dims must be unique"),
    ("rfftn", lambda m, x, z: m.fft.rfftn(x, dim=()), RuntimeError, "rfftn must transform at least one axis"),
    ("irfftn", lambda m, x, z: m.fft.irfftn(z, dim=()), RuntimeError, "irfftn must transform at least one axis"),
    ("irfft", lambda m, x, z: m.fft.irfft(z[:, :1]), RuntimeError, "Invalid number of data points (0) specified"),
    ("fftn", lambda m, x, z: m.fft.fftn(x, s=(0, 3)), RuntimeError, "Invalid number of data points (0) specified"),
    ("fft", lambda m, x, z: m.fft.fft(x.half()), NotImplementedError, "Unsupported dtype Half"),
    ("fftfreq", lambda m, x, z: m.fft.fftfreq(5, dtype=m.int64), RuntimeError,
     "fftfreq requires a floating point or complex dtype"),
]


@pytest.mark.parametrize("call, error, message", [e[1:] for e in _ERRORS], ids=[e[0] for e in _ERRORS])
def test_errors_match_torch(call, error, message):
    x, tx = _pair((4, 5), "float32")
    z, tz = _pair((4, 5), "complex64")
    with pytest.raises(error, match=re.escape(message)):
        call(st, x, z)
    with pytest.raises(error, match=re.escape(message)):
        call(torch, tx, tz)


def test_meta_shapes_match_cpu():
    x = st.empty((3, 4, 6), device="meta")
    z = st.empty((3, 4, 6), dtype=st.complex128, device="meta")
    for name in _ND + _C2C + _R2C + _C2R:
        src = z if name in ("irfft2", "irfftn", "hfft2", "hfftn", "irfft", "hfft") else x
        got = getattr(st.fft, name)(src)
        want = getattr(torch.fft, name)(torch.empty(tuple(src.shape), dtype=getattr(torch, src.dtype.name),
                                                    device="meta"))
        assert got.device.type == "meta" and tuple(got.shape) == tuple(want.shape)
        assert got.dtype.name == str(want.dtype).split(".")[-1]


def test_cuda_front_ends_match_the_cpu():
    """Note [CUDA FFT]: the ops have CUDA kernels; tests/cuda/test_fft_cuda.py compares them with cuFFT."""
    for op in (st.ops.aten._fft_c2c.default, st.ops.aten._fft_r2c.default, st.ops.aten._fft_c2r.default):
        assert op.has_kernel(st.dispatch.keys.DispatchKey.CUDA)
    if not st.cuda.is_available():
        pytest.skip("no CUDA GPU / driver on this machine")
    x, _ = _pair((3, 4, 6), "complex64")
    for name in _C2C + _C2R + _ND:
        if name not in _REAL_ONLY:
            got = getattr(st.fft, name)(x.cuda())
            assert got.device.type == "cuda"
            np.testing.assert_allclose(got.cpu().numpy(), getattr(st.fft, name)(x).numpy(), rtol=0, atol=1e-4)


# ---------------------------------------------------------------------------- gradients
def _real_view_fn(name, complex_in, **kw):
    """``name`` as a function of float64 tensors with float64 outputs (complex values as (re, im) pairs)."""
    def fn(x):
        y = getattr(st.fft, name)(st.view_as_complex(x) if complex_in else x, **kw)
        return st.view_as_real(y) if y.dtype.is_complex else y

    return fn


_GRAD_CASES = [("fft", True, {}), ("ifft", True, {"n": 7}), ("fft", False, {"norm": "ortho"}),
               ("rfft", False, {}), ("rfft", False, {"n": 5}), ("ihfft", False, {"norm": "forward"}),
               ("irfft", True, {}), ("irfft", True, {"n": 5}), ("hfft", True, {"n": 6, "norm": "ortho"}),
               ("fft2", True, {}), ("rfftn", False, {"s": (3, 4)}), ("irfftn", True, {"dim": (0, 1)}),
               ("hfftn", True, {}), ("ihfftn", False, {}), ("ifftn", False, {"norm": "forward"})]


@pytest.mark.parametrize("name, complex_in, kw", _GRAD_CASES, ids=[f"{c[0]}-{c[2]}" for c in _GRAD_CASES])
def test_gradcheck_through_real_views(name, complex_in, kw):
    rng = np.random.default_rng(1)
    x = st.from_numpy(rng.standard_normal((3, 4, 2) if complex_in else (3, 4))).requires_grad_(True)
    assert gradcheck(_real_view_fn(name, complex_in, **kw), (x,))


@pytest.mark.parametrize("dtype", ["float64", "complex128", "float32", "complex64"])
@pytest.mark.parametrize("name", _C2C + _R2C + _C2R + ["fft2", "rfftn", "irfftn", "hfftn", "ihfftn", "ifftn"])
def test_real_loss_gradients_match_torch(name, dtype):
    if name in _REAL_ONLY and dtype.startswith("complex"):
        return
    x, tx = _pair((4, 6), dtype)
    x.requires_grad_(True)
    tx.requires_grad_(True)
    kw = {"norm": "ortho"} if name.startswith("i") else {}
    getattr(st.fft, name)(x, **kw).abs().sum().backward()
    getattr(torch.fft, name)(tx, **kw).abs().sum().backward()
    _close(x.grad, tx.grad, dtype)


def test_double_backward_of_c2r():
    z = st.from_numpy(np.random.default_rng(2).standard_normal((3, 4, 2))).requires_grad_(True)
    (g,) = st.autograd.grad(st.fft.irfft(st.view_as_complex(z), n=6).pow(2).sum(), (z,), create_graph=True)
    (gg,) = st.autograd.grad(g.pow(2).sum(), (z,))
    tz = torch.from_numpy(z.detach().numpy()).requires_grad_(True)
    (tg,) = torch.autograd.grad(torch.fft.irfft(torch.view_as_complex(tz), n=6).pow(2).sum(), (tz,),
                                create_graph=True)
    (tgg,) = torch.autograd.grad(tg.pow(2).sum(), (tz,))
    np.testing.assert_allclose(gg.numpy(), tgg.numpy(), atol=1e-10)
