"""``strided.cpu`` (torch.cpu's device-agnostic shims, Note [CPU device module]) and ``strided.get_device_module``,
against torch's."""

from __future__ import annotations

import pytest

import strided as st

torch = pytest.importorskip("torch")


def test_device_module_by_name_and_device():
    assert st.get_device_module("cpu") is st.cpu and st.get_device_module(st.device("cpu")) is st.cpu
    assert st.get_device_module("cuda:0") is st.cuda
    # None: the current accelerator's module, as torch's (strided's CUDA backend is always the accelerator)
    assert st.get_device_module().__name__.split(".")[-1] == torch.get_device_module().__name__.split(".")[-1]


@pytest.mark.parametrize("bad", ["meta", 5, "foo"])
def test_device_module_refusals(bad):
    with pytest.raises(RuntimeError) as ours:
        st.get_device_module(bad)
    with pytest.raises(RuntimeError) as theirs:
        torch.get_device_module(bad)
    if bad == "foo":  # torch lists its many device types; strided its three
        assert str(ours.value).endswith("device type at start of device string: foo")
    else:
        assert str(ours.value) == str(theirs.value)


def test_cpu_shims_behave_as_torch_cpu():
    for lib in (st, torch):
        cpu = lib.cpu
        assert (cpu.device_count(), cpu.current_device(), cpu.is_available(), cpu.is_initialized()) == (1, "cpu",
                                                                                                         True, True)
        default = cpu.current_stream()
        s = cpu.Stream()
        with cpu.stream(s):
            assert cpu.current_stream() is s
            with cpu.stream(None):
                assert cpu.current_stream() is s
        assert cpu.current_stream() is default
        e = cpu.Event()
        e.record()
        e.wait()
        e.synchronize()
        assert e.query() is True
        s.wait_stream(default)
        s.wait_event(e)
        assert s.record_event() is None
        cpu.synchronize()
        cpu.set_device("cpu")
