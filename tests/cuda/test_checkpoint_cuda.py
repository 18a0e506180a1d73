"""Trading GPU memory for compute on CUDA: activation checkpointing and save_on_cpu keep less device
memory after the forward and give the same gradients; the CUDA generator's state round-trips."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.nn as nn
from strided import cuda
from strided.autograd.graph import save_on_cpu
from strided.utils.checkpoint import checkpoint

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]

N = 1 << 20  # floats per activation: 4 MiB


def _block(t):
    h1 = t.sin()
    h2 = h1 * h1  # saves h1 twice
    h3 = h2.exp()  # saves h3
    return (h3 * t).sum()  # saves h3 and t


def _after_forward(run):
    """(bytes allocated after the forward beyond before it, gradient)."""
    x = st.randn(N, device="cuda", requires_grad=True)
    cuda.synchronize()
    before = cuda.memory_allocated()
    y = run(x)
    cuda.synchronize()
    held = cuda.memory_allocated() - before
    y.backward()
    return held, x.grad.numpy(force=True), x.detach().numpy(force=True)


def test_checkpoint_keeps_no_activations_and_gives_the_same_gradient():
    st.manual_seed(0)
    plain, g_plain, x0 = _after_forward(_block)
    st.manual_seed(0)
    held, g, x1 = _after_forward(lambda t: checkpoint(_block, t, use_reentrant=False))
    np.testing.assert_array_equal(x0, x1)
    assert plain >= 2 * N * 4  # h1 and h3 at least, kept for backward
    assert held < N * 4 // 2  # only the scalar output (and allocator rounding)
    np.testing.assert_allclose(g, g_plain, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("pin_memory", [False, True])
def test_save_on_cpu_moves_saved_activations_off_the_device(pin_memory):
    st.manual_seed(0)
    plain, g_plain, _ = _after_forward(_block)

    def hooked(t):
        with save_on_cpu(pin_memory=pin_memory):
            return _block(t)

    st.manual_seed(0)
    held, g, _ = _after_forward(hooked)
    assert held <= plain - 2 * N * 4
    np.testing.assert_allclose(g, g_plain, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_dropout_mask_is_recomputed_exactly_on_cuda(use_reentrant):
    st.manual_seed(0)
    m = nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Dropout(0.5), nn.Linear(256, 64)).to("cuda")
    x = st.randn(32, 64, device="cuda", requires_grad=True)

    def grads(run):
        for p in m.parameters():
            p.grad = None
        x.grad = None
        cuda.manual_seed(7)
        run(x).square().sum().backward()
        return [t.grad.numpy(force=True) for t in [x, *m.parameters()]]

    ref = grads(m)
    got = grads(lambda t: checkpoint(m, t, use_reentrant=use_reentrant))
    for a, b in zip(got, ref):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_cuda_rng_state_round_trip():
    state = cuda.get_rng_state()
    a = st.rand(1000, device="cuda").numpy(force=True)
    cuda.set_rng_state(state)
    b = st.rand(1000, device="cuda").numpy(force=True)
    np.testing.assert_array_equal(a, b)
    states = cuda.get_rng_state_all()
    assert len(states) == cuda.device_count()
    # torch's layout: 16 bytes of (seed, offset), a uint8 CPU tensor (Note [Generator state bytes])
    assert state.dtype is st.uint8 and state.device.type == "cpu" and state.shape == (16,)
    torch = pytest.importorskip("torch")
    st.manual_seed(1234)
    torch.manual_seed(1234)
    np.testing.assert_array_equal(cuda.get_rng_state().numpy(), torch.cuda.get_rng_state().numpy())
    with pytest.raises(ValueError, match="Expected a cuda device"):
        cuda.get_rng_state("cpu")
