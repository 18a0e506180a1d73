"""On a GPU: the NVML queries read the device CUDA calls cuda:0 (its UUID), give plausible values that move with
this process's use, and list_gpu_processes prints torch's format; ExternalStream runs work on torch's stream;
caching_allocator_enable(False) sends allocations around the cache and back."""

from __future__ import annotations

import gc
import re

import numpy as np
import pytest

import strided as st
import strided.cuda as sc
from strided.backends.cuda import driver, nvml_queries

pytestmark = pytest.mark.skipif(not sc.is_available(), reason="no CUDA device")


def test_nvml_finds_the_gpu_cuda_calls_device_0_and_reads_plausible_values():
    nvml, h = nvml_queries._handle(0)
    x = driver.device_uuid(0).hex()
    assert nvml.device_get_uuid(h).endswith(f"{x[:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:]}")
    assert 0 <= sc.utilization() <= 100 and 0 <= sc.memory_usage() <= 100
    assert 5 <= sc.temperature() <= 110
    assert 10_000 <= sc.power_draw() <= 2_000_000  # mW
    assert 100 <= sc.clock_rate() <= 4_000  # MHz
    free, total = sc.mem_get_info()
    used = sc.device_memory_used()
    assert 0 < used <= total
    with pytest.raises(RuntimeError, match=f"device {sc.device_count()} is not visible"):
        sc.temperature(sc.device_count())


def test_device_memory_used_sees_a_gib_this_process_allocates():
    sc.empty_cache()
    before = sc.device_memory_used()
    x = st.empty(1 << 28, device="cuda")  # 1 GiB: a new segment
    after = sc.device_memory_used()
    assert after - before >= (1 << 30) * 0.95, (before, after)
    del x
    sc.empty_cache()


def test_list_gpu_processes_prints_torchs_format():
    out = sc.list_gpu_processes()
    lines = out.split("\n")
    assert re.fullmatch(r"GPU:\d+", lines[0]), out
    pattern = re.compile(r"process +\d+ uses +(\d+\.\d{3}|N/A) MB GPU memory")
    assert lines[1:] == ["no processes are running"] or all(pattern.fullmatch(line) for line in lines[1:]), out


def test_values_agree_with_torchs_where_torch_can_read_nvml():
    torch = pytest.importorskip("torch")
    try:
        theirs = torch.cuda.temperature()
    except ModuleNotFoundError:
        pytest.skip("torch's NVML queries need nvidia-ml-py, which this machine lacks")
    assert abs(sc.temperature() - theirs) <= 5
    assert sc.list_gpu_processes().split("\n")[0] == torch.cuda.list_gpu_processes().split("\n")[0]


def test_external_stream_queues_work_on_a_stream_strided_did_not_make():
    torch = pytest.importorskip("torch")
    theirs = torch.cuda.Stream()
    ours = sc.ExternalStream(theirs.cuda_stream)
    assert repr(ours) == f"<strided.cuda.ExternalStream device=cuda:0 cuda_stream={theirs.cuda_stream:#x}>"
    with sc.stream(ours):
        assert sc.current_stream() == ours
        y = st.arange(1 << 20, device="cuda", dtype=st.float32) * 3
    assert sc.current_stream() != ours
    ours.synchronize()
    np.testing.assert_array_equal(y.cpu().numpy(), np.arange(1 << 20, dtype=np.float32) * 3)
    del ours, y
    theirs.synchronize()  # still alive: strided never destroys a borrowed stream
    assert theirs.query()


def test_caching_allocator_enable_false_bypasses_the_cache_and_true_restores_it():
    sc.synchronize()
    # exact byte counts: a garbage collection mid-test would free earlier tests' cyclic garbage (CUDA tensors among
    # it) and move memory_allocated, so collect first and not during the test
    gc.collect()
    gc.disable()
    try:
        kept = st.ones(1000, device="cuda")  # from the cache
        base = sc.memory_allocated()
        try:
            sc.caching_allocator_enable(False)
            raw = st.full((1 << 20,), 2.0, device="cuda")
            assert sc.memory_allocated() == base  # not the cache's
            np.testing.assert_array_equal(raw[:4].cpu().numpy(), [2.0] * 4)
            del kept  # allocated with caching on: back to the cache
            assert sc.memory_allocated() == base - 4096
            del raw
        finally:
            sc.caching_allocator_enable(True)
        again = st.ones(1000, device="cuda")
        assert sc.memory_allocated() == base
        del again
    finally:
        gc.enable()


def test_caching_allocator_disabled_bypasses_the_cache_inside_and_restores_it():
    sc.synchronize()
    gc.collect()
    gc.disable()  # exact byte counts, as above
    try:
        base = sc.memory_allocated()
        with sc.caching_allocator_disabled():
            raw = st.full((1 << 20,), 3.0, device="cuda")
            assert sc.memory_allocated() == base  # its own cuMemAlloc, not the cache's
        kept = st.ones(1000, device="cuda")
        assert sc.memory_allocated() == base + 4096  # caching is back on after the block
        np.testing.assert_array_equal(raw[:2].cpu().numpy(), [3.0, 3.0])
        del raw, kept
    finally:
        gc.enable()


def test_get_stream_from_external_queues_work_on_a_borrowed_stream():
    torch = pytest.importorskip("torch")
    theirs = torch.cuda.Stream()
    s = sc.get_stream_from_external(theirs.cuda_stream, 0)
    assert isinstance(s, sc.Stream) and s.cuda_stream == theirs.cuda_stream
    with sc.stream(s):
        y = st.arange(4.0, device="cuda") * 2
    s.synchronize()
    assert y.cpu().tolist() == [0.0, 2.0, 4.0, 6.0]
    del s
    theirs.synchronize()  # never destroyed by strided
