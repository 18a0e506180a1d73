"""strided.set_default_device / get_default_device (Note [Default device] in strided/device.py), against torch's
rules, with "meta" as the default (no GPU needed): factories given no device follow it, ``*_like`` follow their
input, from_numpy stays on the CPU, and an explicit device wins."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st


@pytest.fixture
def meta_default():
    st.set_default_device("meta")
    try:
        yield
    finally:
        st.set_default_device(None)


def test_default_is_the_cpu():
    assert st.get_default_device() == st.device("cpu")
    assert st.empty(3).device.type == "cpu" and st.zeros(2).device.type == "cpu"


def test_factories_follow_the_default(meta_default):
    assert st.get_default_device() == st.device("meta")
    made = [st.empty(3), st.empty(3, dtype=st.float64), st.empty((2, 2)), st.zeros(2), st.ones(2, 3),
            st.full((2,), 1.5), st.arange(4), st.linspace(0, 1, 5), st.eye(3), st.rand(2), st.randn(2),
            st.randint(0, 5, (3,)), st.empty_strided((2, 3), (3, 1)), st.tensor([1.0, 2.0]), st.logspace(0, 1, 3),
            st.hann_window(4)]
    assert [t.device.type for t in made] == ["meta"] * len(made)
    assert st.empty(3, device="cpu").device.type == "cpu"  # an explicit device wins
    assert st.as_tensor(np.ones(2)).device.type == "meta" and st.as_tensor([1, 2]).device.type == "meta"
    assert st.as_tensor(np.ones(2), device="cpu").device.type == "cpu"
    cpu = st.from_numpy(np.ones(2))
    assert cpu.device.type == "cpu" and st.zeros_like(cpu).device.type == "cpu"  # like torch


def test_switching_back_is_not_hidden_by_the_empty_memo():
    a = st.empty(7, dtype=st.float32)
    st.set_default_device("meta")
    try:
        b = st.empty(7, dtype=st.float32)  # the same arguments as a: the memo must not return a's device
    finally:
        st.set_default_device(None)
    c = st.empty(7, dtype=st.float32)
    assert (a.device.type, b.device.type, c.device.type) == ("cpu", "meta", "cpu")
    st.set_default_device("cpu")
    assert st.get_default_device() == st.device("cpu") and st.empty(7).device.type == "cpu"


def test_matches_torch():
    torch = pytest.importorskip("torch")
    torch.set_default_device("meta")
    st.set_default_device("meta")
    try:
        for name in ("zeros", "ones", "empty", "rand"):
            assert getattr(st, name)(2).device.type == getattr(torch, name)(2).device.type
        assert str(st.get_default_device()) == str(torch.get_default_device())
    finally:
        torch.set_default_device(None)
        st.set_default_device(None)
    assert str(st.get_default_device()) == str(torch.get_default_device()) == "cpu"


def test_bad_device_raises_and_changes_nothing():
    with pytest.raises(RuntimeError):
        st.set_default_device("tpu")
    assert st.get_default_device() == st.device("cpu")


def test_device_as_a_context_manager_nests_and_restores():
    with st.device("meta") as d:
        assert d == st.device("meta") and st.zeros(2).device.type == "meta"
        with st.device("cpu"):
            assert st.zeros(1).device.type == "cpu" and st.get_default_device() == st.device("cpu")
        assert st.get_default_device() == st.device("meta")
    assert st.zeros(1).device.type == "cpu" and st.get_default_device() == st.device("cpu")
    with pytest.raises(KeyError), st.device("meta"):
        raise KeyError("inside")
    assert st.get_default_device() == st.device("cpu")
