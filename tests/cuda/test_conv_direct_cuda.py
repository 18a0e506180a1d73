"""The CUDA kernel of the ``convolution`` op (Note [Direct CUDA convolution]): 1-d and 2-d convolutions of one group
as im2col / col2im launches and cuBLASLt GEMMs, whole-batch and in slices, against the CPU backend in float64 --
both forms of the weight's gradient, the column-free 1x1 case, non-contiguous inputs, float16 / bfloat16 -- and
the calls it hands to the composite."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda
import strided.ops.composite.convolution_chunks as chunks
from strided.nn import functional as F

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]

RNG = np.random.default_rng(41)

# (id, function, input shape, weight shape): the weight's gradient as per-sample products (large L) and as one
# GEMM over N * L (L = 4 positions, C_out * C * K large)
CASES = [
    ("3x3-pad", lambda F, x, w, b: F.conv2d(x, w, b, padding=1), (4, 8, 12, 10), (16, 8, 3, 3)),
    ("3x3-stride-dilation", lambda F, x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=(0, 2), dilation=(1, 2)),
     (3, 8, 13, 11), (6, 8, 3, 3)),
    ("small-L", lambda F, x, w, b: F.conv2d(x, w, b, padding=1), (5, 64, 2, 2), (96, 64, 3, 3)),
    ("1x1", lambda F, x, w, b: F.conv2d(x, w, b), (4, 16, 6, 7), (24, 16, 1, 1)),
    ("1x1-stride", lambda F, x, w, b: F.conv2d(x, w, b, stride=2), (4, 16, 6, 7), (24, 16, 1, 1)),
    ("conv1d", lambda F, x, w, b: F.conv1d(x, w, b, padding=2, dilation=2), (3, 8, 40), (12, 8, 5)),
    ("same", lambda F, x, w, b: F.conv2d(x, w, b, padding="same"), (2, 4, 9, 8), (6, 4, 4, 3)),
]


def _grads(fn, arrays, device, dtype, upstream, transpose_input=False):
    x, w, b = (st.tensor(a, dtype=dtype, device=device) for a in arrays)
    if transpose_input:  # a non-contiguous input: the H and W of a (N, C, W, H) tensor swapped
        x = st.tensor(np.ascontiguousarray(np.swapaxes(arrays[0], 2, 3)), dtype=dtype, device=device).transpose(2, 3)
        assert not x.is_contiguous()
    for t in (x, w, b):
        t.requires_grad_()
    out = fn(F, x, w, b)
    out.backward(st.tensor(upstream, dtype=dtype, device=device))
    return [t.detach().double().cpu().numpy() for t in (out, x.grad, w.grad, b.grad)]


@pytest.mark.parametrize("budget", ["whole", "slices"])
@pytest.mark.parametrize("name,fn,xs,ws", CASES, ids=[c[0] for c in CASES])
def test_direct_convolution_matches_the_cpu(monkeypatch, budget, name, fn, xs, ws):
    arrays = [RNG.standard_normal(xs), RNG.standard_normal(ws), RNG.standard_normal(ws[0])]
    upstream = RNG.standard_normal(tuple(fn(F, *(st.tensor(a) for a in arrays)).shape))
    ref = _grads(fn, arrays, "cpu", st.float64, upstream)
    if budget == "slices":
        monkeypatch.setattr(chunks, "COLUMN_BUDGET", 1)
    for transpose_input in (False, True) if len(xs) == 4 else (False,):
        got = _grads(fn, arrays, "cuda", st.float64, upstream, transpose_input)
        for g, r in zip(got, ref):
            np.testing.assert_allclose(g, r, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dtype,tol", [("float32", 2e-5), ("float16", 1e-2), ("bfloat16", 2e-2)])
def test_direct_convolution_in_lower_precision(monkeypatch, dtype, tol):
    _name, fn, xs, ws = CASES[0]
    arrays = [RNG.standard_normal(xs), RNG.standard_normal(ws), RNG.standard_normal(ws[0])]
    arrays = [a.astype(np.float32).astype(np.float64) for a in arrays]
    upstream = RNG.standard_normal((4, 16, 12, 10)).astype(np.float32).astype(np.float64)
    ref = _grads(fn, arrays, "cpu", st.float64, upstream)
    with st.backends.cudnn.flags(enabled=True, allow_tf32=False):
        for budget in (1 << 50, 1):
            monkeypatch.setattr(chunks, "COLUMN_BUDGET", budget)
            got = _grads(fn, arrays, "cuda", getattr(st, dtype), upstream)
            for g, r in zip(got, ref):
                assert np.abs(g - r).max() <= tol * np.abs(r).max(), (dtype, budget)


def test_the_composite_takes_the_rest():
    from strided.backends.cuda.kernels import convolution_ops as direct

    x, w = st.randn(2, 4, 6, 6, device="cuda"), st.randn(6, 2, 3, 3, device="cuda")
    assert not direct.takes(x, w, False, 2)  # grouped
    assert not direct.takes(x, st.randn(4, 3, 3, 3, device="cuda"), True, 1)  # transposed, no output padding given
    assert not direct.takes(x, st.randn(4, 3, 3, 3, device="cuda"), True, 1, (1, 2), (1, 0))  # padding >= stride
    assert direct.takes(x, st.randn(4, 3, 3, 3, device="cuda"), True, 1, (2, 2), (1, 0))
    assert not direct.takes(x.contiguous(memory_format=st.channels_last), st.randn(6, 4, 3, 3, device="cuda"),
                            False, 1)
    assert not direct.takes(st.randn(0, 4, 6, 6, device="cuda"), st.randn(6, 4, 3, 3, device="cuda"), False, 1)
    assert direct.takes(x, st.randn(6, 4, 3, 3, device="cuda"), False, 1)
    out = F.conv2d(st.randn(0, 4, 6, 6, device="cuda"), st.randn(6, 4, 3, 3, device="cuda"))
    assert tuple(out.shape) == (0, 6, 4, 4)
    with pytest.raises(RuntimeError, match="Kernel size can't be greater than actual input size"):
        F.conv2d(st.randn(2, 4, 2, 2, device="cuda"), st.randn(6, 4, 3, 3, device="cuda"))
    with pytest.raises(RuntimeError, match="expected input"):
        F.conv2d(x, st.randn(6, 3, 3, 3, device="cuda"))


@pytest.mark.parametrize("grad", [False, True])
def test_the_forward_runs_the_direct_kernel(monkeypatch, grad):
    # the op's YAML entry binds the CUDA kernel (it did not, and the composite ran every forward)
    from strided.backends.cuda.kernels import convolution_ops as direct

    calls = []
    real = direct.convolution_forward
    monkeypatch.setattr(direct, "convolution_forward", lambda *a: calls.append(tuple(a[0].shape)) or real(*a))
    x, w, b = (st.tensor(RNG.standard_normal(s), dtype=st.float64) for s in ((2, 4, 6, 6), (6, 4, 3, 3), (6,)))
    xc, wc = x.cuda().requires_grad_(grad), w.cuda().requires_grad_(grad)
    out = F.conv2d(xc, wc, b.cuda(), padding=1)
    assert calls == [(2, 4, 6, 6)]
    assert out.requires_grad is grad
    np.testing.assert_allclose(out.detach().cpu().numpy(), F.conv2d(x, w, b, padding=1).numpy(), rtol=1e-12,
                               atol=1e-12)


# transposed convolutions: (id, function, input shape, weight shape (C_in, C_out, *kernel)); "small-L" takes the weight
# gradient's one-GEMM form, "1x1" needs no columns, the last one's output padding reaches its stride (the composite)
TRANSPOSED = [
    ("k4-s2-p1", lambda F, x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1), (3, 8, 7, 6), (8, 5, 4, 4)),
    ("k3-s2-op1-dilation", lambda F, x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1,
                                                                  dilation=(2, 1)), (2, 6, 5, 7), (6, 4, 3, 3)),
    ("k3-p1", lambda F, x, w, b: F.conv_transpose2d(x, w, b, padding=1), (4, 8, 9, 9), (8, 6, 3, 3)),
    ("small-L", lambda F, x, w, b: F.conv_transpose2d(x, w, b, stride=2), (2, 32, 2, 2), (32, 64, 3, 3)),
    ("1x1", lambda F, x, w, b: F.conv_transpose2d(x, w, b), (3, 16, 5, 6), (16, 12, 1, 1)),
    ("conv_transpose1d", lambda F, x, w, b: F.conv_transpose1d(x, w, b, stride=3, padding=1, output_padding=2),
     (3, 6, 11), (6, 4, 5)),
    ("padding-past-stride", lambda F, x, w, b: F.conv_transpose2d(x, w, b, output_padding=1, dilation=2),
     (2, 4, 5, 5), (4, 3, 3, 3)),
]


@pytest.mark.parametrize("budget", ["whole", "slices"])
@pytest.mark.parametrize("name,fn,xs,ws", TRANSPOSED, ids=[c[0] for c in TRANSPOSED])
def test_direct_transposed_convolution_matches_the_cpu(monkeypatch, budget, name, fn, xs, ws):
    from strided.backends.cuda.kernels import convolution_ops as direct

    arrays = [RNG.standard_normal(xs), RNG.standard_normal(ws), RNG.standard_normal(ws[1])]
    upstream = RNG.standard_normal(tuple(fn(F, *(st.tensor(a) for a in arrays)).shape))
    ref = _grads(fn, arrays, "cpu", st.float64, upstream)
    if budget == "slices":
        monkeypatch.setattr(chunks, "COLUMN_BUDGET", 1)
    calls = []
    real = direct.transposed_forward
    monkeypatch.setattr(direct, "transposed_forward", lambda *a: calls.append(1) or real(*a))
    for transpose_input in (False, True) if len(xs) == 4 else (False,):
        got = _grads(fn, arrays, "cuda", st.float64, upstream, transpose_input)
        for g, r in zip(got, ref):
            np.testing.assert_allclose(g, r, rtol=1e-10, atol=1e-10)
    assert len(calls) == (0 if name == "padding-past-stride" else 2 if len(xs) == 4 else 1)


@pytest.mark.parametrize("dtype,tol", [("float32", 2e-5), ("bfloat16", 2e-2)])
def test_direct_transposed_convolution_in_lower_precision(dtype, tol):
    _name, fn, xs, ws = TRANSPOSED[0]
    arrays = [RNG.standard_normal(s).astype(np.float32).astype(np.float64) for s in (xs, ws, (ws[1],))]
    upstream = RNG.standard_normal((3, 5, 14, 12)).astype(np.float32).astype(np.float64)
    ref = _grads(fn, arrays, "cpu", st.float64, upstream)
    with st.backends.cudnn.flags(enabled=True, allow_tf32=False):
        got = _grads(fn, arrays, "cuda", getattr(st, dtype), upstream)
    for g, r in zip(got, ref):
        assert np.abs(g - r).max() <= tol * np.abs(r).max(), dtype
