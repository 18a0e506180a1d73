"""Module's dotted-path accessors (get_submodule / get_parameter / get_buffer / set_submodule), load_state_dict's
result, and Parameter's dtype check, with torch's words."""

from __future__ import annotations

import pytest

import strided as st
from strided import nn


def _net():
    return nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))


def test_dotted_paths_reach_parameters_buffers_and_submodules():
    net = _net()
    assert net.get_parameter("0.weight") is net[0].weight
    assert net.get_buffer("1.running_mean") is net[1].running_mean
    for call, words in ((lambda: net.get_buffer("0.weight"), "`weight` is not a buffer"),
                        (lambda: net.get_parameter("1.running_mean"), "`running_mean` is not an nn.Parameter"),
                        (lambda: net.get_parameter("2.x"), "Sequential has no attribute `2`"),
                        (lambda: net.get_parameter("0.nope"), "Linear has no attribute `nope`"),
                        (lambda: net.set_submodule("5", nn.ReLU(), strict=True), "Sequential has no attribute `5`")):
        with pytest.raises(AttributeError, match=words):
            call()
    replacement = nn.Linear(2, 3, bias=False)
    net.set_submodule("0", replacement)
    assert net[0] is replacement and net.get_submodule("0") is replacement
    with pytest.raises(ValueError, match="Cannot set the submodule without a target name"):
        net.set_submodule("", replacement)
    with pytest.raises(ValueError, match="`module` is not an nn.Module"):
        net.set_submodule("0", 3)


def test_load_state_dict_result_and_parameter_dtype_read_as_torchs():
    net = _net()
    result = net.load_state_dict({"extra": st.ones(1)}, strict=False)
    assert repr(result).startswith("_IncompatibleKeys(missing_keys=['0.weight'")
    assert repr(net.load_state_dict(net.state_dict())) == "<All keys matched successfully>"
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype can require gradients"):
        nn.Parameter(st.ones(2, dtype=st.int64))
    assert nn.Parameter(st.ones(2, dtype=st.int64), requires_grad=False).dtype == st.int64


class _WithExtra(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.counter = 3

    def get_extra_state(self):
        return {"counter": self.counter}

    def set_extra_state(self, state):
        self.counter = state["counter"]


def test_extra_state_is_saved_loaded_and_required_as_torchs(tmp_path):
    a = _WithExtra()
    sd = a.state_dict()
    assert list(sd) == ["_extra_state", "lin.weight", "lin.bias"] and sd["_extra_state"] == {"counter": 3}
    st.save(sd, tmp_path / "ck.safetensors")
    b = _WithExtra()
    b.counter = 0
    assert repr(b.load_state_dict(st.load(tmp_path / "ck.safetensors"))) == "<All keys matched successfully>"
    assert b.counter == 3
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "_extra_state"'):
        b.load_state_dict({k: v for k, v in sd.items() if k != "_extra_state"})
    plain = nn.Linear(2, 2)
    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "_extra_state"'):
        plain.load_state_dict({**plain.state_dict(), "_extra_state": 1})
    with pytest.raises(RuntimeError, match="get_extra_state\\(\\) that should never be called"):
        plain.get_extra_state()


def test_state_dict_hooks_run_where_torchs_do():
    lin = nn.Linear(2, 2)
    calls = []
    pre = lin.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: calls.append(("pre", prefix, keep_vars)))

    def post(mod, sd, prefix, meta):
        calls.append(("post", prefix, sorted(sd)))
        sd[prefix + "tag"] = st.ones(1)

    post_handle = lin.register_state_dict_post_hook(post)
    assert sorted(nn.Sequential(lin).state_dict()) == ["0.bias", "0.tag", "0.weight"]
    assert calls == [("pre", "0.", False), ("post", "0.", ["0.bias", "0.weight"])]
    pre.remove()
    post_handle.remove()
    assert sorted(lin.state_dict()) == ["bias", "weight"]

    def rename(mod, sd, prefix, meta, strict, missing, unexpected, errors):
        if prefix + "w" in sd:
            sd[prefix + "weight"] = sd.pop(prefix + "w")

    lin.register_load_state_dict_pre_hook(rename)
    lin.load_state_dict({"w": st.zeros(2, 2), "bias": st.zeros(2)})
    assert float(lin.weight.sum()) == 0.0
    lin.register_load_state_dict_post_hook(lambda mod, keys: keys.missing_keys.clear())
    assert repr(lin.load_state_dict({"weight": st.ones(2, 2)})) == "<All keys matched successfully>"  # bias forgiven
    lin.register_load_state_dict_post_hook(lambda mod, keys: 1)
    with pytest.raises(AssertionError, match="are not expected to return new values"):
        lin.load_state_dict(lin.state_dict())
    assert nn.Linear(2, 2).type(st.float64).weight.dtype == st.float64
