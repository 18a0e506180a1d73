"""strided.cuda's NVML queries (utilization, temperature, ... list_gpu_processes), ExternalStream, StreamContext
and caching_allocator_enable without a GPU: torch's messages, argument checks, and the NVML lookup and printout
logic against a recorded NVML (the real one is checked in tests/cuda/test_nvml_cuda.py)."""

from __future__ import annotations

import types

import pytest

import strided.cuda as sc
from strided.backends.cuda import allocator, driver, nvml_queries

QUERIES = ("utilization", "memory_usage", "temperature", "power_draw", "clock_rate", "device_memory_used")


@pytest.fixture
def fresh_nvml(monkeypatch):
    """NVML state as before the first query; restored afterwards."""
    monkeypatch.setattr(nvml_queries, "_initialized", False)
    monkeypatch.setattr(nvml_queries, "_handles", {})
    return monkeypatch


@pytest.mark.skipif(sc.is_available(), reason="a GPU is present: this checks the no-driver message")
@pytest.mark.parametrize("name", QUERIES)
def test_without_a_driver_each_query_says_so_in_torchs_words(name, fresh_nvml):
    with pytest.raises(RuntimeError, match="^cuda driver can't be loaded, is cuda enabled\\?$"):
        getattr(sc, name)()
    assert sc.list_gpu_processes() == "cuda driver can't be loaded, is cuda enabled?"


def test_without_cuda_bindings_the_module_is_named(fresh_nvml):
    def missing():
        raise ImportError("No module named 'cuda.bindings.nvml'")

    fresh_nvml.setattr(driver, "nvml", missing)
    with pytest.raises(ModuleNotFoundError, match="cuda-bindings does not seem to be installed"):
        sc.temperature()
    assert sc.list_gpu_processes().startswith("cuda-bindings module not found")


class _NotFound(Exception):
    pass


def _recorded_nvml(processes, mig=False):
    """An NVML module as cuda.bindings.nvml answers on one H200 (values recorded from a real device)."""
    seen = []

    def by_uuid(uuid):
        seen.append(uuid)
        if uuid.startswith("MIG-") != mig:
            raise _NotFound(uuid)
        return 0xABC

    procs = [types.SimpleNamespace(pid=p, used_gpu_memory=m) for p, m in processes]
    return seen, types.SimpleNamespace(
        init_v2=lambda: None, NvmlError=Exception, DriverNotLoadedError=OSError, LibraryNotFoundError=OSError,
        NotFoundError=_NotFound, device_get_handle_by_uuid=by_uuid, device_get_index=lambda h: 3,
        device_get_utilization_rates=lambda h: types.SimpleNamespace(gpu=87, memory=41),
        TemperatureSensors=types.SimpleNamespace(TEMPERATURE_GPU=0), device_get_temperature_v=lambda h, s: 35 + s,
        device_get_power_usage=lambda h: 121_053, ClockType=types.SimpleNamespace(CLOCK_SM=1),
        device_get_clock_info=lambda h, t: 1980 if t == 1 else 0,
        device_get_memory_info_v2=lambda h: types.SimpleNamespace(used=1_179_648_000),
        device_get_compute_running_processes_v3=lambda h: procs)


@pytest.mark.parametrize("mig", [False, True])
def test_the_device_is_found_by_its_uuid_and_each_query_reads_its_field(fresh_nvml, mig):
    seen, nvml = _recorded_nvml([(4242, 536_870_912), (77, (1 << 64) - 1)], mig=mig)
    fresh_nvml.setattr(driver, "nvml", lambda: nvml)
    fresh_nvml.setattr(driver, "device_count", lambda: 1)
    fresh_nvml.setattr(driver, "device_uuid", lambda i: bytes(range(16)))
    got = {name: getattr(sc, name)(0) for name in QUERIES}
    assert got == {"utilization": 87, "memory_usage": 41, "temperature": 35, "power_draw": 121_053,
                   "clock_rate": 1980, "device_memory_used": 1_179_648_000}
    uuid = "00010203-0405-0607-0809-0a0b0c0d0e0f"
    assert seen == (["GPU-" + uuid, "MIG-" + uuid] if mig else ["GPU-" + uuid])  # looked up once, then cached
    assert sc.list_gpu_processes(0) == ("GPU:3\n"
                                        "process       4242 uses      512.000 MB GPU memory\n"
                                        "process         77 uses          N/A MB GPU memory")
    with pytest.raises(RuntimeError, match=r"device 5 is not visible \(strided.cuda.device_count\(\) = 1\)"):
        sc.utilization(5)


def test_no_processes_is_said(fresh_nvml):
    _, nvml = _recorded_nvml([])
    fresh_nvml.setattr(driver, "nvml", lambda: nvml)
    fresh_nvml.setattr(driver, "device_count", lambda: 1)
    fresh_nvml.setattr(driver, "device_uuid", lambda i: bytes(16))
    assert sc.list_gpu_processes("cuda:0") == "GPU:3\nno processes are running"


def test_stream_names_and_refusals(monkeypatch):
    with pytest.raises(TypeError, match="ExternalStream\\(\\): stream_ptr must be an int"):
        sc.ExternalStream("0x1234")
    s = sc.ExternalStream(0x1234, device=0)
    assert isinstance(s, sc.Stream) and s.cuda_stream == 0x1234 and not s._owned
    assert repr(s) == "<strided.cuda.ExternalStream device=cuda:0 cuda_stream=0x1234>"
    ctx = sc.stream(None)
    assert isinstance(ctx, sc.StreamContext)
    with ctx as current:  # None: a no-op, as torch's
        assert current is None
    with pytest.raises(TypeError, match="caching_allocator_enable\\(\\): argument 'value' must be bool, not int"):
        sc.caching_allocator_enable(0)
    monkeypatch.setattr(allocator, "NO_CACHING", False)
    sc.caching_allocator_enable(False)
    assert allocator.NO_CACHING is True
    sc.caching_allocator_enable()
    assert allocator.NO_CACHING is allocator._ENV_NO_CACHING
    assert sc.memory.caching_allocator_enable is sc.caching_allocator_enable
