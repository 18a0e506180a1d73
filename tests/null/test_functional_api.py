"""strided.functional: einsum's Python forms (variadic operands, one list, sublists), nonzero(as_tuple), where(cond)."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st


def _pair():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    return a, b, st.from_numpy(a), st.from_numpy(b)


def test_variadic_and_list_forms_agree_with_numpy():
    a, b, sa, sb = _pair()
    np.testing.assert_allclose(st.einsum("ij,jk->ik", sa, sb).numpy(), a @ b)
    np.testing.assert_allclose(st.einsum("ij,jk->ik", [sa, sb]).numpy(), a @ b)
    np.testing.assert_allclose(st.einsum("ij,jk", (sa, sb)).numpy(), a @ b)


def test_sublist_form():
    a, b, sa, sb = _pair()
    np.testing.assert_allclose(st.einsum(sa, [0, 1], sb, [1, 2], [0, 2]).numpy(), a @ b)
    np.testing.assert_allclose(st.einsum(sa, [0, 1], sb, [1, 2]).numpy(), a @ b)  # implicit output
    np.testing.assert_allclose(st.einsum(sa, [Ellipsis, 1], [Ellipsis]).numpy(), a.sum(1))


def test_sublist_label_out_of_range():
    _, _, sa, _ = _pair()
    with pytest.raises(ValueError, match=r"expected subscript to be within the range \[0, 52\), but got 52"):
        st.einsum(sa, [0, 52])


def test_no_arguments():
    with pytest.raises(TypeError, match="must specify the equation string"):
        st.einsum()


def test_gradient_flows_through_the_product():
    a = st.randn(2, 3, requires_grad=True)
    b = st.randn(3, 4, requires_grad=True)
    st.einsum("ij,jk->", a, b).backward()
    np.testing.assert_allclose(a.grad.numpy(), np.broadcast_to(b.detach().numpy().sum(1), (2, 3)), rtol=1e-5)


def test_nonzero_as_tuple_and_where_with_one_argument():
    x = st.tensor([[0.0, 1.5], [2.0, 0.0]])
    rows, cols = st.nonzero(x, as_tuple=True)
    assert rows.tolist() == [0, 1] and cols.tolist() == [1, 0]
    assert [t.tolist() for t in st.where(x)] == [[0, 1], [1, 0]]
    assert x.nonzero().tolist() == [[0, 1], [1, 0]] and st.argwhere(x).tolist() == [[0, 1], [1, 0]]
    assert [t.tolist() for t in st.tensor(3.0).nonzero(as_tuple=True)] == [[0]]  # 0-dim counts as 1-D
    assert [t.tolist() for t in st.tensor(0.0).nonzero(as_tuple=True)] == [[]]
    with pytest.raises(TypeError, match="expected both input and other, or neither"):
        st.where(x > 0, x)


def test_comparison_methods():
    a = st.tensor([1.0, 2.0, float("nan")])
    assert a.isclose(a + 1e-9, equal_nan=True).tolist() == [True, True, True]
    assert a.isclose(a).tolist() == [True, True, False]
    assert not a.allclose(a) and a.allclose(a, equal_nan=True)
    assert a[:2].equal(st.tensor([1.0, 2.0])) and not a[:2].equal(st.tensor([1.0, 3.0]))
