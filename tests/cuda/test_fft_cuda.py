"""strided's CUDA FFT (Note [CUDA FFT] in backends/cuda/kernels/fft_ops.py) against torch.fft's cuFFT on the same
GPU and against numpy.fft in double: lengths of every factorization (special radices, the any-radix pass,
Bluestein's algorithm) up to 2^20, large batches, the 64-bit index kernels, every front-end, strided inputs,
gradients against the CPU's, streams and CUDA graph capture."""

from __future__ import annotations

import math

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda
from strided.backends.cuda.kernels import fft_ops

torch = pytest.importorskip("torch")

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]

NP = {"complex64": np.complex64, "complex128": np.complex128, "float32": np.float32, "float64": np.float64}
# a transform's error grows like log n ulps of its largest output
EPS = {"complex64": 6e-8, "complex128": 1.1e-16, "float32": 6e-8, "float64": 1.1e-16}


def _data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(NP[dtype])


def _close(got, want, dtype, n, factor=8.0):
    """``got`` (a strided tensor) against ``want`` (a NumPy or torch result) at ``factor`` log2(n) ulps."""
    want = want.cpu().numpy() if hasattr(want, "cpu") else np.asarray(want)
    got = got.cpu().numpy()
    assert got.shape == want.shape and got.dtype == want.dtype
    scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
    tol = factor * EPS[dtype] * max(1.0, math.log2(max(n, 2))) * scale * math.sqrt(max(1.0, math.log2(max(n, 2))))
    np.testing.assert_allclose(got, want, rtol=0, atol=tol)


# every special radix, mixed radices, the any-radix pass (11, 13, 61 * 8), Bluestein (67, 1009, 2 * 4099, 10007),
# powers of two up to 2^20 and a large mixed length
LENGTHS = [1, 2, 3, 5, 7, 8, 64, 100, 360, 1000, 11, 13, 488, 67, 1009, 8198, 10007, 4096, 1 << 16, 1 << 20,
           2 * 3 * 5 * 7 * 8 * 9]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("n", LENGTHS)
def test_c2c_lengths_match_numpy_and_cufft(n, dtype):
    batch = max(1, min(8, (1 << 21) // n))
    a = _data((batch, n), dtype, n)
    x, tx = st.from_numpy(a).cuda(), torch.from_numpy(a).cuda()
    ref = np.fft.fft(a.astype(np.complex128), axis=1)
    got = st.fft.fft(x)
    _close(got, ref.astype(NP[dtype]), dtype, n)
    _close(got, torch.fft.fft(tx), dtype, n, factor=16.0)
    _close(st.fft.ifft(x, norm="ortho"), np.fft.ifft(a.astype(np.complex128), axis=1, norm="ortho").astype(NP[dtype]),
           dtype, n)


def test_large_batches_and_the_64_bit_index_kernels(monkeypatch):
    a = _data((4096, 1000), "complex64", 1)
    x = st.from_numpy(a).cuda()
    want = np.fft.fft(a.astype(np.complex128), axis=1).astype(np.complex64)
    _close(st.fft.fft(x), want, "complex64", 1000)
    monkeypatch.setattr(fft_ops, "_I32_LIMIT", 0)  # every pass through the i64 kernels
    _close(st.fft.fft(x), want, "complex64", 1000)
    b = _data((3, 1009), "complex128", 2)
    _close(st.fft.fft(st.from_numpy(b).cuda()), np.fft.fft(b, axis=1), "complex128", 1009)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_every_front_end_matches_torch_on_cuda(dtype):
    a = _data((6, 10, 9), dtype, 3)
    x, tx = st.from_numpy(a).cuda(), torch.from_numpy(a).cuda()
    cases = [("fft", {}), ("ifft", {"n": 7, "dim": 0}), ("fft2", {"norm": "ortho"}), ("fftn", {"s": (4, 12)}),
             ("ifftn", {"dim": (0, 2), "norm": "forward"}), ("hfft", {"n": 16}), ("irfft", {}),
             ("irfft2", {"s": (5, 8)}), ("irfftn", {}), ("hfftn", {"dim": (1, 2)})]
    if not dtype.startswith("complex"):
        cases += [("rfft", {}), ("rfft2", {"norm": "forward"}), ("rfftn", {"s": (3, 4, 11)}), ("ihfft", {"n": 12}),
                  ("ihfftn", {}), ("ihfft2", {"dim": (0, 1)})]
    for name, kw in cases:
        got = getattr(st.fft, name)(x, **kw)
        want = getattr(torch.fft, name)(tx, **kw).resolve_conj()
        assert got.device.type == "cuda", name
        _close(got, want, str(want.dtype).split(".")[-1], 128, factor=16.0)


def test_strided_inputs_and_outputs():
    a = _data((12, 16, 10), "complex64", 4)
    x, tx = st.from_numpy(a).cuda(), torch.from_numpy(a).cuda()
    for view in (lambda t: t.transpose(0, 2), lambda t: t[::2, 1:, ::3], lambda t: t.permute(1, 2, 0)[..., 3]):
        _close(st.fft.fftn(view(x), dim=(0, 1)), torch.fft.fftn(view(tx), dim=(0, 1)), "complex64", 192, 16.0)
        _close(st.fft.rfft(view(x).real, dim=0), torch.fft.rfft(view(tx).real, dim=0), "complex64", 16, 16.0)
    out = st.empty((12, 16, 10), dtype=st.complex64, device="cuda")
    st.fft.fft(x, dim=1, out=out)
    _close(out, torch.fft.fft(tx, dim=1), "complex64", 16, 16.0)


def test_gradients_on_cuda_equal_the_cpu_gradients():
    a = _data((4, 30), "float64", 5)
    grads = {}
    for device in ("cpu", "cuda"):
        x = st.from_numpy(a).to(device).requires_grad_()
        spec = st.fft.rfft(x, norm="ortho")
        y = st.fft.irfft(spec * spec.abs(), n=30) + st.fft.fft2(x).abs()
        y.sum().backward()
        grads[device] = x.grad.cpu().numpy()
    np.testing.assert_allclose(grads["cuda"], grads["cpu"], rtol=1e-10, atol=1e-10)


def test_transforms_run_on_the_current_stream_and_record_into_a_graph():
    a = _data((64, 1024), "complex64", 6)
    x = st.from_numpy(a).cuda()
    s = cuda.Stream()
    s.wait_stream(cuda.current_stream())
    with cuda.stream(s):
        y = st.fft.fft(x)
    cuda.current_stream().wait_stream(s)
    want = np.fft.fft(a.astype(np.complex128), axis=1).astype(np.complex64)
    _close(y, want, "complex64", 1024)
    b = _data((8, 67), "complex64", 7)  # Bluestein inside the capture: its filter is built there too
    xb = st.from_numpy(b).cuda()
    st.fft.fft(xb)  # warm-up: kernels compiled and loaded before capture
    c = _data((4, 96), "complex64", 12)  # a length first seen inside the capture: no table, computed twiddles
    xc = st.from_numpy(c).cuda()
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        out = st.fft.fft(x) + 0
        outb = st.fft.ifft(st.fft.fft(xb))
        outc = st.fft.fft(xc)
    for seed in (8, 9):
        new = _data((64, 1024), "complex64", seed)
        x.copy_(st.from_numpy(new).cuda())
        g.replay()
        cuda.synchronize()
        _close(out, np.fft.fft(new.astype(np.complex128), axis=1).astype(np.complex64), "complex64", 1024)
        _close(outb, b, "complex64", 67)
        _close(outc, np.fft.fft(c.astype(np.complex128)).astype(np.complex64), "complex64", 96)


def test_bad_input_errors_name_the_op():
    x = st.ones(8, device="cuda")
    with pytest.raises(RuntimeError, match=r"Invalid number of data points \(0\) specified"):
        st.fft.fft(x, n=0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        st.fft.fft(x, dim=3)
    with pytest.raises(NotImplementedError, match="Unsupported dtype Half"):
        st.fft.rfft(st.ones(8, dtype=st.float16, device="cuda"))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_the_pass_at_a_time_path_matches_the_shared_memory_path(monkeypatch, dtype):
    """Note [Shared-memory FFT]: short rows run in one launch; the same lengths a pass per launch agree."""
    a = _data((32, 4 * 360), dtype, 10)
    r = _data((32, 960), "float32" if dtype == "complex64" else "float64", 11)
    x, xr = st.from_numpy(a).cuda(), st.from_numpy(r).cuda()
    results = []
    for limit in (fft_ops.SMEM_MAX_BYTES, 0):
        monkeypatch.setattr(fft_ops, "SMEM_MAX_BYTES", limit)
        fft_ops._smem_plan.cache_clear()
        results.append((st.fft.fft(x), st.fft.rfft(xr, norm="ortho"), st.fft.irfft(x[:, :481], n=960)))
    fft_ops._smem_plan.cache_clear()
    ref = (np.fft.fft(a.astype(np.complex128)), np.fft.rfft(r.astype(np.float64), norm="ortho"),
           np.fft.irfft(a[:, :481].astype(np.complex128), n=960))
    for got in results:
        for g, want, n in zip(got, ref, (1440, 960, 960)):
            _close(g, want.astype(np.dtype(g.dtype.name)), str(g.dtype).split(".")[-1], n)
