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
