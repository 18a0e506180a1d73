"""The Transformer layers on CUDA: the CPU's results and gradients, and activation checkpointing of an
encoder layer (with dropout) giving the plain layer's gradients."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import strided as st
import strided.nn as nn
from strided import cuda
from strided.utils.checkpoint import checkpoint

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]


def _grads(run, layer, x):
    for p in layer.parameters():
        p.grad = None
    out = run(x)
    out.square().sum().backward()
    return out.detach().numpy(force=True), [p.grad.numpy(force=True) for p in layer.parameters()]


def test_transformer_on_cuda_matches_cpu():
    st.manual_seed(0)
    cpu = nn.Transformer(32, 4, 2, 2, 64, dropout=0.0, batch_first=True)
    gpu = copy.deepcopy(cpu).to("cuda")
    src = np.random.default_rng(0).standard_normal((3, 7, 32)).astype(np.float32)
    tgt = np.random.default_rng(1).standard_normal((3, 5, 32)).astype(np.float32)
    mask = nn.Transformer.generate_square_subsequent_mask(5)
    kpm = np.zeros((3, 7), dtype=bool)
    kpm[:, -2:] = True
    outs = []
    for m, dev in ((cpu, "cpu"), (gpu, "cuda")):
        y = m(st.tensor(src, device=dev), st.tensor(tgt, device=dev), tgt_mask=mask.to(dev),
              src_key_padding_mask=st.tensor(kpm, device=dev), memory_key_padding_mask=st.tensor(kpm, device=dev))
        y.square().sum().backward()
        outs.append((y.detach().numpy(force=True), [p.grad.numpy(force=True) for p in m.parameters()]))
    np.testing.assert_allclose(outs[1][0], outs[0][0], rtol=1e-4, atol=1e-5)
    for a, b in zip(outs[1][1], outs[0][1]):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-4)


def test_checkpointed_encoder_layer_with_dropout():
    st.manual_seed(0)
    layer = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.2, batch_first=True).to("cuda")
    x = st.randn(4, 16, 64, device="cuda", requires_grad=True)
    cuda.manual_seed(3)
    ref = _grads(layer, layer, x)
    cuda.manual_seed(3)
    got = _grads(lambda t: checkpoint(layer, t, use_reentrant=False), layer, x)
    np.testing.assert_allclose(got[0], ref[0], rtol=1e-5, atol=1e-6)
    for a, b in zip(got[1], ref[1]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
