"""Tensor API details that follow torch: ``Tensor.where``'s argument order, ``new_*`` sizes,
``copy.deepcopy``, ``max(a, b)``, and tensor() refusing integers that do not fit."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import strided as st


def test_tensor_where_is_where_condition_self_other():
    # torch: x.where(cond, y) == where(cond, x, y); a bool self must not be taken for the condition
    out = st.tensor([True, False]).where(st.tensor([True, True]), 0.5)
    np.testing.assert_array_equal(out.numpy(), [1.0, 0.0])
    out = st.tensor([1.0, 2.0]).where(st.tensor([True, False]), st.tensor([7.0, 8.0]))
    np.testing.assert_array_equal(out.numpy(), [1.0, 8.0])


def test_max_min_of_two_tensors_and_aliases():
    a, b = st.tensor([1.0, 5.0, float("nan")]), st.tensor([3.0, 1.0, 0.0])
    np.testing.assert_array_equal(st.max(a, b).numpy(), [3.0, 5.0, np.nan])
    np.testing.assert_array_equal(a.min(b).numpy(), [1.0, 1.0, np.nan])
    assert a.max().item() != a.max().item()  # nan propagates; the one-tensor overload still works
    np.testing.assert_array_equal(st.square(st.tensor([2, -3])).numpy(), [4, 9])
    x = st.arange(6.0, requires_grad=True)
    y = x.view_as(st.empty(2, 3))
    assert y.shape == (2, 3) and y._base is x
    assert x.reshape_as(st.empty(3, 2)).shape == (3, 2)
    assert x.type_as(st.tensor([1])).dtype is st.int64
    x.square().sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * np.arange(6.0))


def test_new_factories_take_sizes_as_ints_or_one_sequence():
    x = st.ones(2, dtype=st.float64)
    for t in (x.new_zeros(2, 3), x.new_zeros((2, 3)), x.new_ones([2, 3]), x.new_empty(2, 3)):
        assert t.shape == (2, 3) and t.dtype is st.float64
    assert x.new_zeros(()).shape == ()
    np.testing.assert_array_equal(x.new_ones(2).numpy(), [1.0, 1.0])


def test_deepcopy_of_leaves_and_of_modules_with_buffers():
    x = st.ones(3, requires_grad=True)
    x.grad = st.full((3,), 2.0)
    y = copy.deepcopy(x)
    assert y is not x and y.requires_grad and y.is_leaf and y.grad is not x.grad
    y.detach().add_(1)
    np.testing.assert_array_equal(x.detach().numpy(), [1.0] * 3)  # no shared memory
    np.testing.assert_array_equal(y.grad.numpy(), [2.0] * 3)
    pair = copy.deepcopy([x, x])
    assert pair[0] is pair[1]  # the memo keeps one copy per tensor
    m = st.nn.Linear(2, 2)
    m.register_buffer("steps", st.zeros(1))
    m2 = copy.deepcopy(m)
    assert m2.steps is not m.steps and m2.weight is not m.weight
    np.testing.assert_array_equal(m2.weight.detach().numpy(), m.weight.detach().numpy())
    with pytest.raises(RuntimeError, match="Only Tensors created explicitly by the user"):
        copy.deepcopy(x * 2)


def test_tensor_refuses_python_integers_that_do_not_fit():
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        st.tensor([2 ** 63])
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        st.tensor(2 ** 64)
    with pytest.raises(RuntimeError, match="value cannot be converted to type int8 without overflow"):
        st.tensor([1, 128], dtype=st.int8)
    with pytest.raises(RuntimeError, match="value cannot be converted to type uint8 without overflow"):
        st.tensor([256], dtype=st.uint8)
    assert st.tensor([-1], dtype=st.uint8).item() == 255  # torch's c10 rule: unsigned takes -max..max
    assert st.tensor([2 ** 63 - 1]).item() == 2 ** 63 - 1
    assert st.tensor([-(2 ** 63)]).item() == -(2 ** 63)
