"""The chunked F.linear_cross_entropy on a GPU at GPT-2's head shapes: the same loss and gradients as the
reference path, a fraction of its peak memory, and no host synchronization."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda
import strided.nn.functional as F

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]


def _loss_and_grads(x, w, b, t, options):
    xs, ws, bs = (v.detach().requires_grad_() for v in (x, w, b))
    cuda.synchronize()
    base = cuda.memory_allocated()
    cuda.reset_peak_memory_stats()
    loss = F.linear_cross_entropy(xs, ws, t, linear_bias=bs, options=options)
    loss.backward()
    cuda.synchronize()
    return loss, xs.grad, ws.grad, bs.grad, cuda.max_memory_allocated() - base


def test_gpt2_head_chunked_matches_the_reference_in_a_fraction_of_the_memory():
    n, d, c = 1024, 768, 50257
    g = st.Generator(device="cuda").manual_seed(0)
    x = st.randn(n, d, device="cuda", generator=g)
    w = st.randn(c, d, device="cuda", generator=g) * 0.02
    b = st.randn(c, device="cuda", generator=g) * 0.02
    t = st.randint(0, c, (n,), device="cuda", generator=g)
    t[5] = -100
    ref = _loss_and_grads(x, w, b, t, None)
    cuda.set_sync_debug_mode("error")  # the chunk loop never waits for the GPU
    try:
        got = _loss_and_grads(x, w, b, t, st.nn.LinearCrossEntropyOptions())
    finally:
        cuda.set_sync_debug_mode(0)
    for a, e in zip(got[:4], ref[:4]):
        a, e = a.detach().cpu().numpy(), e.detach().cpu().numpy()
        np.testing.assert_allclose(a, e, rtol=2e-3, atol=2e-3 * np.abs(e).max())
    logits_bytes = n * c * 4
    assert ref[4] > 2 * logits_bytes  # the reference holds the logits and their gradient
    assert got[4] < ref[4] / 2, (got[4], ref[4])


def test_bfloat16_under_autocast_runs_in_float32_inside():
    g = st.Generator(device="cuda").manual_seed(1)
    x = st.randn(300, 64, device="cuda", generator=g).requires_grad_()
    w = (st.randn(1000, 64, device="cuda", generator=g) * 0.1).requires_grad_()
    t = st.randint(0, 1000, (300,), device="cuda", generator=g)
    with st.autocast("cuda", dtype=st.bfloat16):
        loss = F.linear_cross_entropy(x, w, t, options=st.nn.LinearCrossEntropyOptions(batch_chunk_size=64,
                                                                                        chunking_method=None))
    loss.backward()
    assert loss.dtype is st.float32 and x.grad.dtype is st.float32
    xc, wc = x.detach().cpu().requires_grad_(), w.detach().cpu().requires_grad_()
    want = F.cross_entropy(xc @ wc.t(), t.cpu())
    want.backward()
    np.testing.assert_allclose(loss.item(), want.item(), rtol=1e-4)
    np.testing.assert_allclose(w.grad.cpu().numpy(), wc.grad.numpy(), rtol=1e-3, atol=1e-5)
