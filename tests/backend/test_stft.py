"""strided.stft / istft against torch's (Note [STFT composition]): values for 1-D and batched signals, windows
shorter than n_fft, hops, centering and its pad modes, align_to_window, normalized, onesided and two-sided,
complex signals, return_complex, istft's round trip with length trimming and padding, the Tensor methods,
gradients, torch's errors and warnings, and the same on CUDA (against the CPU)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import strided as st
from strided.autograd import gradcheck
from strided.testing import available_devices

torch = pytest.importorskip("torch")

DEVICES = [d for d in available_devices() if d != "meta"]


def _pair(shape, dtype="float32", seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    a = a.astype(dtype)
    return st.from_numpy(a.copy()), torch.from_numpy(a.copy())


def _windows(kind, n, dtype="float32"):
    if kind is None:
        return None, None
    sw = getattr(st, f"{kind}_window")(n, dtype=getattr(st, dtype))
    tw = getattr(torch, f"{kind}_window")(n, dtype=getattr(torch, dtype))
    return sw, tw


def _close(got, want, tol=2e-5):
    want = want.resolve_conj()
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    scale = max(1.0, float(want.abs().max())) if want.numel() else 1.0
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=0, atol=tol * scale)


CASES = [
    dict(n_fft=16),
    dict(n_fft=16, hop_length=5, win_length=12, window="hann"),
    dict(n_fft=15, hop_length=3, window="hamming"),
    dict(n_fft=16, center=False, window="hann"),
    dict(n_fft=16, normalized=True, onesided=False, window="hann"),
    dict(n_fft=16, pad_mode="constant", window="blackman"),
    dict(n_fft=16, pad_mode="replicate", hop_length=8, window="hann"),
    dict(n_fft=16, center=False, win_length=8, align_to_window=True, window="hann"),
    dict(n_fft=32, hop_length=1, window="bartlett"),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [(64,), (3, 50)], ids=["1-d", "batched"])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_stft_matches_torch(case, shape, device):
    case = dict(case)
    kind = case.pop("window", None)
    sw, tw = _windows(kind, case.get("win_length", case["n_fft"]))
    x, tx = _pair(shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = st.stft(x.to(device), window=None if sw is None else sw.to(device), return_complex=True, **case)
        want = torch.stft(tx, window=tw, return_complex=True, **case)
    assert got.device.type == device
    _close(got, want)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float64", "complex64"])
def test_stft_of_other_dtypes_and_the_real_view(dtype, device):
    x, tx = _pair((2, 40), dtype, 1)
    sw, tw = _windows("hann", 16, "float64" if dtype == "float64" else "float32")
    got = x.to(device).stft(16, 4, window=sw.to(device), return_complex=True)
    _close(got, torch.stft(tx, 16, 4, window=tw, return_complex=True), 1e-12 if dtype == "float64" else 2e-5)
    with pytest.warns(UserWarning, match="stft with return_complex=False is deprecated"):
        got = st.stft(x.to(device), 16, 4, window=sw.to(device), return_complex=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.stft(tx, 16, 4, window=tw, return_complex=False)
    _close(got, want, 1e-12 if dtype == "float64" else 2e-5)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", [dict(n_fft=16, window="hann"), dict(n_fft=16, hop_length=4, win_length=10,
                                                                      window="hann"),
                                  dict(n_fft=15, hop_length=5, window="hamming", normalized=True),
                                  dict(n_fft=16, window="hann", onesided=False)], ids=str)
def test_istft_inverts_stft_as_torch(case, device):
    case = dict(case)
    kind = case.pop("window")
    onesided = case.pop("onesided", None)
    sw, tw = _windows(kind, case.get("win_length", case["n_fft"]))
    x, tx = _pair((2, 60), "float32", 2)
    spec = torch.stft(tx, window=tw, return_complex=True, onesided=onesided, **case)
    sspec = st.from_numpy(spec.numpy().copy()).to(device)
    for length in (None, 60, 45, 80):
        kw = dict(case, window=tw, length=length, onesided=onesided)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                want = torch.istft(spec, **kw)
            except RuntimeError as e:  # a zero of the window envelope inside the kept span: the same refusal
                assert "window overlap add min" in str(e)
                with pytest.raises(RuntimeError, match="window overlap add min"):
                    st.istft(sspec, **dict(kw, window=sw.to(device)))
                continue
            got = st.istft(sspec, **dict(kw, window=sw.to(device)))
        _close(got, want)
        if length == 60:
            np.testing.assert_allclose(got.cpu().numpy(), x.numpy(), atol=1e-5)  # lossless
    got = sspec[0].istft(case["n_fft"], case.get("hop_length"), case.get("win_length"), sw.to(device),
                         normalized=case.get("normalized", False), onesided=onesided, return_complex=onesided is False)
    want = torch.istft(spec[0], case["n_fft"], case.get("hop_length"), case.get("win_length"), tw,
                       normalized=case.get("normalized", False), onesided=onesided, return_complex=onesided is False)
    _close(got, want)


def test_gradients_through_stft_and_istft():
    x = st.from_numpy(np.random.default_rng(3).standard_normal(24)).requires_grad_()
    w = st.hann_window(8, dtype=st.float64)

    def spectrum(t):
        return st.view_as_real(st.stft(t, 8, 2, window=w, return_complex=True))

    def round_trip(t):
        return st.istft(st.stft(t, 8, 2, window=w, return_complex=True), 8, 2, window=w, length=24) * t

    assert gradcheck(spectrum, (x,))
    assert gradcheck(round_trip, (x,))
    tx = torch.from_numpy(x.detach().numpy().copy()).requires_grad_()
    torch.stft(tx, 8, 2, window=torch.hann_window(8, dtype=torch.float64), return_complex=True).abs().sum().backward()
    st.stft(x, 8, 2, window=w, return_complex=True).abs().sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), atol=1e-12)
    z, tz = _pair((2, 20), "complex128", 4)  # a complex signal: overlapping frames of a complex view
    z.requires_grad_()
    tz.requires_grad_()
    torch.stft(tz, 8, 3, window=torch.hann_window(8, dtype=torch.float64), return_complex=True).abs().sum().backward()
    st.stft(z, 8, 3, window=w, return_complex=True).abs().sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), tz.grad.numpy(), atol=1e-12)


_SIG = st.ones(2, 40)
_SPEC = st.stft(_SIG, 16, 4, window=st.hann_window(16), return_complex=True)
ERRORS = [
    (lambda: st.stft(_SIG, 16), RuntimeError, "stft requires the return_complex parameter be given for real inputs"),
    (lambda: st.stft(st.ones(1, 2, 40), 16, return_complex=True), RuntimeError, "expected a 1D or 2D tensor"),
    (lambda: st.stft(_SIG, 100, center=False, return_complex=True), RuntimeError,
     "expected 0 < n_fft < 40, but got n_fft=100"),
    (lambda: st.stft(_SIG, 16, 0, return_complex=True), RuntimeError, "expected hop_length > 0, but got hop_length=0"),
    (lambda: st.stft(_SIG, 16, win_length=20, return_complex=True), RuntimeError,
     "expected 0 < win_length <= n_fft, but got win_length=20"),
    (lambda: st.stft(_SIG, 16, window=st.ones(15), return_complex=True), RuntimeError,
     r"expected a 1D window tensor of size equal to win_length=16, but got window with size \[15\]"),
    (lambda: st.stft(_SIG.to(st.complex64), 16, onesided=True, return_complex=True), RuntimeError,
     "Cannot have onesided output if window or input is complex"),
    (lambda: st.stft(st.ones(40, dtype=st.int64), 16, return_complex=True), NotImplementedError,
     "expected a tensor of floating point or complex values"),
    (lambda: st.stft(_SIG, 16, return_complex=True, center=True, align_to_window=True), RuntimeError,
     "stft align_to_window should only be set when center = false"),
    (lambda: st.istft(st.zeros(9, 5), 16), TypeError, "istft requires a complex-valued input tensor"),
    (lambda: st.istft(st.zeros(0, 9, 5, dtype=st.complex64), 16), RuntimeError, "input tensor cannot be empty"),
    (lambda: st.istft(st.zeros(1, 1, 9, 5, dtype=st.complex64), 16), RuntimeError,
     "expected a tensor with 3 or 4 dimensions, but got 5"),
    (lambda: st.istft(_SPEC, 20), RuntimeError, "match n_fft / 2 \\+ 1 when onesided=True, but got 9"),
    (lambda: st.istft(_SPEC, 16, onesided=False), RuntimeError, "match n_fft when onesided=False, but got 9"),
    (lambda: st.istft(_SPEC, 16, hop_length=17), RuntimeError, "expected 0 < hop_length <= win_length"),
    (lambda: st.istft(_SPEC, 16, win_length=17), RuntimeError, "expected 0 < win_length <= n_fft"),
    (lambda: st.istft(_SPEC, 16, window=st.ones(15)), RuntimeError, "Invalid window shape"),
    (lambda: st.istft(_SPEC, 16, window=st.zeros(16)), RuntimeError, "window overlap add min"),
    (lambda: st.istft(_SPEC, 16, return_complex=True), RuntimeError,
     "Cannot have onesided output if window or input is complex"),
]


@pytest.mark.parametrize("call,error,message", ERRORS, ids=[e[2][:40] for e in ERRORS])
def test_errors_are_torchs(call, error, message):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(error, match=message):
            call()


def test_warnings_are_torchs():
    with pytest.warns(UserWarning, match="A window was not provided. A rectangular window will be applied,which"):
        st.stft(_SIG, 16, return_complex=True)
    with pytest.warns(UserWarning, match="A window was not provided. A rectangular window will be applied.Please"):
        st.istft(_SPEC, 16)
    with pytest.warns(UserWarning, match="The length of signal is shorter than the length parameter"):
        out = st.istft(_SPEC, 16, window=st.hann_window(16), length=50)
    assert tuple(out.shape) == (2, 50)
