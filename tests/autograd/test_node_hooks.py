"""Node.register_hook / register_prehook: torch's hooks on a backward node (grad_fn)."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st


def _leaf():
    return st.tensor([1.0, 2.0, 3.0], requires_grad=True)


def test_post_hook_sees_inputs_and_outputs_and_can_replace_grad_inputs():
    x = _leaf()
    y = x * 2
    seen = []

    def hook(grad_inputs, grad_outputs):
        seen.append((grad_inputs[0].numpy().copy(), grad_outputs[0].numpy().copy()))
        return (grad_inputs[0] * 10,)

    handle = y.grad_fn.register_hook(hook)
    y.sum().backward()
    np.testing.assert_array_equal(seen[0][0], [2.0, 2.0, 2.0])  # d(sum)/dx before the hook
    np.testing.assert_array_equal(seen[0][1], [1.0, 1.0, 1.0])  # the gradient reaching y
    np.testing.assert_array_equal(x.grad.numpy(), [20.0, 20.0, 20.0])
    handle.remove()
    x.grad = None
    (x * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])


def test_prehook_can_replace_grad_outputs_and_runs_after_tensor_hooks():
    x = _leaf()
    y = x * 3
    order = []
    y.register_hook(lambda g: order.append("tensor") or g * 2)
    y.grad_fn.register_prehook(lambda gos: order.append("node") or (gos[0] + 1,))
    y.sum().backward()
    assert order == ["tensor", "node"]
    np.testing.assert_array_equal(x.grad.numpy(), [9.0, 9.0, 9.0])  # (1 * 2 + 1) * 3


def test_hook_returning_the_wrong_number_of_values_raises():
    x = _leaf()
    y = x * 2
    y.grad_fn.register_hook(lambda gi, go: (gi[0], gi[0]))
    with pytest.raises(RuntimeError, match="returned an incorrect number of values"):
        y.sum().backward()


def test_non_callable_hooks_are_rejected():
    y = _leaf() * 2
    with pytest.raises(TypeError, match="register_hook: expected a callable hook, got int"):
        y.grad_fn.register_hook(3)
    with pytest.raises(TypeError, match="register_prehook: expected a callable hook, got str"):
        y.grad_fn.register_prehook("x")


def test_post_accumulate_grad_hook_runs_after_grad_is_updated():
    """torch's register_post_accumulate_grad_hook: the hook sees the leaf with its new .grad, once per
    accumulation, in registration order; remove() unregisters; non-leaves and tensors without grad refuse."""
    w = st.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    h1 = w.register_post_accumulate_grad_hook(lambda t: seen.append(("a", t is w, t.grad.tolist())))
    w.register_post_accumulate_grad_hook(lambda t: seen.append(("b", t is w, t.grad.tolist())))
    (w * 3).sum().backward()
    (w * w).sum().backward()
    assert seen == [("a", True, [3.0, 3.0]), ("b", True, [3.0, 3.0]), ("a", True, [5.0, 7.0]), ("b", True, [5.0, 7.0])]
    h1.remove()
    seen.clear()
    w.sum().backward()
    assert seen == [("b", True, [6.0, 8.0])]
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf tensors"):
        (w * 2).register_post_accumulate_grad_hook(print)
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        st.ones(2).register_post_accumulate_grad_hook(print)
    with pytest.raises(TypeError, match="expected a callable hook, got int"):
        w.register_post_accumulate_grad_hook(3)


def test_post_accumulate_grad_hook_can_step_in_backward():
    """The optimizer-in-backward pattern: each parameter is updated (and its grad dropped) by its hook."""
    w = st.tensor([1.0, -1.0], requires_grad=True)

    def step(p):
        with st.no_grad():
            p.sub_(0.5 * p.grad)
        p.grad = None

    w.register_post_accumulate_grad_hook(step)
    (w * w).sum().backward()
    assert w.tolist() == [0.0, 0.0] and w.grad is None
