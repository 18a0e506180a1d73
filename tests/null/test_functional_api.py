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
    with pytest.raises(ValueError, match="must specify the equation string"):  # torch's class: ValueError
        st.einsum()
    with pytest.raises(ValueError, match="must specify the equation string"):
        st.einsum("i->i")


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


BAD_INPUTS = [
    (
        lambda: st.einsum(st.ones(2), st.ones(2)),
        TypeError,
        "sublist format expects a list of subscripts after operand 0",
    ),
    (lambda: st.einsum("ij", [[1, 2]]), TypeError, "expected Tensor as element 0 in argument 1, but got list"),
    (lambda: st.randperm(2.5), TypeError, "randperm\\(\\): argument 'n' \\(position 1\\) must be int, not float"),
    (
        lambda: st.nonzero([1, 2]),
        TypeError,
        "nonzero\\(\\): argument 'input' \\(position 1\\) must be Tensor, not list",
    ),
    (lambda: st.where([1, 2]), TypeError, "where\\(\\): argument 'condition' \\(position 1\\) must be Tensor"),
    (
        lambda: st.atan2(st.ones(2), "a"),
        TypeError,
        "atan2\\(\\): argument 'other' \\(position 2\\) must be Tensor, not str",
    ),
    (
        lambda: st.fmax(st.ones(2), 2),
        TypeError,
        "fmax\\(\\): argument 'other' \\(position 2\\) must be Tensor, not int",
    ),
    (lambda: st.nan_to_num(st.ones(2), nan="a"), TypeError, "nan_to_num\\(\\): argument 'nan' must be float, not str"),
    (
        lambda: st.nansum(st.ones(2), "a"),
        TypeError,
        "nansum\\(\\): argument 'dim' must be int or tuple of ints, not 'a'",
    ),
]


@pytest.mark.parametrize("call,exc,message", BAD_INPUTS, ids=range(len(BAD_INPUTS)))
def test_bad_inputs_name_the_op_and_value(call, exc, message):
    with pytest.raises(exc, match=message):
        call()


def test_torchs_parameter_names_are_taken_as_keywords():
    # found by comparing every torch / torch.nn.functional signature's parameter names with strided's
    x = st.tensor(np.arange(12.0, dtype=np.float32).reshape(3, 4))
    out = st.empty(3, 4)
    assert st.nn.functional.normalize(x, out=out) is out
    with pytest.raises(TypeError, match="normalize\\(\\): argument 'out' must be Tensor, not list"):
        st.nn.functional.normalize(x, out=[1])
    np.testing.assert_allclose(out.numpy(), (x / x.norm(dim=1, keepdim=True)).numpy(), rtol=1e-6)
    try:
        st.set_default_device(device="meta")
        assert st.ones(1).device.type == "meta"
    finally:
        st.set_default_device(None)
    state = st.get_rng_state()
    first = st.rand(3)
    st.set_rng_state(new_state=state)
    assert st.rand(3).tolist() == first.tolist()
    assert [t.tolist() for t in st.unravel_index(indices=st.tensor([5]), shape=(2, 3))] == [[1], [2]]

