"""Adagrad(fused=True): torch's CPU fused Adagrad (the ``_fused_adagrad_`` op, one NumPy pass per tensor in opmath),
against torch's fused Adagrad bit for bit where torch is installed and against strided's for-loop form; grad_scale
and found_inf as torch's fused step takes them; torch's refusals (CUDA / Meta params, foreach with fused)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import strided as st

SHAPES = [(3, 4), (5,), (2, 2, 2)]
CASES = [dict(), dict(weight_decay=0.1, lr_decay=0.01, maximize=True), dict(initial_accumulator_value=0.5, eps=1e-6)]


def _run(lib, dtype: str, fused, kw, init, grads):
    ps = [lib.nn.Parameter(lib.tensor(a).to(getattr(lib, dtype))) for a in init]
    opt = lib.optim.Adagrad(ps, lr=0.1, fused=fused, **kw)
    for gs in grads:
        for p, g in zip(ps, gs):
            p.grad = lib.tensor(g).to(getattr(lib, dtype))
        opt.step()
    state = opt.state_dict()["state"][0]
    return [p.detach().float().numpy() for p in ps], float(state["step"]), state["sum"].float().numpy()


def _data(seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in SHAPES], [[rng.standard_normal(s) for s in SHAPES] for _ in range(3)]


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_fused_matches_the_for_loop_and_torch(dtype, case):
    init, grads = _data(case)
    fused = _run(st, dtype, True, CASES[case], init, grads)
    loop = _run(st, dtype, False, CASES[case], init, grads)
    assert fused[1] == loop[1] == 3.0
    tol = 1e-2 if dtype == "bfloat16" else 1e-6  # (the for-loop rounds each op in bfloat16)
    for a, b in zip(fused[0], loop[0]):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    torch = pytest.importorskip("torch")
    theirs = _run(torch, dtype, True, CASES[case], init, grads)
    for a, b in zip(fused[0], theirs[0]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(fused[2], theirs[2], rtol=1e-6)


def test_grad_scale_and_found_inf():
    """The grads are unscaled (and written back unscaled); a found_inf of 1 skips the update and takes the step
    back, as torch's ``_fused_adagrad``."""
    fused_adagrad = importlib.import_module("strided.optim.adagrad")._fused_adagrad
    p, g, s, steps = [st.ones(3)], [st.full((3,), 4.0)], [st.zeros(3)], [st.zeros((), dtype=st.float32)]
    kw = dict(lr=0.1, weight_decay=0.0, lr_decay=0.0, eps=1e-10, maximize=False)
    fused_adagrad(p, g, s, steps, grad_scale=st.tensor(2.0), found_inf=st.tensor(0.0), **kw)
    assert g[0].tolist() == [2.0] * 3 and s[0].tolist() == [4.0] * 3 and float(steps[0]) == 1.0
    assert p[0].tolist() == pytest.approx([0.9] * 3)
    fused_adagrad(p, g, s, steps, grad_scale=st.tensor(2.0), found_inf=st.tensor(1.0), **kw)
    assert p[0].tolist() == pytest.approx([0.9] * 3) and s[0].tolist() == [4.0] * 3 and float(steps[0]) == 1.0


def test_refusals_as_torch():
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together."):
        st.optim.Adagrad([st.nn.Parameter(st.ones(2))], fused=True, foreach=True)
    with pytest.raises(RuntimeError, match=r"supported devices: \['cpu'\]"):
        st.optim.Adagrad([st.nn.Parameter(st.ones(2, device="meta"))], fused=True)
    with pytest.raises(RuntimeError, match="grad_scale and found_inf are only supported by the fused"):
        importlib.import_module("strided.optim.adagrad").adagrad(
            [st.ones(1)], [st.ones(1)], [st.zeros(1)], [st.tensor(0.0)], grad_scale=st.tensor(1.0), lr=0.1,
            weight_decay=0.0, lr_decay=0.0, eps=1e-10, maximize=False)
