"""The optimizers whose steps strided runs only on the host take torch's capturable / differentiable at their
defaults, keep them in their param groups as torch's do, and refuse them when set (Adagrad's fused runs: its own
test, tests/backend/test_optim_fused_adagrad.py)."""

from __future__ import annotations

import pytest

import strided as st

torch = pytest.importorskip("torch")

NAMES = ["RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop"]


@pytest.mark.parametrize("name", NAMES)
def test_param_group_keys_are_torchs(name):
    ours = getattr(st.optim, name)([st.nn.Parameter(st.ones(2))])
    theirs = getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(2))])
    assert set(ours.param_groups[0]) == set(theirs.param_groups[0])
    for key in ("capturable", "differentiable", "fused"):
        if key in theirs.param_groups[0]:
            assert ours.param_groups[0][key] == theirs.param_groups[0][key]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("flag", ["capturable", "differentiable", "fused"])
def test_setting_a_flag_is_refused_naming_it(name, flag):
    p = [st.nn.Parameter(st.ones(2))]
    accepted = "fused" if name == "Adagrad" else "capturable"
    if name == "Adagrad" and flag == "fused":  # a fused Adagrad exists (the CPU's, as torch's)
        return
    if flag not in ("differentiable", accepted):
        with pytest.raises(TypeError):
            getattr(st.optim, name)(p, **{flag: False})  # not one of torch's arguments for this optimizer either
        return
    getattr(st.optim, name)(p, **{flag: False})
    with pytest.raises(ValueError, match=rf"strided.optim.{name}: {flag}=True is not supported"):
        getattr(st.optim, name)(p, **{flag: True})


def test_a_step_after_the_flags_is_unchanged():
    w = st.nn.Parameter(st.tensor([1.0, -2.0]))
    tw = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
    for opt, p, lib in ((st.optim.RMSprop([w], lr=0.1, capturable=False, differentiable=False), w, st),
                        (torch.optim.RMSprop([tw], lr=0.1, capturable=False, differentiable=False), tw, torch)):
        for _ in range(3):
            opt.zero_grad()
            (p ** 2).sum().backward()
            opt.step()
    assert w.detach().tolist() == pytest.approx(tw.detach().tolist(), rel=1e-6)
