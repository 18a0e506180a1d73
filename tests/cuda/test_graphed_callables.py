"""make_graphed_callables and custom autograd Functions on a GPU: graphed forward + backward give
the eager results (outputs and every gradient, parameters included), in both the function and the
module form, and a training loop over a graphed module trains as the eager one does."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda
from strided import nn, optim
from strided.autograd import Function

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]


def _np(t):
    return t.detach().cpu().float().numpy()


def _rand(*shape, seed=0, requires_grad=False):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return st.tensor(a, device="cuda", requires_grad=requires_grad)


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


def test_custom_function_on_cuda_matches_cpu_and_runs_on_its_stream():
    a = np.random.default_rng(0).standard_normal(64).astype(np.float32)
    grads = {}
    for device in ("cpu", "cuda"):
        x = st.tensor(a, device=device, requires_grad=True)
        y = Exp.apply(x)
        (y * y).sum().backward()
        grads[device] = x.grad.numpy(force=True)
    np.testing.assert_allclose(grads["cuda"], grads["cpu"], rtol=1e-5)
    side = cuda.Stream()
    with cuda.stream(side):
        x = st.tensor(a, device="cuda", requires_grad=True)
        y = Exp.apply(x)
    assert y.grad_fn.stream == side  # Note [Backward streams]: backward runs where forward ran
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(force=True), np.exp(a), rtol=1e-5)


def test_graphed_function_matches_eager_over_new_inputs():
    w = _rand(32, 16, seed=1, requires_grad=True)  # a function's parameters are passed as arguments

    def fn(x, b, w):
        return (x @ w + b).tanh(), (x * 2).sum()

    x0, b0 = _rand(8, 32, requires_grad=True), _rand(16, seed=2, requires_grad=True)
    graphed = cuda.make_graphed_callables(fn, (x0, b0, w))
    for seed in (3, 4):
        x, b = _rand(8, 32, seed=seed, requires_grad=True), _rand(16, seed=seed + 10, requires_grad=True)
        w.grad = None
        y, s = graphed(x, b, w)
        assert y.grad_fn is not None
        (y.sum() + s).backward()
        got = [_np(y), _np(s), _np(x.grad), _np(b.grad), _np(w.grad)]
        xe, be = x.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()
        w.grad = None
        ye, se = fn(xe, be, w)
        (ye.sum() + se).backward()
        want = [_np(ye), _np(se), _np(xe.grad), _np(be.grad), _np(w.grad)]
        for g, e in zip(got, want):
            np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)


def test_graphed_module_trains_like_the_eager_module():
    def make():
        st.manual_seed(0)
        return nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 4)).cuda()

    eager, graphed = make(), make()
    sample = _rand(8, 16)
    cuda.make_graphed_callables(graphed, (sample,))
    opts = [optim.SGD(m.parameters(), lr=0.1) for m in (eager, graphed)]
    for step in range(5):
        x = _rand(8, 16, seed=100 + step)
        for m, opt in zip((eager, graphed), opts):
            opt.zero_grad(set_to_none=True)
            (m(x) ** 2).mean().backward()
            opt.step()
    for pe, pg in zip(eager.parameters(), graphed.parameters()):
        np.testing.assert_allclose(_np(pg), _np(pe), rtol=1e-4, atol=1e-6)
    graphed.eval()  # not the captured mode: the original forward runs
    with st.no_grad():
        np.testing.assert_allclose(_np(graphed(sample)), _np(eager(sample)), rtol=1e-4, atol=1e-6)


def test_two_callables_chained_share_one_pool():
    a, b = nn.Linear(8, 8).cuda(), nn.Linear(8, 2).cuda()
    x = _rand(4, 8, requires_grad=True)
    h = a(x).detach().requires_grad_()
    ga, gb = cuda.make_graphed_callables((a, b), ((x,), (h,)))
    assert ga is a and gb is b
    out = gb(ga(x))
    out.sum().backward()
    assert x.grad is not None and a.weight.grad is not None and b.weight.grad is not None


def test_bad_arguments_are_refused_with_clear_errors():
    lin = nn.Linear(4, 4).cuda()
    with pytest.raises(TypeError, match="sample_args for each callable must contain only Tensors"):
        cuda.make_graphed_callables(lin, (3,))
    with pytest.raises(ValueError, match="every sample arg must be a CUDA tensor"):
        cuda.make_graphed_callables(lin, (st.randn(2, 4),))
    lin.register_forward_hook(lambda m, i, o: None)
    with pytest.raises(RuntimeError, match="Modules must not have hooks registered"):
        cuda.make_graphed_callables(lin, (_rand(2, 4),))
    g = cuda.make_graphed_callables(lambda x: x * 2, (_rand(2, 4),))
    with pytest.raises(ValueError, match=r"argument 0 must match its sample arg"):
        g(_rand(3, 4))
    with st.autocast("cuda"):  # torch's refusal of the cast cache
        with pytest.raises(RuntimeError, match=r"^make_graphed_callables does not support the autocast caching\. "
                                               r"Please set `cache_enabled=False`\.$"):
            cuda.make_graphed_callables(lambda x: x * 2, (_rand(2, 4),))
    with st.autocast("cuda", cache_enabled=False):
        cuda.make_graphed_callables(lambda x: x * 2, (_rand(2, 4),))
