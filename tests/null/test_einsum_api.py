"""strided.einsum's Python forms: variadic operands, one list, and torch's sublist format."""

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
