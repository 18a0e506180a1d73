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
