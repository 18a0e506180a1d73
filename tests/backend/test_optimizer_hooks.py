"""Optimizer hooks against torch: step pre / post hooks (per optimizer and global, their order, replacing
arguments), state-dict and load-state-dict hooks, and the profiler's Optimizer.step# / zero_grad# ranges."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided.optim import optimizer as optimizer_module
from strided.profiler import ProfilerActivity, profile

torch = pytest.importorskip("torch")


def _setup(lib):
    w = lib.nn.Parameter(lib.tensor(np.ones(3, dtype=np.float32)))
    w.grad = lib.tensor(np.full(3, 0.5, dtype=np.float32))
    return w, lib.optim.SGD([w], lr=0.1)


def _hooks_log(lib, glob):
    w, opt = _setup(lib)
    log = []
    handles = [
        glob.register_optimizer_step_pre_hook(lambda o, a, k: log.append(("global pre", len(a), a[0] is o,
                                                                          sorted(k)))),
        opt.register_step_pre_hook(lambda o, a, k: log.append(("pre", type(o).__name__))),
        opt.register_step_post_hook(lambda o, a, k: log.append("post")),
        glob.register_optimizer_step_post_hook(lambda o, a, k: log.append("global post")),
        opt.register_state_dict_pre_hook(lambda o: log.append("sd pre")),
        opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1}),
        opt.register_load_state_dict_pre_hook(lambda o, sd: log.append(("load pre", sorted(sd))) or
                                              {k: v for k, v in sd.items() if k != "extra"}),
        opt.register_load_state_dict_post_hook(lambda o: log.append("load post")),
    ]
    try:
        opt.step()
        sd = opt.state_dict()
        log.append(("sd keys", sorted(sd)))
        opt.load_state_dict(sd)
    finally:
        for h in handles:
            h.remove()
    opt.step()  # removed: nothing more is logged
    return log, w.detach().numpy()


def test_hooks_run_in_torchs_order():
    from torch.optim import optimizer as torch_optimizer

    ours, w_s = _hooks_log(st, optimizer_module)  # torch's path: optim.optimizer
    theirs, w_t = _hooks_log(torch, torch_optimizer)
    assert ours == theirs
    np.testing.assert_allclose(w_s, w_t)


def test_pre_hook_may_replace_arguments_and_bad_results_are_refused():
    w, opt = _setup(st)
    calls = []
    opt.register_step_pre_hook(lambda o, a, k: (a, {"closure": lambda: calls.append("closure") or 1.0}))
    assert opt.step() == 1.0 and calls == ["closure"]
    w, opt = _setup(st)
    opt.register_step_pre_hook(lambda o, a, k: 3)
    with pytest.raises(RuntimeError, match=r"must return None or a tuple of \(new_args, new_kwargs\), but got 3"):
        opt.step()


def test_profiler_names_the_optimizer_ranges_as_torch():
    w, opt = _setup(st)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        opt.step()
        opt.zero_grad()
    names = [e.name for e in prof.events()]
    assert "Optimizer.step#SGD.step" in names and "Optimizer.zero_grad#SGD.zero_grad" in names
    step = next(e for e in prof.events() if e.name == "Optimizer.step#SGD.step")
    assert step.cat == "user_annotation" and step.children  # the step's ops nest inside


def test_a_subclass_calling_its_base_step_runs_the_hooks_once():
    class Logged(st.optim.SGD):
        def step(self, closure=None):
            return super().step(closure)

    w = st.nn.Parameter(st.ones(2))
    w.grad = st.ones(2)
    opt = Logged([w], lr=0.1)
    seen = []
    opt.register_step_post_hook(lambda o, a, k: seen.append(1))
    opt.step()
    assert seen == [1]


def test_a_hook_that_cannot_be_called_is_refused_when_registered():
    w, opt = _setup(st)
    for register in (opt.register_step_pre_hook, opt.register_state_dict_post_hook,
                     optimizer_module.register_optimizer_step_post_hook):
        with pytest.raises(TypeError, match=f"{register.__name__}: expected a callable hook, got str"):
            register("not a function")
    opt.step()  # nothing was registered
