"""The CPU kernels' per-tensor NumPy view memo (Note [NumPy view memo]): every way strided changes a tensor's
metadata or its storage's memory in place makes the next kernel see the change."""

from __future__ import annotations

import numpy as np

import strided as st


def _used(t):
    """Run a kernel that reads ``t`` so its view is memoized."""
    return t.sum().item()


def test_resize_of_another_view_moves_the_storage_and_views_follow():
    x = st.zeros(4)
    y = x[:2]
    _used(y)
    x.resize_(10_000)  # grows the shared storage: a new buffer
    y.fill_(1.0)
    assert x[:2].tolist() == [1.0, 1.0]
    assert y.sum().item() == 2.0


def test_resize_of_the_tensor_itself():
    x = st.arange(4.0)
    _used(x)
    x.resize_(2, 3)
    x.fill_(5.0)
    assert x.shape == (2, 3) and x.sum().item() == 30.0


def test_shrinking_resize_keeps_the_buffer():
    x = st.arange(6.0)
    _used(x)
    x.resize_(2, 2)  # no new memory: only the view's shape says what changed
    assert (x + 0).tolist() == [[0.0, 1.0], [2.0, 3.0]]


def test_set_within_the_same_storage():
    x = st.arange(4.0)
    _used(x)
    x.set_(x.untyped_storage(), 1, (2,))
    assert (x * 1).tolist() == [1.0, 2.0]


def test_set_to_another_storage():
    x = st.zeros(3)
    _used(x)
    other = st.tensor([1.0, 2.0, 3.0, 4.0])
    x.set_(other.untyped_storage(), 1, (2,))
    assert x.tolist() == [2.0, 3.0]
    x.mul_(10)
    assert other.tolist() == [1.0, 20.0, 30.0, 4.0]


def test_in_place_views_restride():
    x = st.arange(6.0).reshape(1, 2, 3)
    _used(x)
    x.squeeze_(0)
    assert (x + 1).tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    x.t_()
    assert (x * 1).tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    x.as_strided_((2,), (2,), 1)
    assert x.clone().tolist() == [1.0, 3.0]


def test_data_setter_takes_the_other_tensor():
    x = st.zeros(2)
    _used(x)
    x.data = st.tensor([[7, 8, 9]], dtype=st.int64)
    assert (x + 1).tolist() == [[8, 9, 10]]
    y = st.arange(4.0)
    _used(y)
    y.data = y[1:3]  # the same buffer
    assert (y + 0).tolist() == [1.0, 2.0]


def test_share_memory_moves_the_buffer():
    x = st.zeros(8)
    v = x[2:4]
    _used(x)
    _used(v)
    x.share_memory_()
    v.add_(3.0)
    assert x.tolist() == [0.0, 0.0, 3.0, 3.0, 0.0, 0.0, 0.0, 0.0]
    assert x.is_shared()


def test_numpy_returns_an_array_of_its_own():
    x = st.arange(6.0)
    _used(x)
    a = x.numpy()
    a.flags.writeable = False  # the caller's array; the kernels' view stays writable
    x.add_(1.0)
    assert np.array_equal(a, np.arange(1.0, 7.0))
    assert x.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
