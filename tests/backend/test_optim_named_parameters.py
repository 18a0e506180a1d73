"""Optimizers from ``model.named_parameters()`` (torch's (name, tensor) pairs, Note [Named parameters]) and the
constructor refusals torch's OptimizerInfo error inputs check (scratch/optim_error_sweep.py: all 100 now as torch)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import strided as st


def _model():
    st.manual_seed(0)
    return st.nn.Sequential(st.nn.Linear(3, 4), st.nn.Linear(4, 2))


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adagrad", "RMSprop", "LBFGS"])
def test_an_optimizer_takes_named_parameters_and_keeps_the_names(name):
    m = _model()
    opt = getattr(st.optim, name)(m.named_parameters(), lr=0.1)
    assert opt.param_groups[0]["param_names"] == ["0.weight", "0.bias", "1.weight", "1.bias"]
    assert all(isinstance(p, st.nn.Parameter) for p in opt.param_groups[0]["params"])
    plain = _model()
    reference = getattr(st.optim, name)(plain.parameters(), lr=0.1)
    for model, o in ((m, opt), (plain, reference)):
        def closure(model=model, o=o):
            o.zero_grad()
            loss = model(st.ones(2, 3)).square().sum()
            loss.backward()
            return loss
        o.step(closure)
    for a, b in zip(m.parameters(), plain.parameters()):  # the names change nothing in the step
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    sd = opt.state_dict()
    assert sd["param_groups"][0]["param_names"] == ["0.weight", "0.bias", "1.weight", "1.bias"]
    other = getattr(st.optim, name)(m.parameters(), lr=0.1)
    other.load_state_dict(sd)
    assert other.param_groups[0]["param_names"] == sd["param_groups"][0]["param_names"]


def test_named_parameter_groups_and_their_refusals():
    m = _model()
    named = list(m.named_parameters())
    opt = st.optim.SGD([{"params": named[:2]}, {"params": named[2:], "lr": 0.5}], lr=0.1)
    assert [g["param_names"] for g in opt.param_groups] == [["0.weight", "0.bias"], ["1.weight", "1.bias"]]
    with pytest.raises(ValueError, match=re.escape("all optimizer params should be with/without names. Some param "
                                                   "names are missing")):
        st.optim.SGD([named[0], named[1][1]], lr=0.1)
    opt = st.optim.SGD(m[0].parameters(), lr=0.1)
    with pytest.raises(ValueError, match=re.escape("all optimizer param groups should be with/without names. cannot "
                                                   "add param group with names to the optimizer")):
        opt.add_param_group({"params": named[2:]})
    with pytest.warns(UserWarning, match="optimizer contains a parameter group with duplicate parameters"):
        st.optim.SGD([named[0][1], named[0][1]], lr=0.1)


@pytest.mark.parametrize("name", ["SGD", "Adam", "Adagrad", "RMSprop", "Rprop", "LBFGS", "Adadelta"])
def test_a_tensor_lr_of_several_elements_is_refused(name):
    with pytest.raises(ValueError, match="^Tensor lr must be 1-element$"):
        getattr(st.optim, name)(_model().parameters(), lr=st.tensor([0.1, 0.2]))


def test_adams_tensor_hyperparameters_refused_for_foreach_as_torch():
    params = list(_model().parameters())
    for cls in (st.optim.Adam, st.optim.AdamW):
        with pytest.raises(ValueError, match="^lr as a Tensor is not supported for capturable=False and foreach=True"):
            cls(params, lr=st.tensor(0.01), foreach=True)
        with pytest.raises(ValueError, match=re.escape("betas[0] as a Tensor is not supported for capturable=False "
                                                       "and foreach=True")):
            cls(params, lr=0.01, betas=(st.tensor(0.9), st.tensor(0.99)), foreach=True)
        with pytest.raises(ValueError, match="^betas must be either both floats or both Tensors$"):
            cls(params, lr=0.01, betas=(st.tensor(0.9), 0.99))


def test_named_state_dicts_match_torchs():
    torch = pytest.importorskip("torch")
    m = st.nn.Linear(3, 2)
    tm = torch.nn.Linear(3, 2)
    opt = st.optim.AdamW(m.named_parameters(), lr=0.1)
    topt = torch.optim.AdamW(tm.named_parameters(), lr=0.1)
    m(st.ones(1, 3)).sum().backward()
    opt.step()
    tm(torch.ones(1, 3)).sum().backward()
    topt.step()
    group, tgroup = opt.state_dict()["param_groups"][0], topt.state_dict()["param_groups"][0]
    assert sorted(group) == sorted(tgroup)
    assert group["param_names"] == tgroup["param_names"] and group["params"] == tgroup["params"]
