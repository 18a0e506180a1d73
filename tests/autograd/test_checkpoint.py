"""strided.utils.checkpoint (Note [Non-reentrant checkpoint], Note [Reentrant checkpoint]): the same
outputs and gradients as running the block plainly, activations not kept, torch's errors."""

from __future__ import annotations

import gc
import warnings
import weakref

import numpy as np
import pytest

import strided as st
import strided.nn as nn
from strided.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential


def _model():
    st.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Dropout(0.3), nn.Linear(16, 8), nn.LayerNorm(8))


def _grads(model, x, run):
    """Output and gradients (x, then every parameter) of sum(run(x)^2) with a fixed dropout seed."""
    for p in model.parameters():
        p.grad = None
    x.grad = None
    st.manual_seed(1)
    y = run(x)
    (y * y).sum().backward()
    return y.detach().numpy(), [x.grad.numpy()] + [p.grad.numpy() for p in model.parameters()]


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_same_output_and_gradients_as_the_plain_block_with_dropout(use_reentrant):
    m = _model()
    x = st.randn(4, 8, requires_grad=True)
    y_ref, g_ref = _grads(m, x, m)
    y, g = _grads(m, x, lambda t: checkpoint(m, t, use_reentrant=use_reentrant))
    np.testing.assert_array_equal(y, y_ref)  # the recomputation draws the same dropout mask
    for a, b in zip(g, g_ref):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_without_preserved_rng_the_recomputed_mask_differs(use_reentrant):
    m = _model()
    x = st.randn(4, 8, requires_grad=True)
    _, g_ref = _grads(m, x, m)
    _, g = _grads(m, x, lambda t: checkpoint(m, t, use_reentrant=use_reentrant, preserve_rng_state=False))
    assert not all(np.allclose(a, b) for a, b in zip(g, g_ref))


def test_checkpoint_sequential_matches_and_checks_segments():
    m = _model()
    x = st.randn(4, 8, requires_grad=True)
    y_ref, g_ref = _grads(m, x, m)
    for segments in (1, 2, 5):
        y, g = _grads(m, x, lambda t, s=segments: checkpoint_sequential(m, s, t, use_reentrant=False))
        np.testing.assert_array_equal(y, y_ref)
        for a, b in zip(g, g_ref):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match="segments must be an int in"):
        checkpoint_sequential(m, 0, x, use_reentrant=False)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
        checkpoint_sequential(m, 2, x, use_reentrant=False, foo=1)
    with pytest.raises(ValueError, match="functions must not be empty"):
        checkpoint_sequential([], 1, x, use_reentrant=False)


def test_activations_are_not_kept_until_backward():
    x = st.randn(64, requires_grad=True)
    refs = []

    def block(t):
        h = t.exp()  # saved by the mul below when not checkpointed
        refs.append(weakref.ref(h))
        return (h * h).sum()

    y_plain = block(x)
    gc.collect()
    assert refs[0]() is not None
    y = checkpoint(block, x, use_reentrant=False)
    gc.collect()
    assert refs[1]() is None  # the forward's activation is gone
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(2 * x.detach().numpy()), rtol=1e-5)
    del y_plain


def test_non_reentrant_supports_grad_inputs_kwargs_and_params_only_graphs():
    m = _model().eval()
    x = st.randn(4, 8, requires_grad=True)
    y = checkpoint(m, x, use_reentrant=False)
    (gx,) = st.autograd.grad(y.sum(), [x])
    y2 = m(x)
    (gx2,) = st.autograd.grad(y2.sum(), [x])
    np.testing.assert_allclose(gx.numpy(), gx2.numpy(), rtol=1e-6)
    # no input requires grad: the parameters still get gradients (not so with use_reentrant=True)
    xi = x.detach()
    checkpoint(m, xi, use_reentrant=False).sum().backward()
    assert all(p.grad is not None for p in m.parameters())

    def scaled(t, *, scale):
        return (t * scale).sum()

    x.grad = None
    checkpoint(scaled, x, scale=3.0, use_reentrant=False).backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full((4, 8), 3.0))


def test_retained_graph_recomputes_for_a_second_backward():
    x = st.randn(5, requires_grad=True)
    calls = [0]

    def block(t):
        calls[0] += 1
        return (t.sin() * t).sum()

    y = checkpoint(block, x, use_reentrant=False)
    y.backward(retain_graph=True)
    g1 = x.grad.numpy().copy()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * g1, rtol=1e-6)
    assert calls[0] == 3  # the forward and one recomputation per backward


def test_nested_checkpoints():
    x = st.randn(6, requires_grad=True)

    def inner(t):
        return t.tanh() * t

    def outer(t):
        return checkpoint(inner, t.exp(), use_reentrant=False).sin().sum()

    checkpoint(outer, x, use_reentrant=False).backward()
    got = x.grad.numpy()
    x.grad = None
    outer_plain = (x.exp().tanh() * x.exp()).sin().sum()
    outer_plain.backward()
    np.testing.assert_allclose(got, x.grad.numpy(), rtol=1e-5)


def test_errors_and_warnings_in_torch_words():
    m = _model().eval()
    x = st.randn(4, 8, requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        checkpoint(m, x)
    assert any("use_reentrant parameter should be passed explicitly" in str(i.message) for i in w)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        checkpoint(m, x.detach(), use_reentrant=True)
    assert any("None of the inputs have requires_grad=True" in str(i.message) for i in w)
    y = checkpoint(m, x, use_reentrant=True)
    with pytest.raises(RuntimeError, match="incompatible with .grad"):
        st.autograd.grad(y.sum(), [x])
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        checkpoint(m, x, use_reentrant=True, scale=1)
    with pytest.raises(ValueError, match="determinism_check should be one of"):
        checkpoint(m, x, use_reentrant=False, determinism_check="strict")
    with pytest.raises(TypeError, match="function must be callable"):
        checkpoint(3, x, use_reentrant=False)

    x2 = x * 1
    y = checkpoint(m, x2, use_reentrant=False)
    with st.no_grad():
        x2.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()

    n = [4]

    def shrinking(t):
        n[0] -= 1
        return (t[: n[0]] * 2).exp().sum()

    y = checkpoint(shrinking, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="different metadata than during the forward pass"):
        y.backward()

    def varying(t):
        n[0] += 1
        out = t.exp()
        for _ in range(n[0] % 2):
            out = out.exp()
        return out.sum()

    y = checkpoint(varying, x, use_reentrant=False, early_stop=False)
    with pytest.raises(CheckpointError, match="A different number of tensors was saved"):
        y.backward()


def test_decorator_form_and_context_fn():
    entered = []

    class Mark:
        def __init__(self, name):
            self.name = name

        def __enter__(self):
            entered.append(self.name)

        def __exit__(self, *exc):
            return False

    @checkpoint(use_reentrant=False, context_fn=lambda: (Mark("forward"), Mark("recompute")))
    def block(t):
        return (t * t).sum()

    x = st.randn(3, requires_grad=True)
    block(x).backward()
    assert entered == ["forward", "recompute"]
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy(), rtol=1e-6)


def test_matches_torch_gradients():
    torch = pytest.importorskip("torch")
    from torch.utils.checkpoint import checkpoint as t_checkpoint

    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 6)).astype(np.float32)
    w = rng.standard_normal((5, 6)).astype(np.float32)

    def run(lib, ckpt):
        xs, ws = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        y = ckpt(lambda a: lib.nn.functional.gelu(lib.nn.functional.linear(a, ws)).softmax(-1), xs,
                 use_reentrant=False)
        (y * y).sum().backward()
        return xs.grad.detach().numpy(), ws.grad.detach().numpy()

    for a, b in zip(run(st, checkpoint), run(torch, t_checkpoint)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
