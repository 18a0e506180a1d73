"""Backward frees memory as early as torch does: live bytes counted on the meta device by a
tracking storage allocator (meta tensors carry sizes only, so any model size is free to run)."""

from __future__ import annotations

import weakref

import numpy as np
import pytest

import strided as st
from strided import backends
from strided.storage import allocate_meta

MB = 2**20


class Live:
    """Bytes of live meta storages, and the peak since ``reset()``."""

    def __init__(self):
        self.now = self.peak = 0

    def allocate(self, nbytes, device, pin_memory=False):
        s = allocate_meta(nbytes)
        self.now += nbytes
        self.peak = max(self.peak, self.now)
        weakref.finalize(s, self._free, nbytes)
        return s

    def _free(self, nbytes):
        self.now -= nbytes

    def reset(self):
        self.peak = self.now


@pytest.fixture
def live():
    tracker = Live()
    previous = backends.STORAGE_ALLOCATORS["meta"]
    backends.register_allocator("meta", tracker.allocate)
    try:
        yield tracker
    finally:
        backends.register_allocator("meta", previous)


def test_saved_tensors_and_gradients_are_freed_as_nodes_run(live):
    x = st.empty(MB // 4, device="meta").requires_grad_()  # 1 MiB
    y = x
    for _ in range(20):
        y = st.tanh(y)  # each node saves its 1 MiB result
    loss = y.sum()
    assert live.now >= 21 * MB
    seen = []
    x.register_hook(lambda g: seen.append(live.now))  # runs last, in x's AccumulateGrad
    live.reset()
    loss.backward()
    # by then every tanh node has run and dropped its saved result and its incoming gradient:
    # what lives is x, y (still referenced here) and x's gradient (and two scalars)
    assert seen[0] <= 3 * MB + 64
    # at most what forward left plus one node's worth: its incoming gradient and the formula's
    # two temporaries (1 - y * y); never a growing pile of gradients or saved results
    assert live.peak <= 24 * MB + 64
    del loss, y
    assert live.now == 2 * MB  # x and x.grad


def test_first_gradient_is_stolen_so_no_copy_is_live(live):
    w = st.empty(256, 1024, device="meta").requires_grad_()  # 1 MiB weight
    x = st.empty(8, 1024, device="meta")
    loss = st.nn.functional.linear(x, w).sum()
    live.reset()
    before = live.now
    loss.backward()
    # the weight gradient is the mm's output itself: one weight-sized buffer, never two
    assert live.peak - before <= MB + 64 * 1024


def test_cross_entropy_backward_peak_is_a_few_logits(live):
    n, c = 1024, 4096  # 16 MiB of float32 logits
    logits = st.empty(n, c, device="meta").requires_grad_()
    target = st.zeros(n, dtype=st.int64, device="meta")
    loss = st.nn.functional.cross_entropy(logits, target)
    live.reset()
    before = live.now
    loss.backward()
    size = n * c * 4
    # softmax, its scattered copy and the scaled result (torch: 2 full-size temporaries + the grad)
    assert live.peak - before <= 3 * size + MB
    assert logits.grad.stride() == (c, 1)


def test_gpt_block_graph_memory_matches_torchs_accounting(live):
    """A transformer MLP block at GPT-2 width: nothing but the saved activations after forward, and
    only the parameter gradients after backward (intermediate gradients are dropped when consumed)."""
    d, tokens = 768, 1024
    ln = st.nn.LayerNorm(d, device="meta")
    fc = st.nn.Linear(d, 4 * d, device="meta")
    proj = st.nn.Linear(4 * d, d, device="meta")
    params = sum(p.numel() * 4 for p in (*ln.parameters(), *fc.parameters(), *proj.parameters()))
    x = st.empty(tokens, d, device="meta")
    base = live.now
    out = x + proj(st.nn.functional.gelu(fc(ln(x)), approximate="tanh"))
    loss = out.sum()
    del out
    live.reset()
    loss.backward()
    del loss
    assert live.now - base == params


def test_second_gradient_is_added_in_place_into_the_first():
    """GPT's tied wte: the embedding's and the lm_head's gradients meet in one input buffer and are
    summed with add_ (a native in-place kernel on CUDA: two weight-sized buffers, not three)."""
    from strided.utils.profiler import count_ops

    emb = st.nn.Embedding(16, 4, dtype=st.float64)
    idx = st.tensor([[1, 2, 2]])
    loss = st.nn.functional.linear(emb(idx), emb.weight).sum()
    with count_ops() as stats:
        loss.backward()
    calls = {op for op, _ in stats.calls}
    assert "aten::add_.Tensor" in calls
    w = emb.weight.detach().numpy()
    counts = np.bincount([1, 2, 2], minlength=16)[:, None]
    # head: every row gets the sum of the looked-up rows; embedding: each row's count times sum(W)
    expected = np.tile(w[[1, 2, 2]].sum(0), (16, 1)) + counts * w.sum(0)
    np.testing.assert_allclose(emb.weight.grad.numpy(), expected, rtol=1e-12)


def test_in_place_accumulation_respects_sharing_and_create_graph():
    x = st.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    y = x * 1
    y.register_hook(lambda g: seen.append(g.clone()))
    (y * 2 + y * 3).sum().backward()  # y's buffer sums two gradients
    assert seen[0].tolist() == [5.0, 5.0] and x.grad.tolist() == [5.0, 5.0]
    x.grad = None
    (g,) = st.autograd.grad((x * x + x * 3).sum(), x, create_graph=True)
    (gg,) = st.autograd.grad(g.sum(), x)
    assert g.tolist() == [5.0, 7.0] and gg.tolist() == [2.0, 2.0]
