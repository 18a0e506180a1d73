"""Module hooks against torch: forward pre-hooks / hooks with kwargs and always_call, full backward
(pre-)hooks that read and replace gradients, the global register_module_* hooks and their order, errors."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided.nn.modules import module as smodule

torch = pytest.importorskip("torch")
tmodule = torch.nn.modules.module


def _shape(g):
    return None if g is None else tuple(g.shape)


def _twins():
    t = torch.nn.Linear(3, 2)
    s = st.nn.Linear(3, 2)
    s.load_state_dict({k: st.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    return s, t


def _x(lib, requires_grad=True):
    return lib.tensor(np.arange(12, dtype=np.float32).reshape(4, 3) / 10, requires_grad=requires_grad)


def _run(lib, mod, x_requires_grad, mods):
    """The same hooks on both libraries; returns the call log, the input's grad and the weight's grad."""
    log = []
    handles = [
        mod.register_forward_pre_hook(lambda m, a, k: log.append(("pre_kw", len(a), sorted(k))), with_kwargs=True),
        mod.register_forward_hook(lambda m, a, o: log.append(("fwd", _shape(o)))),
        mod.register_full_backward_pre_hook(lambda m, go: (log.append(("bw_pre", [_shape(g) for g in go])),
                                                           (go[0] * 2,))[1]),
        mod.register_full_backward_hook(lambda m, gi, go: (log.append(("bw", [_shape(g) for g in gi],
                                                                       [_shape(g) for g in go])),
                                                           None if gi[0] is None else (gi[0] + 1,))[1]),
        mods.register_module_forward_pre_hook(lambda m, a: log.append(("g_pre", type(m).__name__))),
        mods.register_module_full_backward_hook(lambda m, gi, go: log.append(("g_bw", type(m).__name__))),
    ]
    x = _x(lib, x_requires_grad)
    try:
        if x_requires_grad:
            mod(x).sum().backward()
        else:
            with pytest.warns(UserWarning, match="Full backward hook is firing when gradients are computed with "
                                                 "respect to module outputs since no inputs require gradients"):
                mod(x).sum().backward()
    finally:
        for h in handles:
            h.remove()
    return log, (None if x.grad is None else x.grad.detach().numpy()), mod.weight.grad.detach().numpy()


@pytest.mark.parametrize("x_requires_grad", [True, False])
def test_hooks_run_and_replace_gradients_as_torch(x_requires_grad):
    s, t = _twins()
    s_log, s_xg, s_wg = _run(st, s, x_requires_grad, smodule)
    t_log, t_xg, t_wg = _run(torch, t, x_requires_grad, tmodule)
    assert s_log == t_log
    np.testing.assert_allclose(s_wg, t_wg, rtol=1e-6)  # the pre-hook doubled grad_output
    if x_requires_grad:
        np.testing.assert_allclose(s_xg, t_xg, rtol=1e-6)  # the hook added one to grad_input
    else:
        assert s_xg is None and t_xg is None
    m = st.nn.Linear(3, 2)  # every handle removed: no hook state left behind
    log = []
    h = m.register_forward_hook(lambda *a: log.append(1), with_kwargs=True, always_call=True)
    h.remove()
    assert m._forward_hooks == {} and m._forward_hooks_with_kwargs == {} and m._forward_hooks_always_called == {}


def test_forward_hooks_with_kwargs_replace_args_and_output():
    class Scale(st.nn.Module):
        def forward(self, x, *, k=1.0):
            return x * k

    m = Scale()
    m.register_forward_pre_hook(lambda mod, a, kw: ((a[0] + 1,), {"k": 3.0}), with_kwargs=True)
    m.register_forward_hook(lambda mod, a, kw, out: out + kw["k"], with_kwargs=True)
    assert m(st.ones(2), k=5.0).tolist() == [9.0, 9.0]  # (1 + 1) * 3 + 3
    m2 = Scale()
    m2.register_forward_pre_hook(lambda mod, a, kw: 7, with_kwargs=True)
    with pytest.raises(RuntimeError, match=r"forward pre-hook must return None or a tuple of \(new_args, new_kwargs\)"):
        m2(st.ones(2))


def test_always_call_hooks_run_when_forward_raises():
    class Boom(st.nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    for lib, mods, mod in ((st, smodule, Boom()), (torch, tmodule, None)):
        if mod is None:
            class TBoom(torch.nn.Module):
                def forward(self, x):
                    raise ValueError("boom")

            mod = TBoom()
        log = []
        mod.register_forward_hook(lambda m, a, o, log=log: log.append(("always", o)), always_call=True)
        mod.register_forward_hook(lambda m, a, o, log=log: log.append("not run"))
        g = mods.register_module_forward_hook(lambda m, a, o, log=log: log.append("global always"), always_call=True)
        try:
            with pytest.raises(ValueError, match="boom"):
                mod(lib.ones(1))
        finally:
            g.remove()
        assert log == ["global always", ("always", None)], lib.__name__


def test_backward_hook_returning_the_wrong_count_is_refused():
    m = st.nn.Linear(3, 2)
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
    with pytest.raises(RuntimeError, match="Backward hook returned an invalid number of grad_input, got 2, but "
                                           "expected 1"):
        m(_x(st)).sum().backward()
    m2 = st.nn.Linear(3, 2)
    m2.register_full_backward_pre_hook(lambda mod, go: (go[0], go[0]))
    with pytest.raises(RuntimeError, match="Backward pre hook returned an invalid number of grad_output, got 2, "
                                           "but expected 1"):
        m2(_x(st)).sum().backward()
    m3 = st.nn.Linear(3, 2)
    m3.register_full_backward_hook(lambda mod, gi, go: (st.ones(4, 3),))
    with pytest.raises(RuntimeError, match="Backward hook for Modules where no input requires gradient should always "
                                           "return None or None for all gradients"), pytest.warns(UserWarning):
        m3(_x(st, requires_grad=False)).sum().backward()


def test_nested_modules_backward_hooks_fire_inner_first_as_torch():
    def build(lib):
        return lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.Tanh(), lib.nn.Linear(3, 1))

    logs = []
    for lib in (st, torch):
        seq, log = build(lib), []
        for name, mod in seq.named_modules():
            mod.register_full_backward_hook(lambda m, gi, go, name=name, log=log: log.append(name or "seq"))
        seq(_x(lib)).sum().backward()
        logs.append(log)
    assert logs[0] == logs[1] == ["2", "1", "0", "seq"]


def test_registration_hooks_see_and_replace_what_modules_register_as_torch():
    logs = []
    for lib, mods in ((st, smodule), (torch, tmodule)):
        log = []
        handles = [
            mods.register_module_parameter_registration_hook(lambda m, n, p, log=log: log.append(("param", n))),
            mods.register_module_buffer_registration_hook(
                lambda m, n, b, log=log: (log.append(("buffer", n)), None if b is None else b * 0 + 7)[1]),
            mods.register_module_module_registration_hook(lambda m, n, c, log=log: log.append(("module", n))),
        ]
        try:
            seq = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
            seq.extra = lib.nn.ReLU()
            seq[1].running_mean = lib.zeros(2)  # reassigning a buffer runs the hooks too
            seq.register_buffer("scale", lib.ones(1))
        finally:
            for h in handles:
                h.remove()
        logs.append((log, [float(v) for v in seq[1].running_mean], float(seq.scale[0])))
    assert logs[0] == logs[1]
    assert logs[0][1] == [7.0, 7.0] and logs[0][2] == 7.0


@pytest.mark.skipif(not st.cuda.is_available(), reason="no CUDA device")
def test_backward_hooks_on_cuda_match_cpu():
    results = []
    base, _ = _twins()
    for device in ("cpu", "cuda"):
        s = st.nn.Linear(3, 2)
        s.load_state_dict(base.state_dict())  # the same weights on both devices
        s = s.to(device)
        grads = []
        s.register_full_backward_pre_hook(lambda m, go: (go[0] * 3,))
        s.register_full_backward_hook(lambda m, gi, go, grads=grads: grads.append(gi[0].detach().cpu().numpy()))
        x = _x(st).to(device).detach().requires_grad_(True)
        s(x).sum().backward()
        results.append((grads[0], x.grad.cpu().numpy(), s.weight.grad.cpu().numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_a_hook_that_cannot_be_called_is_refused_when_registered():
    m = st.nn.Linear(2, 2)
    for register in (m.register_forward_hook, m.register_forward_pre_hook, m.register_full_backward_hook,
                     m.register_full_backward_pre_hook, smodule.register_module_forward_hook,
                     smodule.register_module_buffer_registration_hook):
        with pytest.raises(TypeError, match=f"{register.__name__}: expected a callable hook, got int"):
            register(3)
    assert m._forward_hooks == {} and m._backward_hooks == {}
