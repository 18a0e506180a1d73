"""Autograd on CUDA: gradients equal the CPU gradients; backward runs on the forward's streams."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided import cuda

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]


def _grads(fn, arrays, device):
    leaves = [st.tensor(a, device=device, requires_grad=True) for a in arrays]
    out = fn(*leaves)
    out.backward(st.ones_like(out))
    return [x.grad.numpy(force=True) for x in leaves]


CASES = {
    "add_mul_broadcast": (lambda a, b: a * b + a, [(4, 3), (3,)]),
    "matmul": (lambda a, b: st.matmul(a, b), [(2, 4, 3), (3, 5)]),
    "linear_relu": (lambda x, w, b: st.linear(x, w, b).relu(), [(5, 3), (4, 3), (4,)]),
    "sum_mean": (lambda a: a.sum(1) + a.mean(0).sum(), [(4, 3)]),
    "softmax": (lambda a: st.softmax(a, 1), [(4, 3)]),
    "log_softmax": (lambda a: st.log_softmax(a, 1), [(4, 3)]),
    "layer_norm": (lambda a, w, b: st.layer_norm(a, [3], w, b), [(4, 3), (3,), (3,)]),
    "exp_tanh_sigmoid": (lambda a: st.exp(a).tanh() + a.sigmoid(), [(4, 3)]),
    "cross_entropy": (lambda a: st.cross_entropy_loss(a, st.tensor([0, 2, 1, 0], device=a.device)), [(4, 3)]),
    "views_inplace": (lambda a: (a * 1).t().contiguous().mul_(2)[1:], [(4, 3)]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_cuda_gradients_equal_cpu(name):
    fn, shapes = CASES[name]
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]
    for got, want in zip(_grads(fn, arrays, "cuda"), _grads(fn, arrays, "cpu"), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, err_msg=name)


def test_backward_runs_on_the_forward_stream():
    s = cuda.Stream()
    x = st.randn(256, 256, device="cuda", dtype=st.float64, requires_grad=True)
    with cuda.stream(s):
        y = (x * x).sum()
    assert y.grad_fn.stream == s
    y.backward()
    cuda.synchronize()
    np.testing.assert_allclose(x.grad.numpy(force=True), 2 * x.detach().numpy(force=True), rtol=1e-12)



def _slow_chain_on(stream, x, n=6):
    """``x @ I @ I ...`` on ``stream``: float64 GEMMs slow enough (~ms) that a stream that does not
    wait for them reads their outputs before they are written."""
    eye = st.eye(x.shape[1], device="cuda", dtype=st.float64)
    with cuda.stream(stream):
        y = x
        for _ in range(n):
            y = y @ eye
        return y


def test_accumulation_into_existing_grad_waits_for_the_side_stream():
    # Note [Backward streams]: x is first used on the side stream, so its AccumulateGrad adds into
    # .grad there, after the GEMMs that produced the gradient; the caller's stream then waits for it
    s = cuda.Stream()
    x = st.randn(2048, 2048, device="cuda", dtype=st.float64, requires_grad=True)
    x.grad = st.full((2048, 2048), 2.0, device="cuda", dtype=st.float64)
    for _ in range(3):
        loss = _slow_chain_on(s, x).sum()
        loss.backward()
    cuda.synchronize()
    assert (x.grad.numpy(force=True) == 5.0).all()


def test_leaf_accumulates_on_the_stream_of_its_first_use():
    s = cuda.Stream()
    x = st.randn(64, 64, device="cuda", dtype=st.float64, requires_grad=True)
    cuda.synchronize()
    with cuda.stream(s):
        y = (x * 3.0).sum()
    acc = y.grad_fn.next_functions[0][0].next_functions[0][0]
    assert acc.name() == "torch::autograd::AccumulateGrad" and acc.stream == s
    y.backward()
    assert cuda.current_stream() != s
    cuda.current_stream().synchronize()  # the caller's stream waited for s: .grad is complete
    assert (x.grad.numpy(force=True) == 3.0).all()


def test_gradients_meeting_from_two_streams_are_summed_after_both():
    s1, s2 = cuda.Stream(), cuda.Stream()
    x = st.randn(2048, 2048, device="cuda", dtype=st.float64, requires_grad=True)
    a = _slow_chain_on(s1, x, n=12)
    b = _slow_chain_on(s2, x, n=1)
    (a.sum() + b.sum()).backward()
    cuda.synchronize()
    assert (x.grad.numpy(force=True) == 2.0).all()
