"""autograd.Variable as torch keeps it for old code: every tensor is one, a call makes a leaf over the data."""

from __future__ import annotations

import pytest

import strided as st
from strided.autograd import Variable


def test_variable_is_a_leaf_over_the_data_and_every_tensor_is_one():
    x = st.ones(2, requires_grad=True)
    y = x * 2
    v = Variable(y, requires_grad=True)
    assert v is not y and v.grad_fn is None and v.requires_grad and v.data_ptr() == y.data_ptr()
    assert not Variable(y).requires_grad
    assert isinstance(y, Variable) and not isinstance(2.0, Variable)
    v.sum().backward()
    assert v.grad.tolist() == [1.0, 1.0] and x.grad is None  # a leaf: nothing reaches x
    assert Variable().shape == (0,)


def test_variable_refusals_and_warning_in_torchs_words():
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
        Variable([1, 2])
    with pytest.warns(UserWarning, match="volatile was removed and now has no effect"):
        Variable(st.ones(1), volatile=True)
