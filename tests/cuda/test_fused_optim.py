"""The multi-tensor CUDA kernels on a GPU: fused Adam/AdamW/SGD and the _foreach_* fast path
against the CPU backend, for fp32/bf16/fp16 params, many tensors of odd sizes (several launches,
chunk tails, misaligned views), grad_scale and found_inf."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda
from strided import optim

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]

# 228 tensors (more than one launch of 192), sizes around the 32768-element chunk and odd tails
SIZES = [1, 3, 7, 32767, 32768, 32769, 65536, 65537, 131075, 200003, 17, 1000] * 19
TOL = {st.float32: 2e-6, st.bfloat16: 2e-2, st.float16: 2e-3}


def _host(seed, n, dtype, scale=1.0):
    rng = np.random.default_rng(seed)
    return [st.from_numpy((rng.standard_normal(s) * scale).astype(np.float32)).to(dtype) for s in SIZES[:n]]


def _run(cls, kw, device, dtype, steps=3, n=None, grad_scale=None, found_inf_at=None):
    n = len(SIZES) if n is None else n
    params = [p.to(device) for p in _host(0, n, dtype)]
    opt = cls(params, **kw)
    for k in range(steps):
        for p, g in zip(params, _host(k + 1, n, dtype)):
            p.grad = g.to(device) * (grad_scale or 1.0)
        if grad_scale is not None:
            opt.grad_scale = st.tensor(float(grad_scale), device=device)
            opt.found_inf = st.tensor(1.0 if k == found_inf_at else 0.0, device=device)
        opt.step()
    return [p.cpu().float().numpy() for p in params], opt


def _close(got, ref, dtype):
    tol = TOL[dtype]
    for a, b in zip(got, ref):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


CASES = [
    (optim.AdamW, dict(lr=1e-2, weight_decay=0.1, eps=1e-3)),
    (optim.Adam, dict(lr=1e-2, weight_decay=0.1, amsgrad=True, maximize=True, eps=1e-3)),
    (optim.SGD, dict(lr=1e-2, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    (optim.SGD, dict(lr=1e-2, momentum=0.9, nesterov=True, maximize=True)),
]


@pytest.mark.parametrize("dtype", [st.float32, st.bfloat16, st.float16], ids=lambda d: d.name)
@pytest.mark.parametrize("cls,kw", CASES, ids=lambda x: getattr(x, "__name__", None) or str(sorted(x)))
def test_fused_cuda_matches_cpu(cls, kw, dtype):
    n = 40 if dtype is st.float32 else 20
    ref, _ = _run(cls, dict(kw, fused=True), "cpu", dtype, n=n)
    got, opt = _run(cls, dict(kw, fused=True), "cuda", dtype, n=n)
    _close(got, ref, dtype)
    if cls is not optim.SGD:
        s = opt.state[opt.param_groups[0]["params"][0]]["step"]
        assert s.device.type == "cuda" and s.item() == 3.0


def test_fused_adamw_many_tensors_several_launches():
    kw = dict(lr=1e-2, weight_decay=0.1, fused=True)
    ref, _ = _run(optim.AdamW, kw, "cpu", st.float32, steps=2)
    got, _ = _run(optim.AdamW, kw, "cuda", st.float32, steps=2)
    _close(got, ref, st.float32)


@pytest.mark.parametrize("cls", [optim.AdamW, optim.SGD])
def test_grad_scale_and_found_inf_skip(cls):
    kw = dict(lr=1e-2, fused=True, **({"momentum": 0.9} if cls is optim.SGD else {}))
    ref, _ = _run(cls, kw, "cpu", st.float32, n=12, grad_scale=64.0, found_inf_at=1)
    got, opt = _run(cls, kw, "cuda", st.float32, n=12, grad_scale=64.0, found_inf_at=1)
    _close(got, ref, st.float32)
    if cls is optim.AdamW:
        assert opt.state[opt.param_groups[0]["params"][0]]["step"].item() == 2.0
    g = opt.param_groups[0]["params"][3].grad.cpu().numpy()
    np.testing.assert_allclose(g, _host(3, 12, st.float32)[3].numpy(), rtol=1e-6)  # unscaled in place


@pytest.mark.parametrize("impl", [dict(foreach=True), dict(foreach=False)])
def test_foreach_and_for_loop_cuda_match_fused(impl):
    kw = dict(lr=1e-2, weight_decay=0.1, amsgrad=True)
    ref, _ = _run(optim.AdamW, dict(kw, fused=True), "cuda", st.float32, n=25)
    got, _ = _run(optim.AdamW, dict(kw, **impl), "cuda", st.float32, n=25)
    _close(got, ref, st.float32)


def test_foreach_ops_fast_path_and_fallback():
    xs = [t.to("cuda") for t in _host(5, 30, st.float32)]
    ys = [t.to("cuda") for t in _host(6, 30, st.float32)]
    xc, yc = [t.cpu() for t in xs], [t.cpu() for t in ys]
    for lib_x, lib_y in ((xs, ys), (xc, yc)):
        st._foreach_lerp_(lib_x, lib_y, 0.3)
        st._foreach_addcmul_(lib_x, lib_y, lib_y, value=0.5)
        st._foreach_mul_(lib_x, 0.9)
    for a, b in zip(xs, xc):
        np.testing.assert_allclose(a.cpu().numpy(), b.numpy(), rtol=1e-6, atol=1e-6)
    # misaligned views (offset 1 element) go through the scalar path of the same kernel
    base = st.zeros(1001, device="cuda")
    view = base[1:]
    st._foreach_add_([view], 2.0)
    assert base[0].item() == 0.0 and float(view.cpu().numpy().min()) == 2.0
    # a non-contiguous member falls back to the per-tensor ops
    m = st.ones(4, 6, device="cuda")
    st._foreach_mul_([m[:, ::2], xs[0]], 3.0)
    np.testing.assert_array_equal(m.cpu().numpy()[:, ::2], 3.0)
    np.testing.assert_array_equal(m.cpu().numpy()[:, 1::2], 1.0)


@pytest.mark.parametrize("cls", [optim.AdamW, optim.SGD])
def test_fused_with_non_contiguous_grads(cls):
    """Transposed grads (as autograd may produce) run on contiguous copies; results match the CPU."""
    kw = dict(lr=1e-2, fused=True, **({"momentum": 0.9} if cls is optim.SGD else {}))
    rng = np.random.default_rng(7)
    shapes = [(300, 70), (65537,), (129, 513), (4, 4)]
    base = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    gbase = [rng.standard_normal(s[::-1]).astype(np.float32) for s in shapes]
    results = []
    for device in ("cpu", "cuda"):
        params = [st.from_numpy(b.copy()).to(device) for b in base]
        opt = cls(params, **kw)
        for _ in range(2):
            for p, g in zip(params, gbase):
                t = st.from_numpy(g * 4.0).to(device)
                p.grad = t.t() if t.dim() == 2 else t
            opt.grad_scale, opt.found_inf = st.tensor(4.0, device=device), st.tensor(0.0, device=device)
            opt.step()
        assert not params[0].grad.is_contiguous()
        np.testing.assert_allclose(params[0].grad.cpu().numpy(), gbase[0].T, rtol=1e-6)  # unscaled in place
        results.append([p.cpu().numpy() for p in params])
    _close(results[1], results[0], st.float32)
