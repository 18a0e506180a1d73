"""strided.cuda.set_sync_debug_mode on a GPU: the calls that synchronize the host with a stream warn
(or raise) exactly where torch's do, and a training step makes none (Note [Synchronizing calls])."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]

MESSAGE = "called a synchronizing CUDA operation"


def _item(lib):
    lib.ones(3, device="cuda").sum().item()


def _cpu(lib):
    lib.ones(3, device="cuda").cpu()


def _nonzero(lib):
    lib.arange(6, device="cuda").nonzero()


def _boolean_mask(lib):
    x = lib.arange(6, device="cuda")
    x[x > 2]


def _branch_on_value(lib):
    bool(lib.ones(3, device="cuda").sum() > 0)


def _stream_synchronize(lib):
    s = lib.cuda.Stream()
    s.synchronize()


def _blocking_h2d(lib):
    lib.ones(4, device="cuda").copy_(lib.ones(4))


def _pinned_h2d_non_blocking(lib):
    lib.ones(1 << 16, device="cuda").copy_(lib.ones(1 << 16).pin_memory(), non_blocking=True)


def _pageable_h2d_non_blocking(lib):
    lib.ones(1 << 16, device="cuda").copy_(lib.ones(1 << 16), non_blocking=True)


def _pageable_d2h_non_blocking(lib):
    lib.empty(1 << 16).copy_(lib.ones(1 << 16, device="cuda"), non_blocking=True)


def _device_synchronize(lib):
    lib.cuda.synchronize()


def _event_synchronize(lib):
    e = lib.cuda.Event()
    e.record()
    e.synchronize()


def _device_work(lib):
    a = lib.ones(64, 64, device="cuda")
    idx = lib.arange(8, device="cuda")
    ((a @ a).softmax(-1)[idx] + a[idx].sum(0)).amax()


CASES = [_item, _cpu, _nonzero, _boolean_mask, _branch_on_value, _stream_synchronize, _blocking_h2d,
         _pinned_h2d_non_blocking, _pageable_h2d_non_blocking, _pageable_d2h_non_blocking, _device_synchronize,
         _event_synchronize, _device_work]


def _warned(lib, case) -> bool:
    case(lib)  # warm up: kernels compiled, pools made
    lib.cuda.synchronize()
    lib.cuda.set_sync_debug_mode("warn")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            case(lib)
    finally:
        lib.cuda.set_sync_debug_mode("default")
    lib.cuda.synchronize()
    return any(MESSAGE in str(w.message) for w in caught)


def test_the_same_calls_warn_as_torchs():
    torch = pytest.importorskip("torch")
    ours = {case.__name__: _warned(st, case) for case in CASES}
    theirs = {case.__name__: _warned(torch, case) for case in CASES}
    assert ours == theirs
    assert ours["_item"] and not ours["_device_work"]  # the comparison is not vacuous


def test_error_mode_raises_and_the_warning_names_the_callers_line():
    x = st.ones(3, device="cuda")
    cuda.set_sync_debug_mode("error")
    try:
        assert cuda.get_sync_debug_mode() == 2
        with pytest.raises(RuntimeError, match=MESSAGE):
            x.sum().item()
        (x + 1).sum()  # no synchronization: no error
    finally:
        cuda.set_sync_debug_mode(0)
    assert x.sum().item() == 3.0  # off again
    cuda.set_sync_debug_mode(1)
    try:
        with pytest.warns(UserWarning, match=MESSAGE) as record:
            x.cpu()
    finally:
        cuda.set_sync_debug_mode("default")
    assert record[0].filename == __file__


def test_a_training_step_never_synchronizes(sync_calls):
    from strided.demo import CONFIGS, GPT, make_optimizer

    cfg = CONFIGS["tiny"]
    st.manual_seed(0)
    model = GPT(cfg, 65, "cuda")
    opt = make_optimizer(model, cfg, "cuda")
    rng = np.random.default_rng(0)
    batches = [st.from_numpy(rng.integers(0, 65, (cfg.batch_size, cfg.block_size + 1)).astype(np.int64))
               for _ in range(3)]

    def step(batch):
        xy = batch.to("cuda", non_blocking=True)
        with st.autocast("cuda", dtype=st.bfloat16):
            _, loss = model(xy[:, :-1], xy[:, 1:])
        loss.backward()
        st.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    first = step(batches[0]).item()  # state made, kernels compiled
    cuda.synchronize()
    sync_calls.clear()
    cuda.set_sync_debug_mode("error")
    try:
        losses = [step(b) for b in batches[1:]]
    finally:
        cuda.set_sync_debug_mode("default")
    assert sync_calls == []
    assert all(np.isfinite(loss.item()) for loss in losses) and np.isfinite(first)
