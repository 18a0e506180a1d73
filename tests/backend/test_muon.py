"""optim.Muon against torch.optim.Muon: a few steps on square, wide and tall weights with each learning-rate
adjustment, Nesterov or not, bfloat16 params; the refusals in torch's words."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st

torch = pytest.importorskip("torch")

SHAPES = [(6, 6), (4, 9), (9, 4)]


def _run(lib, dtype, steps=3, **kw):
    rng = np.random.default_rng(0)
    ws = [lib.nn.Parameter(lib.tensor(rng.standard_normal(s).astype(np.float32)).to(dtype)) for s in SHAPES]
    opt = lib.optim.Muon(ws, lr=0.02, **kw)
    for k in range(steps):
        for i, w in enumerate(ws):
            g = np.random.default_rng(100 * k + i).standard_normal(w.shape).astype(np.float32)
            w.grad = lib.tensor(g).to(dtype)
        opt.step()
    return [w.detach().float().numpy() for w in ws]


@pytest.mark.parametrize("kw", [{}, {"nesterov": False}, {"adjust_lr_fn": "match_rms_adamw"},
                                {"adjust_lr_fn": "spectral_unclamped", "weight_decay": 0.0, "ns_steps": 3}])
def test_muon_matches_torch(kw):
    ours, theirs = _run(st, st.float32, **kw), _run(torch, torch.float32, **kw)
    for a, b in zip(ours, theirs):
        # the Newton-Schulz iteration runs in bfloat16 in both, with the same roundings (measured: 3e-8 apart)
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)


def test_muon_bfloat16_params_match_torch():
    for a, b in zip(_run(st, st.bfloat16, steps=2), _run(torch, torch.bfloat16, steps=2)):
        np.testing.assert_allclose(a, b, rtol=0, atol=8e-3)  # a bfloat16 ulp at 1 is 7.8e-3


def test_muon_refusals_in_torchs_words():
    w = st.nn.Parameter(st.ones(3))
    with pytest.raises(ValueError, match=r"Muon only supports 2D parameters whereas we found a parameter with size"):
        st.optim.Muon([w])
    m = st.nn.Parameter(st.ones(2, 2))
    with pytest.raises(ValueError, match="Adjust learning rate function bogus is not supported"):
        st.optim.Muon([m], adjust_lr_fn="bogus")
    with pytest.raises(ValueError, match="Learning rate should be >= 0 but is: -1"):
        st.optim.Muon([m], lr=-1)
    opt = st.optim.Muon([m], ns_steps=100)
    m.grad = st.ones(2, 2)
    with pytest.raises(ValueError, match="Number of steps must be less than 100 for computational efficiency"):
        opt.step()


@pytest.mark.skipif(not st.cuda.is_available(), reason="no CUDA device")
def test_muon_on_cuda_close_to_cpu():
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((64, 32)).astype(np.float32)
    g = rng.standard_normal((64, 32)).astype(np.float32)
    out = []
    for device in ("cpu", "cuda"):
        w = st.nn.Parameter(st.tensor(w0, device=device))
        w.grad = st.tensor(g, device=device)
        st.optim.Muon([w], lr=0.02).step()
        out.append(w.detach().cpu().numpy())
    np.testing.assert_allclose(out[1], out[0], rtol=0, atol=2e-3)  # bfloat16 GEMMs summed in other orders
