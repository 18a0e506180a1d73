"""``Tensor.data = other`` (torch's set_data) and nn.utils.parameters_to_vector / vector_to_parameters."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.nn as nn
from strided.nn.utils import parameters_to_vector, vector_to_parameters


def test_data_setter_swaps_the_tensor_and_keeps_autograd_state():
    p = nn.Parameter(st.zeros(2, 2))
    (p * 3).sum().backward()
    v = st.arange(6.0)
    p.data = v[:4].view(2, 2)
    assert p._storage is v._storage and p.requires_grad and p.is_leaf
    np.testing.assert_array_equal(p.detach().numpy(), [[0, 1], [2, 3]])
    np.testing.assert_array_equal(p.grad.numpy(), np.full((2, 2), 3.0))  # .grad stays
    p.data = st.zeros(5)
    assert tuple(p.shape) == (5,)
    p.grad = None
    (p * 2).sum().backward()  # usable in a new graph with the new shape
    np.testing.assert_array_equal(p.grad.numpy(), np.full(5, 2.0))
    a = st.ones(3, requires_grad=True)
    b = a * 2
    b.data = st.zeros(3)
    assert b.grad_fn is not None and b.requires_grad  # a non-leaf keeps its history, as torch


def test_data_setter_errors_in_torch_words():
    p = nn.Parameter(st.zeros(2))
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got int"):
        p.data = 3
    with pytest.raises(RuntimeError, match="must be floating point or complex dtype"):
        p.data = st.zeros(2, dtype=st.int64)
    t = st.zeros(2)
    t.data = st.zeros(3, dtype=st.int64)  # no grad: any dtype
    assert t.dtype is st.int64


def test_parameters_round_trip_through_one_vector():
    st.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2))
    vec = parameters_to_vector(m.parameters())
    assert tuple(vec.shape) == (sum(p.numel() for p in m.parameters()),)
    np.testing.assert_array_equal(vec[:12].detach().numpy(), m[0].weight.detach().numpy().reshape(-1))
    vector_to_parameters(vec * 2, m.parameters())
    np.testing.assert_allclose(parameters_to_vector(m.parameters()).detach().numpy(), 2 * vec.detach().numpy())
    assert all(p.requires_grad and p.is_leaf for p in m.parameters())
    with pytest.raises(TypeError, match="expected strided.Tensor, but got: list"):
        vector_to_parameters([1.0], m.parameters())
    with pytest.raises(TypeError, match="expected an iterable of strided.Tensor parameters, but got: float"):
        parameters_to_vector([1.0])
    with pytest.raises(TypeError, match="Found two parameters on different devices"):
        parameters_to_vector([st.zeros(2), st.zeros(2, device="meta")])
