"""The recurrent layers on CUDA: a long packed, bidirectional LSTM and GRU give the CPU's outputs and
gradients (the fused cell kernels, Note [Fused cells], over many steps), the fused kernels queue on the
current stream, and the layers run under bfloat16 autocast."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import strided as st
import strided.nn as nn
from strided import cuda
from strided.nn.utils import rnn as rnn_utils

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]


def _run(m, x, lengths, device):
    xs = st.tensor(x, device=device).requires_grad_()
    packed = rnn_utils.pack_padded_sequence(xs, lengths, enforce_sorted=False)
    out, h = m(packed)
    padded, _ = rnn_utils.pad_packed_sequence(out, total_length=x.shape[0])
    hs = h if isinstance(h, tuple) else (h,)
    (padded.square().sum() + sum(t.sum() for t in hs)).backward()
    return ([padded.detach().numpy(force=True), *(t.detach().numpy(force=True) for t in hs)],
            [xs.grad.numpy(force=True), *(p.grad.numpy(force=True) for p in m.parameters())])


@pytest.mark.parametrize("name", ["LSTM", "GRU"])
def test_long_packed_bidirectional_matches_cpu(name):
    st.manual_seed(0)
    cpu = getattr(nn, name)(16, 32, num_layers=2, bidirectional=True)
    gpu = copy.deepcopy(cpu).to("cuda")
    x = np.random.default_rng(0).standard_normal((40, 6, 16)).astype(np.float32)
    lengths = [40, 7, 33, 1, 40, 12]
    (c_out, c_grad), (g_out, g_grad) = _run(cpu, x, lengths, "cpu"), _run(gpu, x, lengths, "cuda")
    for a, b in zip(g_out, c_out):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    for a, b in zip(g_grad, c_grad):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-4 * max(1.0, float(np.abs(b).max())))


def test_fused_cells_run_on_the_current_stream():
    """The cell reads a state written just before it on a busy side stream: launched on any other stream it
    would read the state before the write lands."""
    ig, hg = st.randn(64, 4 * 256, device="cuda"), st.randn(64, 4 * 256, device="cuda")
    cx, blocker = st.zeros(64, 256, device="cuda"), st.zeros(1 << 26, device="cuda")
    expected = [t.numpy(force=True) for t in st._thnn_fused_lstm_cell(ig, hg, st.ones(64, 256, device="cuda"))[:2]]
    expected_gru = st._thnn_fused_gru_cell(ig[:, :768], hg[:, :768], st.ones(64, 256, device="cuda"))[0]
    cuda.synchronize()
    s = cuda.Stream()
    with cuda.stream(s):
        for k in range(20):
            blocker.fill_(float(k))
        cx.fill_(1.0)
        hy, cy, _ = st._thnn_fused_lstm_cell(ig, hg, cx)
        gru = st._thnn_fused_gru_cell(ig[:, :768], hg[:, :768], cx)[0]
    s.synchronize()
    np.testing.assert_array_equal(hy.numpy(force=True), expected[0])
    np.testing.assert_array_equal(cy.numpy(force=True), expected[1])
    np.testing.assert_array_equal(gru.numpy(force=True), expected_gru.numpy(force=True))


@pytest.mark.parametrize("name", ["LSTM", "GRU"])
def test_autocast_bfloat16(name):
    st.manual_seed(0)
    m = getattr(nn, name)(16, 32, num_layers=2).to("cuda")
    x = st.randn(10, 4, 16, device="cuda")
    ref = m(x)[0]
    with st.autocast("cuda", dtype=st.bfloat16):
        out, _ = m(x)
    assert out.dtype is st.bfloat16
    np.testing.assert_allclose(out.float().numpy(force=True), ref.detach().numpy(force=True), atol=5e-2)
    out.float().sum().backward()
    assert all(p.grad is not None and p.grad.dtype is st.float32 for p in m.parameters())
