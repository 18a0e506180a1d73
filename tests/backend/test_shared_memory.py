"""Tensor.share_memory_ / is_shared and Module.share_memory (Note [Shared CPU memory]): the memory moves in place
(views follow), a forked process writes what the parent reads, memory not owned cannot grow; torch's answers."""

from __future__ import annotations

import multiprocessing
import sys

import numpy as np
import pytest

import strided as st

torch = pytest.importorskip("torch")

fork_only = pytest.mark.skipif(sys.platform != "linux", reason="the fork start method: Linux")


@pytest.mark.parametrize("lib", [torch, st], ids=["torch", "strided"])
def test_moves_in_place_and_views_follow(lib):
    t = lib.arange(6.0).reshape(2, 3)
    view = t[1]
    assert not t.is_shared()
    assert t.share_memory_() is t and t.is_shared() and view.is_shared()
    view.add_(10)
    assert t.tolist() == [[0.0, 1.0, 2.0], [13.0, 14.0, 15.0]]
    t.share_memory_()  # already shared: nothing changes
    assert t.tolist()[1] == [13.0, 14.0, 15.0]


def _child_adds(t):
    t.add_(1.0)


@fork_only
def test_a_forked_process_writes_what_the_parent_reads():
    ctx = multiprocessing.get_context("fork")
    shared, private = st.zeros(4).share_memory_(), st.zeros(4)
    for t in (shared, private):
        proc = ctx.Process(target=_child_adds, args=(t,))
        proc.start()
        proc.join(30)
        assert proc.exitcode == 0
    assert shared.tolist() == [1.0] * 4 and private.tolist() == [0.0] * 4


@fork_only
def test_module_share_memory_for_hogwild():
    model = st.nn.Linear(3, 2)
    assert model.share_memory() is model and all(p.is_shared() for p in model.parameters())
    before = model.weight.detach().numpy().copy()
    ctx = multiprocessing.get_context("fork")
    proc = ctx.Process(target=_child_adds, args=(model.weight.detach(),))
    proc.start()
    proc.join(30)
    np.testing.assert_allclose(model.weight.detach().numpy(), before + 1.0)


@pytest.mark.parametrize("lib", [torch, st], ids=["torch", "strided"])
def test_memory_not_owned_cannot_grow(lib):
    t = lib.from_numpy(np.zeros(2, dtype=np.float32))
    with pytest.raises(RuntimeError, match="Trying to resize storage that is not resizable"):
        t.resize_(10)
    t.resize_(1)  # shrinking keeps the memory
    if lib is st:  # torch 2.14 crashes the process here (a segfault), so only strided's answer is checked
        s = st.zeros(2).share_memory_()
        with pytest.raises(RuntimeError, match="Trying to resize storage that is not resizable"):
            s.resize_(10)


def test_meta_refuses_as_torch():
    for lib in (torch, st):
        with pytest.raises(RuntimeError, match="_share_fd_: only available on CPU"):
            lib.zeros(2, device="meta").share_memory_()
