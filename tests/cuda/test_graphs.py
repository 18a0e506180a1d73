"""CUDA graphs on a GPU: capture and replay give eager's results, captured memory lives in a private
pool that reset + empty_cache returns, failed captures leave streams and the allocator usable, and a
whole training step (forward, backward, fused AdamW) replays to the same parameters as eager steps."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda
from strided import nn, optim

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]


def _np(t):
    return t.detach().cpu().float().numpy()


def _rand(*shape, seed=0):
    return st.from_numpy(np.random.default_rng(seed).standard_normal(shape).astype(np.float32)).cuda()


def test_replay_recomputes_from_static_inputs():
    x = _rand(1000)
    w = _rand(1000, seed=1)
    y = (x * 2 + w).relu()  # warm-up: kernels compiled and loaded before capture
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        y = (x * 2 + w).relu()
    assert g.num_nodes() == 3
    for seed in (2, 3):
        new = _rand(1000, seed=seed)
        x.copy_(new)
        g.replay()
        np.testing.assert_allclose(_np(y), np.maximum(_np(new) * 2 + _np(w), 0), rtol=1e-6)


def test_capture_on_default_stream_is_refused():
    g = cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="non-default stream"):
        g.capture_begin()
    with pytest.raises(RuntimeError, match="without a preceding successful capture"):
        g.replay()


def test_capture_memory_is_a_private_pool_released_by_reset():
    x = _rand(1 << 20)
    (x + 1).sum()
    cuda.synchronize()
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        big = x + 1  # 4 MiB: a new segment, allocated with the capture mode relaxed
        total = big.sum()
    pool = g.pool()
    segs = [s for s in cuda.memory_snapshot() if tuple(s.get("segment_pool_id", ())) == pool]
    assert segs and sum(s["total_size"] for s in segs) >= 4 << 20
    g.replay()
    np.testing.assert_allclose(float(total.item()), float(_np(x).sum() + x.numel()), rtol=1e-4)
    reserved = cuda.memory_reserved()
    del big, total
    g.reset()
    cuda.empty_cache()
    assert cuda.memory_reserved() < reserved
    assert not [s for s in cuda.memory_snapshot() if tuple(s.get("segment_pool_id", ())) == pool]


def test_exception_inside_capture_ends_it_and_restores_the_stream():
    x = _rand(64)
    before = cuda.current_stream()
    g = cuda.CUDAGraph()
    with pytest.raises(ValueError, match="boom"):
        with cuda.graph(g):
            x * 3
            raise ValueError("boom")
    assert cuda.current_stream() == before
    assert not cuda.is_current_stream_capturing()
    np.testing.assert_allclose(_np(x * 3), _np(x) * 3, rtol=1e-6)  # eager work is fine afterwards
    with pytest.raises(RuntimeError, match="without a preceding successful capture"):
        g.replay()


def test_synchronizing_inside_capture_raises_and_leaves_cuda_usable():
    x = _rand(64)
    x.sum()
    g = cuda.CUDAGraph()
    with pytest.raises(cuda.CudaError, match="CAPTURE"):
        with cuda.graph(g):
            x.sum().item()  # a device-to-host copy + sync: not permitted while capturing
    assert not cuda.is_current_stream_capturing()
    np.testing.assert_allclose(float((x + 1).sum().item()), float(_np(x).sum() + 64), rtol=1e-5)


def test_random_ops_draw_fresh_numbers_each_replay_like_eager():
    """Note [Random ops under capture]: replays read the generator's state at launch time."""
    x = st.ones(4096, device="cuda")
    st.nn.functional.dropout(x, 0.5)
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        y = st.nn.functional.dropout(x, 0.5)
        u = st.empty(1000, device="cuda").uniform_()
    cuda.manual_seed(7)
    g.replay()
    first = (_np(y), _np(u))
    g.replay()
    second = (_np(y), _np(u))
    assert not np.array_equal(first[0], second[0]) and not np.array_equal(first[1], second[1])
    assert set(np.unique(first[0])) <= {0.0, 2.0} and 0.4 < (first[0] == 0).mean() < 0.6
    cuda.manual_seed(7)  # the same ops run eagerly from the same generator state draw the same numbers
    eager = [(_np(st.nn.functional.dropout(x, 0.5)), _np(st.empty(1000, device="cuda").uniform_())) for _ in range(2)]
    for (ey, eu), (gy, gu) in zip(eager, (first, second)):
        np.testing.assert_array_equal(gy, ey)
        np.testing.assert_array_equal(gu, eu)


def test_capture_error_mode_is_checked():
    with pytest.raises(ValueError, match="capture_error_mode"):
        cuda.graph(cuda.CUDAGraph(), capture_error_mode="strict").__enter__()


def test_two_graphs_share_one_pool():
    x = _rand(4096)
    (x * 2).exp()
    g1, g2 = cuda.CUDAGraph(), cuda.CUDAGraph()
    with cuda.graph(g1):
        y1 = x * 2
    with cuda.graph(g2, pool=g1.pool()):
        y2 = y1.exp()
    assert g2.pool() == g1.pool()
    g1.replay()
    g2.replay()
    np.testing.assert_allclose(_np(y2), np.exp(_np(x) * 2), rtol=1e-5)


def test_side_stream_joined_to_the_capture():
    x = _rand(1 << 16)
    s2 = cuda.Stream()
    x * 2
    x + 1
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        cap = cuda.current_stream()
        s2.wait_stream(cap)  # fork: s2 joins the capture
        with cuda.stream(s2):
            a = x * 2  # allocated on s2 from the graph's pool (same capture id)
        b = x + 1
        cap.wait_stream(s2)  # join
        c = a + b
    g.replay()
    cuda.synchronize()
    h = _np(x)
    np.testing.assert_array_equal(_np(c), h * 2 + (h + 1))


def test_matmul_layer_norm_softmax_replay_matches_eager():
    x = _rand(64, 256)
    lin = nn.Linear(256, 512, device="cuda")
    ln = nn.LayerNorm(512, device="cuda")

    def f():
        return st.nn.functional.softmax(ln(st.nn.functional.gelu(lin(x))), dim=-1)

    with st.no_grad():
        f()
        g = cuda.CUDAGraph()
        with cuda.graph(g):
            out = f()
        x.copy_(_rand(64, 256, seed=5))
        g.replay()
        np.testing.assert_allclose(_np(out), _np(f()), rtol=1e-5, atol=1e-7)


def _model():
    st.manual_seed(0)
    return nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.LayerNorm(64), nn.Linear(64, 10)).cuda()


def test_whole_training_step_replays_like_eager_steps():
    """Capture zero-grad-free forward + backward + fused AdamW; replays track eager training."""
    eager, graphed = _model(), _model()
    data = [(_rand(16, 32, seed=10 + k), st.from_numpy(np.random.default_rng(k).integers(0, 10, 16)).cuda())
            for k in range(6)]
    opt_e = optim.AdamW(eager.parameters(), lr=1e-2, fused=True)
    opt_g = optim.AdamW(graphed.parameters(), lr=1e-2, fused=True)
    F = st.nn.functional

    def eager_step(x, y):
        opt_e.zero_grad(set_to_none=True)
        loss = F.cross_entropy(eager(x), y)
        loss.backward()
        opt_e.step()
        return loss

    static_x, static_y = data[0][0].clone(), data[0][1].clone()
    side = cuda.Stream()
    side.wait_stream(cuda.current_stream())
    with cuda.stream(side):  # warm-up on a side stream, as torch's docs do: state and kernels exist
        for x, y in data[:2]:
            static_x.copy_(x)
            static_y.copy_(y)
            opt_g.zero_grad(set_to_none=True)
            F.cross_entropy(graphed(static_x), static_y).backward()
            opt_g.step()
    cuda.current_stream().wait_stream(side)
    for x, y in data[:2]:
        eager_step(x, y)

    g = cuda.CUDAGraph()
    opt_g.zero_grad(set_to_none=True)
    with cuda.graph(g):
        static_loss = F.cross_entropy(graphed(static_x), static_y)
        static_loss.backward()
        opt_g.step()
    for x, y in data[2:]:
        static_x.copy_(x)
        static_y.copy_(y)
        g.replay()
        loss = eager_step(x, y)
        np.testing.assert_allclose(float(static_loss.item()), float(loss.item()), rtol=1e-4)
    for pe, pg in zip(eager.parameters(), graphed.parameters()):
        np.testing.assert_allclose(_np(pg), _np(pe), rtol=1e-4, atol=1e-5)


def test_host_side_optimizer_step_is_refused_under_capture():
    p = _rand(8).requires_grad_()
    p.grad = _rand(8, seed=1)
    opt = optim.AdamW([p], foreach=True)
    opt.step()
    g = cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="capturable is False"):
        with cuda.graph(g):
            opt.step()


def test_captured_embedding_replays_new_indices():
    emb = nn.Embedding(50, 8).cuda()
    idx = st.from_numpy(np.array([1, 2, 3, 4], dtype=np.int64)).cuda()
    with st.no_grad():
        emb(idx)
        g = cuda.CUDAGraph()
        with cuda.graph(g):
            out = emb(idx)  # the bounds check cannot read back under capture: it traps instead
        new = np.array([49, 0, 7, 7], dtype=np.int64)
        idx.copy_(st.from_numpy(new))
        g.replay()
        np.testing.assert_array_equal(_np(out), _np(emb.weight)[new])


_BAD_INDEX_REPLAY = """
import numpy as np, strided as st, strided.cuda as cuda
emb = st.nn.Embedding(50, 8).cuda()
idx = st.from_numpy(np.array([1, 2], dtype=np.int64)).cuda()
with st.no_grad():
    emb(idx)
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        out = emb(idx)
    idx.copy_(st.from_numpy(np.array([1, 50], dtype=np.int64)))
    g.replay()
    try:
        cuda.synchronize()
    except cuda.CudaError as e:
        print("RAISED", e)
"""


def test_out_of_range_index_in_a_replay_stops_the_kernel():
    """Run in a child process: like torch's device-side assert, the trap leaves that context unusable."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", _BAD_INDEX_REPLAY], capture_output=True, text=True, timeout=300)
    assert "RAISED CUDA_ERROR" in r.stdout, (r.stdout, r.stderr)


@pytest.mark.parametrize("garbage", ["graph", "raw_memory", "mem_pool"])
def test_garbage_finalized_inside_a_capture_does_not_invalidate_it(garbage):
    # Note [Finalizers during capture]: a CUDAGraph, raw (uncached) memory or a MemPool left in a reference
    # cycle is finalized when the collector runs, here inside another capture; its driver calls (graph
    # destroy, cuCtxSynchronize + cuMemFree, the pool's release and empty_cache) wait until the capture has
    # ended. (Pinned memory and events are deferred too, but their calls did not invalidate a capture when
    # tried on an H200, so no case here could fail for them.)
    import gc

    from strided.backends.cuda import allocator

    pools = []

    def make_garbage():
        if garbage == "graph":
            src = _rand(16)
            old = cuda.CUDAGraph()
            with cuda.graph(old):
                out = src + 1
            held = (old, out)
        elif garbage == "mem_pool":  # its release empties the cache: cuMemFree
            held = cuda.MemPool()
            with cuda.use_mem_pool(held):
                st.empty(1 << 20, device="cuda")
            pools.append(held.id)
        else:
            allocator.NO_CACHING = True
            try:
                held = st.empty(1000, device="cuda")
            finally:
                allocator.NO_CACHING = False
        cycle = [held]
        cycle.append(cycle)

    x = _rand(64, 256, seed=3)
    gc.collect()
    gc.disable()
    try:
        make_garbage()
        g = cuda.CUDAGraph()
        with cuda.graph(g):
            y = x * 2
            gc.collect()  # the garbage's finalizers run here, inside the capture
            z = y + 1
    finally:
        gc.enable()
    x.copy_(_rand(64, 256, seed=4))
    g.replay()
    cuda.synchronize()
    np.testing.assert_allclose(_np(z), _np(x) * 2 + 1, rtol=1e-6)
    from strided.backends.cuda import capture

    assert not capture._deferred  # ran when the capture ended
    for pid in pools:  # released, and its memory returned, once the capture ended
        assert pid not in allocator.get_allocator(0)._graph_pools


@pytest.mark.parametrize("mode", ["global", "thread_local"])
def test_capture_error_mode_decides_whether_another_threads_unsafe_call_counts(mode):
    # Note [Other threads and global capture]: a global-mode capture refuses cuMemAlloc from any thread and is
    # invalidated; a thread_local one checks only the capturing thread.
    import threading

    from strided.backends.cuda import driver

    x = _rand(1024)
    got = []

    def other_thread():
        driver.ensure_context(0)
        got.append(driver.cu().cuMemAlloc(1 << 20))

    g = cuda.CUDAGraph()

    def capture():
        with cuda.graph(g, capture_error_mode=mode):
            y = x * 2
            t = threading.Thread(target=other_thread)
            t.start()
            t.join()
            return y + 1

    try:
        if mode == "global":
            with pytest.raises(cuda.CudaError, match="CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"):
                capture()
            assert int(got[0][0]) != 0  # the other thread's call was refused too
        else:
            z = capture()
            assert int(got[0][0]) == 0
            g.replay()
            cuda.synchronize()
            np.testing.assert_allclose(_np(z), _np(x) * 2 + 1, rtol=1e-6)
    finally:
        for err, ptr in got:
            if int(err) == 0:
                driver.cu().cuMemFree(ptr)
    z2 = x * 3  # the device is usable afterwards
    np.testing.assert_allclose(_np(z2), _np(x) * 3, rtol=1e-6)


def test_a_capture_in_an_autocast_region_keeps_its_own_weight_casts():
    """Note [Autocast cast cache]: a weight cast (and cached) before the capture, in the same region, is cast again
    inside it, so the graph owns its copy; replays after the region dropped its cache (and the freed block was
    reused) still read the weight."""
    w = _rand(256, 256, seed=4).requires_grad_()
    x = _rand(64, 256, seed=5)
    g = cuda.CUDAGraph()
    with st.autocast("cuda", dtype=st.float16):
        st.nn.functional.linear(x, w)  # caches w's float16 copy; kernels loaded before the capture
        with cuda.graph(g):
            y = st.nn.functional.linear(x, w)
    junk = [st.full((256, 256), 7.0, dtype=st.float16, device="cuda") for _ in range(8)]  # reuse freed blocks
    for seed in (6, 7):
        x.copy_(_rand(64, 256, seed=seed))
        g.replay()
        want = st.nn.functional.linear(x.half(), w.detach().half())
        np.testing.assert_allclose(_np(y), _np(want), rtol=1e-3, atol=1e-3)
    del junk
