"""``autograd.grad(..., is_grads_batched=True)``: a batch of vector-Jacobian products in one call
(Note [Batched gradients] in strided/autograd/backward_api.py)."""

import numpy as np
import pytest

import strided as st
from strided import autograd


def _np(t):
    return np.asarray(t.detach().numpy())


def test_jacobian_of_elementwise_square_is_diagonal():
    x = st.tensor([1.0, -2.0, 3.0], requires_grad=True)
    (jac,) = autograd.grad(x * x, x, st.eye(3), is_grads_batched=True)
    np.testing.assert_allclose(_np(jac), np.diag([2.0, -4.0, 6.0]))


def test_each_batch_entry_equals_its_own_vjp_and_graph_is_freed_at_the_end():
    rng = np.random.default_rng(0)
    w = st.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    x = st.tensor(rng.standard_normal(3), requires_grad=True)
    vs = st.tensor(rng.standard_normal((5, 4)))
    out = (w @ x).tanh()
    jw, jx = autograd.grad(out, (w, x), vs, is_grads_batched=True)
    assert jw.shape == (5, 4, 3) and jx.shape == (5, 3)
    for b in range(5):
        gw, gx = autograd.grad((w @ x).tanh(), (w, x), vs[b])
        np.testing.assert_allclose(_np(jw[b]), _np(gw), rtol=1e-12)
        np.testing.assert_allclose(_np(jx[b]), _np(gx), rtol=1e-12)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        autograd.grad(out, x, vs[0])


def test_retain_graph_keeps_the_graph():
    x = st.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    autograd.grad(y, x, st.eye(2), is_grads_batched=True, retain_graph=True)
    (again,) = autograd.grad(y, x, st.eye(2), is_grads_batched=True)
    np.testing.assert_allclose(_np(again), np.diag([2.0, 4.0]))


def test_several_outputs_and_unused_inputs():
    x = st.tensor([1.0, 2.0], requires_grad=True)
    unused = st.tensor([5.0], requires_grad=True)
    a, b = x * 2, (x * x).sum()
    ga = st.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    gb = st.tensor([1.0, 0.0, 2.0])
    with pytest.raises(RuntimeError, match="appears to not have been used"):
        autograd.grad((a, b), (x, unused), (ga, gb), is_grads_batched=True, retain_graph=True)
    gx, gu = autograd.grad((a, b), (x, unused), (ga, gb), is_grads_batched=True, allow_unused=True,
                           retain_graph=True)
    assert gu is None
    expected = 2 * _np(ga) + _np(gb)[:, None] * 2 * np.array([1.0, 2.0])
    np.testing.assert_allclose(_np(gx), expected)
    gx, gu = autograd.grad((a, b), (x, unused), (ga, gb), is_grads_batched=True, materialize_grads=True)
    np.testing.assert_allclose(_np(gu), [0.0])  # torch: zeros_like(input), no batch dimension


def test_create_graph_gives_differentiable_batched_gradients():
    x = st.tensor([1.0, 2.0], requires_grad=True)
    (jac,) = autograd.grad(x ** 3, x, st.eye(2), is_grads_batched=True, create_graph=True)
    (h,) = autograd.grad(jac.sum(), x)
    np.testing.assert_allclose(_np(h), [6.0, 12.0])


def test_bad_batched_grad_outputs_raise_torchs_errors():
    x = st.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="we interpret the first dimension of each grad_output as the batch"):
        autograd.grad(y, x, st.ones(2), is_grads_batched=True, retain_graph=True)
    with pytest.raises(RuntimeError, match="needs one batched grad_output per output"):
        autograd.grad(y, x, None, is_grads_batched=True, retain_graph=True)
    z = x * 3
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        autograd.grad((y, z), x, (st.ones(2, 2), st.ones(3, 2)), is_grads_batched=True)
    with pytest.raises(ValueError, match="allow_unused=False"):
        autograd.grad(y, x, st.ones(1, 2), is_grads_batched=True, allow_unused=False, materialize_grads=True)


def test_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    w0, x0, v0 = rng.standard_normal((3, 4)), rng.standard_normal((2, 3)), rng.standard_normal((6, 2, 4))
    tw, tx = torch.tensor(w0, requires_grad=True), torch.tensor(x0, requires_grad=True)
    tg = torch.autograd.grad(torch.nn.functional.gelu(tx @ tw), (tw, tx), torch.tensor(v0), is_grads_batched=True)
    sw, sx = st.tensor(w0, requires_grad=True), st.tensor(x0, requires_grad=True)
    sg = autograd.grad(st.nn.functional.gelu(sx @ sw), (sw, sx), st.tensor(v0), is_grads_batched=True)
    for a, b in zip(sg, tg):
        np.testing.assert_allclose(_np(a), b.numpy(), rtol=1e-10, atol=1e-12)
