"""The demo on a GPU: the small GPT trains under bfloat16 autocast with the fused AdamW and its loss
falls; autocast puts the matmuls in bfloat16 and the softmax/LayerNorm/loss in float32."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

import strided as st
import strided.cuda as cuda
from strided import demo, nn
from strided.nn import functional as F

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]


def test_small_config_loss_falls_on_cuda_with_autocast():
    cfg = replace(demo.CONFIGS["small"], steps=150, warmup=20)
    result = demo.train(cfg, st.device("cuda"), use_amp=True, seed=0, sample_tokens=50, log=lambda *a: None)
    losses = result["losses"]
    assert abs(losses[0] - math.log(len(set(demo.load_text())))) < 0.3
    assert sum(losses[-10:]) / 10 < 2.6, losses[-10:]
    assert math.isfinite(result["val_loss"]) and len(result["sample"]) == 50
    assert cuda.memory_allocated() > 0 and cuda.memory_reserved() >= cuda.memory_allocated()


def test_cuda_autocast_dtypes_and_grads():
    lin = nn.Linear(16, 8, device="cuda")
    ln = nn.LayerNorm(8, device="cuda")
    x = st.randn(4, 16, device="cuda")
    with st.autocast("cuda", dtype=st.bfloat16):
        h = lin(x)
        n = ln(h)
        p = F.softmax(h, -1)
        loss = F.cross_entropy(n, st.tensor([0, 1, 2, 3], device="cuda"))
    assert h.dtype is st.bfloat16 and n.dtype is st.float32 and p.dtype is st.float32 and loss.dtype is st.float32
    loss.backward()
    assert lin.weight.grad.dtype is st.float32 and ln.weight.grad.dtype is st.float32


def test_grad_scaler_on_cuda_float16():
    st.manual_seed(0)
    model = nn.Linear(8, 4, device="cuda")
    opt = st.optim.AdamW(model.parameters(), lr=1e-2, fused=True)
    scaler = st.amp.GradScaler("cuda", init_scale=2.0**8, growth_interval=2)
    x, y = st.randn(16, 8, device="cuda"), st.randint(0, 4, (16,), device="cuda")
    losses = []
    for _ in range(6):
        opt.zero_grad()
        with st.autocast("cuda", dtype=st.float16):
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    assert losses[-1] < losses[0] and scaler.get_scale() == 2.0**11


def test_small_config_loss_falls_with_the_cuda_graph():
    """Note [Demo graph]: forward + backward replayed from a graph, dropout drawing fresh masks."""
    cfg = replace(demo.CONFIGS["small"], steps=150, warmup=20)
    result = demo.train(cfg, st.device("cuda"), use_amp=True, seed=0, sample_tokens=20, log=lambda *a: None,
                        cuda_graph=True)
    losses = result["losses"]
    assert abs(losses[0] - math.log(len(set(demo.load_text())))) < 0.3
    assert sum(losses[-10:]) / 10 < 2.6, losses[-10:]
    assert len(set(losses[-10:])) == 10  # each replay computed its own batch's loss
    assert math.isfinite(result["val_loss"]) and len(result["sample"]) == 20
