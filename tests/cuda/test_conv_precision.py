"""Convolutions on CUDA compute float32 on TF32 tensor cores exactly when ``strided.backends.cudnn.allow_tf32``
says (True by default, as torch's), forward and backward, whatever the matmul flag says (Note [Convolution
precision]). Checked against a float64 CPU convolution with issue 5's relative-error bounds."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda
from strided.nn import functional as F

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]

FULL_REL, TF32_REL = 2e-5, 3e-3  # tests/cuda/test_blas.py's bounds
RNG = np.random.default_rng(5)

# (function, input shape, weight shape, keyword arguments): K = C_in * kernel is 128-864 for each GEMM
CASES = [
    ("conv1d", (8, 64, 128), (64, 64, 3), {"padding": 1}),
    ("conv2d", (8, 64, 16, 16), (64, 64, 3, 3), {"padding": 1}),
    ("conv2d", (8, 64, 16, 16), (128, 64, 3, 3), {"stride": 2, "padding": 1}),
    ("conv_transpose1d", (8, 64, 128), (64, 64, 3), {"stride": 2, "padding": 1, "output_padding": 1}),
    ("conv_transpose2d", (8, 64, 16, 16), (64, 64, 3, 3), {"padding": 1}),
    ("conv_transpose2d", (8, 64, 16, 16), (64, 32, 4, 4), {"stride": 2, "padding": 1}),
    ("conv3d", (4, 32, 8, 8, 8), (32, 32, 3, 3, 3), {"padding": 1}),
    ("conv_transpose3d", (4, 32, 8, 8, 8), (32, 16, 2, 2, 2), {"stride": 2}),
]


def _f32(shape):
    return RNG.standard_normal(shape).astype(np.float32).astype(np.float64)


def _rel(got, ref):
    return float(np.abs(got - ref).max() / np.abs(ref).max())


def _run(name, x, w, g, kw, device, dtype):
    xs = st.tensor(x, device=device, dtype=dtype, requires_grad=True)
    ws = st.tensor(w, device=device, dtype=dtype, requires_grad=True)
    out = getattr(F, name)(xs, ws, None, **kw)
    out.backward(st.tensor(g, device=device, dtype=dtype))
    return [t.detach().cpu().numpy().astype(np.float64) for t in (out, xs.grad, ws.grad)]


@pytest.fixture(autouse=True)
def _restore_flags():
    from strided.backends.cuda import matmul

    saved, tf32 = dict(matmul._state), st.backends.cudnn.allow_tf32
    yield
    matmul._state.update(saved)
    st.backends.cudnn.allow_tf32 = tf32


@pytest.mark.parametrize("name,xs,ws,kw", CASES, ids=[f"{c[0]}-{c[2]}-{c[3]}" for c in CASES])
def test_cudnn_allow_tf32_governs_forward_and_backward(name, xs, ws, kw):
    x, w = _f32(xs), _f32(ws)
    out_shape = getattr(F, name)(st.tensor(x[:1]), st.tensor(w), None, **kw).shape
    g = _f32((xs[0], *out_shape[1:]))
    refs = _run(name, x, w, g, kw, "cpu", st.float64)
    assert st.backends.cudnn.allow_tf32 is True  # torch's default
    tf32 = [_rel(got, ref) for got, ref in zip(_run(name, x, w, g, kw, "cuda", st.float32), refs)]
    assert all(1e-5 < r < TF32_REL for r in tf32), f"output, input grad, weight grad: {tf32}"
    st.backends.cuda.matmul.allow_tf32 = True  # the matmul flag does not reach convolutions
    with st.backends.cudnn.flags(enabled=True, allow_tf32=False):
        full = [_rel(got, ref) for got, ref in zip(_run(name, x, w, g, kw, "cuda", st.float32), refs)]
    assert all(r < FULL_REL for r in full), f"output, input grad, weight grad: {full}"
    assert st.backends.cudnn.allow_tf32 is True and st.backends.cuda.matmul.allow_tf32 is True


def test_the_flag_is_read_when_the_backward_runs_and_matmuls_keep_theirs():
    """The gradient's GEMMs take the flag as it is when backward runs (torch reads it per cuDNN call), and a
    matmul between two convolutions keeps the matmul flag (full float32 by default)."""
    x, w, a = _f32((8, 64, 16, 16)), _f32((64, 64, 3, 3)), _f32((512, 512))
    refs = _run("conv2d", x, w, _f32((8, 64, 16, 16)), {"padding": 1}, "cpu", st.float64)
    xs = st.tensor(x, device="cuda", dtype=st.float32, requires_grad=True)
    ws = st.tensor(w, device="cuda", dtype=st.float32, requires_grad=True)
    out = F.conv2d(xs, ws, None, padding=1)
    assert 1e-5 < _rel(out.detach().cpu().numpy(), refs[0]) < TF32_REL
    ac = st.tensor(a, device="cuda", dtype=st.float32)
    assert _rel(st.mm(ac, ac).cpu().numpy(), a @ a) < FULL_REL
    st.backends.cudnn.allow_tf32 = False
    g = RNG.standard_normal((8, 64, 16, 16)).astype(np.float32)
    out.backward(st.tensor(g, device="cuda"))
    ref_x = _run("conv2d", x, w, g.astype(np.float64), {"padding": 1}, "cpu", st.float64)[1]
    assert _rel(xs.grad.cpu().numpy(), ref_x) < FULL_REL
