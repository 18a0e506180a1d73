"""Autocast dtype rules (torch's CPU and CUDA lists) and GradScaler's skip/backoff/growth logic."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

import strided as st
from strided import amp, nn
from strided.dispatch.dispatcher import autocast_state
from strided.nn import functional as F
from strided.testing import available_devices

AUTOCAST_DEVICES = [d for d in available_devices() if d in ("cpu", "cuda")]


def low(device):
    return st.bfloat16 if device == "cpu" else st.float16


# ------------------------------------------------------------------------------- autocast rules
@pytest.mark.parametrize("device", AUTOCAST_DEVICES)
def test_matmul_family_runs_in_lower_precision(device):
    a, b = st.randn(4, 4, device=device), st.randn(4, 4, device=device)
    bias = st.randn(4, device=device)
    lp = low(device)
    with st.autocast(device):
        assert st.mm(a, b).dtype is lp
        assert st.matmul(a, b).dtype is lp
        assert (a @ b).dtype is lp
        assert st.addmm(bias, a, b).dtype is lp
        assert st.bmm(a[None], b[None]).dtype is lp
        assert F.linear(a, b, bias).dtype is lp
        assert nn.Linear(4, 2, device=device)(a).dtype is lp
        # float64 and integer tensors are never cast
        assert st.mm(a.double(), b.double()).dtype is st.float64
        if device == "cpu":
            assert st.mm(a.long(), b.long()).dtype is st.int64
        else:  # no integer GEMM on CUDA (as torch): autocast passes it through to that error
            with pytest.raises(NotImplementedError, match='"addmm_cuda" not implemented for \'Long\''):
                st.mm(a.long(), b.long())
    assert st.mm(a, b).dtype is st.float32


@pytest.mark.parametrize("device", AUTOCAST_DEVICES)
def test_fp32_ops(device):
    x = st.randn(3, 5, device=device).to(low(device))
    target = st.tensor([0, 4, 2], device=device)
    with st.autocast(device):
        assert F.cross_entropy(x, target).dtype is st.float32
        assert F.mse_loss(x, x).dtype is st.float32
        if device == "cpu":  # torch's CPU list keeps softmax/layer_norm/sum in the input dtype
            assert F.softmax(x, -1).dtype is st.bfloat16 and x.sum().dtype is st.bfloat16
        else:
            assert F.softmax(x, -1).dtype is st.float32 and x.sum().dtype is st.float32
            assert F.softmax(x, -1, dtype=st.float64).dtype is st.float64
            assert F.layer_norm(x, (5,)).dtype is st.float32 and x.exp().dtype is st.float32
    # group_norm is on torch's CUDA fp32 list, not on its CPU list
    images, w = st.randn(2, 4, 3, 3, device=device).to(low(device)), st.randn(4, device=device)
    with st.autocast(device):
        out = F.group_norm(images, 2, w, w)
    assert out.dtype is (st.bfloat16 if device == "cpu" else st.float32)
    expected = F.group_norm(images.float(), 2, w, w)
    tol = 2e-2 if device == "cpu" else 1e-5
    np.testing.assert_allclose(out.float().cpu().numpy(), expected.cpu().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("device", AUTOCAST_DEVICES)
def test_promote_and_values(device):
    a = st.randn(2, 3, device=device)
    lp = low(device)
    with st.autocast(device):
        assert st.cat([a, a.to(lp)]).dtype is st.float32
        assert st.cat([a.to(lp), a.to(lp)]).dtype is lp
        got = st.mm(a, a.t())
    ref = a.cpu().numpy().astype(np.float64) @ a.cpu().numpy().astype(np.float64).T
    np.testing.assert_allclose(got.float().cpu().numpy(), ref, rtol=2e-2, atol=2e-2)


def test_nesting_disable_and_state():
    a = st.randn(2, 2)
    assert not amp.is_autocast_enabled("cpu") and amp.get_autocast_dtype("cpu") is st.bfloat16
    with st.autocast("cpu", dtype=st.float16):
        assert amp.is_autocast_enabled("cpu") and amp.get_autocast_dtype("cpu") is st.float16
        assert st.mm(a, a).dtype is st.float16
        with st.autocast("cpu", enabled=False):
            assert st.mm(a, a).dtype is st.float32
        assert st.mm(a, a).dtype is st.float16
    assert not amp.is_autocast_enabled("cpu") and amp.get_autocast_dtype("cpu") is st.bfloat16
    assert autocast_state.active == 0 and autocast_state.tls.mask == 0

    @st.autocast("cpu")
    def f(x):
        return st.mm(x, x)

    assert f(a).dtype is st.bfloat16 and st.mm(a, a).dtype is st.float32


def test_autocast_is_per_thread():
    a = st.randn(2, 2)
    seen = []
    with st.autocast("cpu"):
        t = threading.Thread(target=lambda: seen.append(st.mm(a, a).dtype))
        t.start()
        t.join()
        assert st.mm(a, a).dtype is st.bfloat16
    assert seen == [st.float32]


def test_autocast_errors():
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'meta'"):
        st.autocast("meta")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ctx = st.autocast("cpu", dtype=st.float32)
    assert "CPU Autocast only supports dtypes of strided.bfloat16, strided.float16" in str(w[0].message)
    with ctx:
        assert st.mm(st.ones(2, 2), st.ones(2, 2)).dtype is st.float32


def test_meta_tensors_are_not_autocast():
    m = st.empty(2, 2, device="meta")
    with st.autocast("cpu"):
        assert st.mm(m, m).dtype is st.float32


# ------------------------------------------------------------------------------- GradScaler
class FakeOptimizer:
    def __init__(self, params):
        self.param_groups = [{"params": params}]
        self.steps = 0

    def step(self):
        self.steps += 1
        return "stepped"


def make(device, grads):
    params = []
    for g in grads:
        p = nn.Parameter(st.zeros(len(g), device=device))
        p.grad = st.tensor(g, device=device)
        params.append(p)
    return params, FakeOptimizer(params)


@pytest.mark.parametrize("device", AUTOCAST_DEVICES)
def test_scaler_unscales_and_steps(device):
    scaler = amp.GradScaler(device, init_scale=4.0, growth_interval=2)
    loss = st.tensor(1.5, device=device)
    assert scaler.scale(loss).item() == 6.0
    params, opt = make(device, [[4.0, 8.0], [-2.0]])
    assert scaler.step(opt) == "stepped" and opt.steps == 1
    np.testing.assert_array_equal(params[0].grad.cpu().numpy(), [1.0, 2.0])
    scaler.update()
    assert scaler.get_scale() == 4.0 and scaler._get_growth_tracker() == 1
    # second good step: the scale grows
    scaler.scale(loss)
    params, opt = make(device, [[1.0]])
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 8.0 and scaler._get_growth_tracker() == 0


@pytest.mark.parametrize("device", AUTOCAST_DEVICES)
@pytest.mark.parametrize("bad", [float("inf"), float("nan")])
def test_scaler_skips_on_inf_and_backs_off(device, bad):
    scaler = amp.GradScaler(device, init_scale=1024.0)
    scaler.scale(st.tensor(1.0, device=device))
    params, opt = make(device, [[1.0, bad], [2.0]])
    assert scaler.step(opt) is None and opt.steps == 0
    scaler.update()
    assert scaler.get_scale() == 512.0 and scaler._get_growth_tracker() == 0


def test_scaler_stage_errors_and_state_dict():
    scaler = amp.GradScaler("cpu", init_scale=8.0)
    scaler.scale(st.tensor(1.0))
    params, opt = make("cpu", [[1.0]])
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match=r"unscale_\(\) has already been called on this optimizer"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match=r"unscale_\(\) is being called after step\(\)"):
        scaler.unscale_(opt)
    scaler.update()
    sd = scaler.state_dict()
    assert sd == {"scale": 8.0, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 2000,
                  "_growth_tracker": 1}
    other = amp.GradScaler("cpu")
    other.load_state_dict(sd)
    assert other.get_scale() == 8.0 and other._get_growth_tracker() == 1
    with pytest.raises(RuntimeError, match="source state dict is empty"):
        other.load_state_dict({})
    with pytest.raises(AssertionError, match="No inf checks were recorded prior to update"):
        _update_without_checks()
    with pytest.raises(ValueError, match="The growth factor must be > 1.0"):
        amp.GradScaler("cpu", growth_factor=1.0)


def _update_without_checks():
    s = amp.GradScaler("cpu")
    s.scale(st.tensor(1.0))
    s.update()


def test_disabled_scaler_passes_through():
    scaler = amp.GradScaler("cpu", enabled=False)
    loss = st.tensor(3.0)
    assert scaler.scale(loss) is loss and scaler.get_scale() == 1.0 and scaler.state_dict() == {}
    params, opt = make("cpu", [[float("inf")]])
    assert scaler.step(opt) == "stepped"


def test_unscale_refuses_fp16_grads():
    scaler = amp.GradScaler("cpu")
    scaler.scale(st.tensor(1.0))
    p = nn.Parameter(st.zeros(1, dtype=st.float16))
    p.grad = st.ones(1, dtype=st.float16)
    with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients."):
        scaler.unscale_(FakeOptimizer([p]))


# ------------------------------------------------------------------------------- with autograd and optim
@pytest.mark.parametrize("device", AUTOCAST_DEVICES)
def test_backward_through_autocast_casts(device):
    st.manual_seed(0)
    lin = nn.Linear(8, 5, device=device)
    x = st.randn(6, 8, device=device)
    target = st.tensor([0, 1, 2, 3, 4, 0], device=device)
    F.cross_entropy(lin(x), target).backward()
    ref = lin.weight.grad.cpu().numpy()
    lin.zero_grad()
    with st.autocast(device):
        out = lin(x)
        loss = F.cross_entropy(out, target)
    assert out.dtype is low(device) and loss.dtype is st.float32
    loss.backward()
    assert lin.weight.grad.dtype is st.float32 and lin.bias.grad.dtype is st.float32
    np.testing.assert_allclose(lin.weight.grad.cpu().numpy(), ref, rtol=0.1, atol=0.02)


def test_scaler_with_adamw_matches_unscaled_training():
    def run(scaled):
        st.manual_seed(0)
        model = nn.Linear(4, 3)
        opt = st.optim.AdamW(model.parameters(), lr=0.1)
        scaler = amp.GradScaler("cpu", init_scale=2.0**10, enabled=scaled)
        x, y = st.randn(8, 4), st.tensor([0, 1, 2, 0, 1, 2, 0, 1])
        for _ in range(3):
            opt.zero_grad()
            scaler.scale(F.cross_entropy(model(x), y)).backward()
            scaler.step(opt)
            scaler.update()
        return model.weight.detach().numpy()

    np.testing.assert_allclose(run(True), run(False), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("bad", [False, True])
def test_scaler_fused_optimizer_path(bad):
    """An optimizer with ``_step_supports_amp_scaling`` unscales and skips itself (Note [Scaled fused step])."""
    def run(fused_scaling):
        st.manual_seed(0)
        model = nn.Linear(4, 3)
        opt = st.optim.AdamW(model.parameters(), lr=0.1, fused=True)
        if fused_scaling:
            opt._step_supports_amp_scaling = True
        scaler = amp.GradScaler("cpu", init_scale=2.0**10)
        x, y = st.randn(8, 4), st.tensor([0, 1, 2, 0, 1, 2, 0, 1])
        for i in range(3):
            opt.zero_grad()
            scaler.scale(F.cross_entropy(model(x), y)).backward()
            if bad and i == 1:
                model.bias.grad.fill_(float("inf"))
            scaler.step(opt)
            scaler.update()
        assert not hasattr(opt, "grad_scale") and not hasattr(opt, "found_inf")
        return model.weight.detach().numpy(), scaler.get_scale()

    (w_fused, s_fused), (w_ref, s_ref) = run(True), run(False)
    assert s_fused == s_ref == (2.0**9 if bad else 2.0**10)
    np.testing.assert_allclose(w_fused, w_ref, rtol=1e-5, atol=1e-6)
