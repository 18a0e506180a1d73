"""CUDA and pinned memory freed by the garbage collector in the middle of an allocation.

Note [Finalizer frees] (strided/memory/splitting.py): tensors caught in reference cycles are freed
when the cyclic collector runs, and it can run inside an allocator call on the same thread. The
device allocator must not have its free lists edited mid-split; the pinned allocator (a plain lock
before) must not deadlock.
"""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]


class _Cycle:
    """Holds a tensor in a reference cycle: only the cyclic collector frees it."""

    def __init__(self, t):
        self.t, self.me = t, self


def _collect_on_next_call(monkeypatch, module, name):
    real = getattr(module, name)
    armed = [True]

    def wrapper(*args):
        if armed[0]:
            armed[0] = False
            gc.collect()
        return real(*args)

    monkeypatch.setattr(module, name, wrapper)
    return armed


def test_device_tensors_collected_inside_a_split(monkeypatch):
    from strided.backends.cuda.allocator import get_allocator
    from strided.memory import splitting
    from strided.memory.invariants import check_invariants

    alloc = get_allocator(0)
    keep = st.empty(1000, device="cuda")  # the small pool has a split segment with a free remainder
    gc.collect()  # only this test's cycles may be found inside the split (an earlier failure leaves its own)
    gc.disable()
    try:
        before = cuda.memory_allocated()
        for _ in range(3):
            _Cycle(st.empty(1000, device="cuda"))
        with monkeypatch.context() as m:
            armed = _collect_on_next_call(m, splitting, "Block")
            x = st.full((2000,), 7.0, device="cuda")  # the split makes a Block: the collector runs there
        assert not armed[0] and len(alloc._late) == 3
        check_invariants(alloc)
        y = st.empty(10, device="cuda")  # frees the queued blocks first
        assert alloc._late == []
        check_invariants(alloc)
        assert cuda.memory_allocated() == before + 8192 + 512  # x and y, rounded as c10 rounds
        np.testing.assert_array_equal(x.cpu().numpy(), np.full(2000, 7.0, np.float32))
        del x, y
    finally:
        gc.enable()
    del keep


def test_pinned_tensor_collected_inside_a_pinned_allocation_does_not_deadlock(monkeypatch):
    from strided.backends.cuda import host_allocator as ha

    cuda.empty_host_cache()  # no cached 8 MiB block: the allocation below must make one
    gc.collect()
    gc.disable()
    try:
        _Cycle(st.empty(3000, pin_memory=True))
        with monkeypatch.context() as m:
            armed = _collect_on_next_call(m, ha, "PinnedBlock")
            out = []
            # a new power-of-two bucket: a cache miss makes a PinnedBlock, where the collector runs
            worker = threading.Thread(target=lambda: out.append(st.empty(5 << 20, pin_memory=True)), daemon=True)
            worker.start()
            worker.join(60)
            assert not worker.is_alive(), "pinned allocation deadlocked on a finalizer's free"
        assert not armed[0] and out and out[0].is_pinned()
        assert len(ha.host_allocator._late) == 1
        st.empty(10, pin_memory=True)  # the next allocation frees the queued block
        assert ha.host_allocator._late == []
    finally:
        gc.enable()
