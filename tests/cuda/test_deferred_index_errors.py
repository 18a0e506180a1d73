"""Out-of-range indices on CUDA are found by the kernels and reported without a device sync
(Note [Deferred index errors] in strided/backends/cuda/index_errors.py)."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda
from strided.backends.cuda import driver

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]


def _weight():
    return st.from_numpy(np.arange(12, dtype=np.float32).reshape(4, 3)).cuda()


def test_good_indices_never_synchronize(sync_calls):
    w = st.randn(50, 8, device="cuda", requires_grad=True)
    idx = st.tensor([[1, 4, 49], [0, 0, 7]]).cuda()  # host-to-device copies from pageable memory sync
    target = st.tensor([3, 1, 0, 2, 4, 5]).cuda()
    rows = st.tensor([0, 4]).cuda()
    x = st.randn(5, 8, device="cuda")
    sync_calls.clear()
    logits = st.nn.functional.embedding(idx, w).reshape(6, 8)  # the GPT step's indexing, forward and backward
    loss = st.nn.functional.cross_entropy(logits, target)
    loss.backward()
    x.index_select(0, idx.reshape(-1) % 5)
    x.gather(1, st.zeros(5, 2, dtype=st.int64, device="cuda"))
    x.scatter_add(1, st.ones(5, 2, dtype=st.int64, device="cuda"), x[:, :2])
    x.index_add(0, rows, x[:2])
    y = x[rows, 1:]  # advanced indexing, get and set
    x[rows] = 0.0
    x[:, rows] += 1.0
    assert sync_calls == []
    assert y.shape == (2, 7)
    cuda.synchronize()
    assert w.grad is not None and float(w.grad.abs().sum().item()) > 0


def test_reported_at_the_next_synchronizing_call_once():
    w = _weight()
    out = st.embedding(w, st.tensor([1, 9]).cuda())  # returns: no sync
    assert out.shape == (2, 3)
    with pytest.raises(IndexError, match=r"index out of range in self: index 9 \(found by a CUDA embedding"):
        cuda.synchronize()
    cuda.synchronize()  # reported once
    np.testing.assert_array_equal(w.cpu().numpy(), np.arange(12, dtype=np.float32).reshape(4, 3))


@pytest.mark.parametrize("sync", [
    lambda t: t.cpu(),
    lambda t: t.sum().item(),
    lambda t: cuda.current_stream().synchronize(),
    lambda t: repr(t),
])
def test_every_synchronizing_call_reports(sync):
    w = _weight()
    bad = w.gather(0, st.tensor([[0, 7, 1]]).cuda())
    with pytest.raises(RuntimeError, match="index 7 is out of bounds for dimension 0 with size 4"):
        sync(bad)


def test_event_synchronize_reports():
    w = _weight()
    w.index_add(1, st.tensor([-1]).cuda(), w[:, :1])
    ev = cuda.Event()
    ev.record()
    with pytest.raises(RuntimeError, match="index -1 is out of bounds for dimension 1 with size 3"):
        ev.synchronize()


def test_reported_at_the_next_indexing_op_on_the_device():
    w = _weight()
    w.index_select(0, st.tensor([5]).cuda())
    cuda.current_stream().query()  # not a synchronizing call: nothing raised yet
    ok = st.tensor([0]).cuda()
    with pytest.raises(IndexError, match="index out of range in self: index 5"):
        for _ in range(1000):  # the earlier kernel has finished by the time a later op looks
            w.index_select(0, ok)
    np.testing.assert_array_equal(w.index_select(0, ok).cpu().numpy(), [[0, 1, 2]])


def test_launch_blocking_raises_at_the_op(monkeypatch):
    monkeypatch.setattr(driver, "LAUNCH_BLOCKING", True)
    w = _weight()
    with pytest.raises(RuntimeError, match=r"index 4 is out of bounds .*scatter.*CUDA_LAUNCH_BLOCKING=1\)"):
        w.scatter(0, st.tensor([[4, 0, 0]]).cuda(), 1.0)


@pytest.mark.parametrize("call,match", [
    (lambda w: w[st.tensor([0, 7]).cuda()], "index 7 is out of bounds for dimension 0 with size 4"),
    (lambda w: w[:, st.tensor([-4]).cuda()], "index -4 is out of bounds for dimension 0 with size 3"),
    (lambda w: w[st.tensor([1]).cuda(), st.tensor([5]).cuda()], "index 5 is out of bounds for dimension 1 with size 3"),
    (lambda w: w.__setitem__(st.tensor([4]).cuda(), 1.0), "index 4 is out of bounds for dimension 0 with size 4"),
    (lambda w: w.index_put_((st.tensor([9]).cuda(),), st.ones(3, device="cuda"), accumulate=True),
     "index 9 is out of bounds for dimension 0 with size 4"),
])
def test_advanced_indexing_reports_the_index_tensor(call, match):
    w = _weight()
    call(w)
    with pytest.raises(IndexError, match=match + r" \(found by a CUDA index"):
        cuda.synchronize()
    np.testing.assert_array_equal(w.cpu().numpy(), np.arange(12, dtype=np.float32).reshape(4, 3))


def test_empty_result_checks_at_once():
    w = st.zeros(4, 0, device="cuda")
    with pytest.raises(IndexError, match="index 6 is out of bounds for dimension 0 with size 4"):
        w[st.tensor([6]).cuda()]


def test_bad_elements_are_skipped_and_good_ones_written():
    w = _weight()
    out = w.index_select(0, st.tensor([2, 100, 3]).cuda())
    with pytest.raises(IndexError):
        cuda.synchronize()
    got = out.cpu().numpy()
    np.testing.assert_array_equal(got[0], [6, 7, 8])
    np.testing.assert_array_equal(got[2], [9, 10, 11])


def test_an_error_never_raised_is_printed_at_exit():
    import subprocess
    import sys

    code = ("import strided as st\n"
            "w = st.zeros(4, 3, device='cuda')\n"
            "st.embedding(w, st.tensor([1, 9]).cuda())\n")  # exits without any synchronizing call
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "an error was pending at exit: IndexError: index out of range in self: index 9" in r.stderr
