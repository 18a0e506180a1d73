"""``strided.accelerator`` on a real GPU: the same answers as ``strided.cuda`` and as ``torch.accelerator``."""

from __future__ import annotations

import pytest

import strided as st
import strided.accelerator as acc
import strided.cuda as cuda

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]


def test_devices_match_cuda_and_torch():
    torch = pytest.importorskip("torch")
    assert acc.is_available() and acc.device_count() == cuda.device_count() == torch.accelerator.device_count()
    assert acc.current_accelerator() == acc.current_accelerator(check_available=True) == st.device("cuda")
    assert str(acc.current_accelerator()) == str(torch.accelerator.current_accelerator())
    assert acc.current_device_index() == cuda.current_device() == 0
    with acc.device_index(0):
        assert acc.current_device_index() == 0
    assert acc.get_device_capability()["supported_dtypes"] >= {st.float32, st.bfloat16, st.float16, st.int64}
    free, total = acc.get_memory_info(0)
    assert 0 < free <= total == cuda.mem_get_info(0)[1]


def test_streams_and_synchronize():
    assert acc.current_stream() is cuda.current_stream()
    s = cuda.Stream()
    prev = acc.current_stream()
    acc.set_stream(s)
    try:
        assert acc.current_stream() is s and acc.current_stream("cuda:0") is s
        x = st.ones(1 << 20, device="cuda") * 3
    finally:
        acc.set_stream(prev)
    acc.synchronize()
    acc.synchronize("cuda:0")
    assert float(x.sum()) == 3 * (1 << 20)


def test_memory_queries_are_the_allocators():
    acc.synchronize()
    acc.reset_peak_memory_stats()
    before = acc.memory_allocated()
    x = st.empty(1 << 22, device="cuda")  # 16 MiB
    assert acc.memory_allocated() - before == x.numel() * 4 == cuda.memory_allocated() - before
    assert acc.max_memory_allocated() >= acc.memory_allocated()
    assert acc.memory_reserved() == cuda.memory_reserved() and acc.max_memory_reserved() >= acc.memory_reserved()
    assert acc.memory_stats(0)["allocated_bytes.all.current"] == acc.memory_allocated(st.device("cuda", 0))
    del x
    acc.empty_cache()
    assert acc.memory_allocated() == before
    acc.reset_accumulated_memory_stats()
    assert acc.memory_stats()["allocation.all.allocated"] == 0
