"""torch's ``_foreach_*`` functions (Note [Composite foreach]), against torch: values, result types (tuples
out of place, the updated list in place), the operand forms and the list checks."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided import foreach_more

torch = pytest.importorskip("torch")

_A = [np.array([0.5, -1.5, 2.25]), np.array([[0.75, 1.0], [-0.25, 3.5]])]
_B = [np.array([1.5, 0.5, 2.0]), np.array([[2.0, 0.5], [1.25, 0.75]])]


def _lists():
    return ([st.from_numpy(a.copy()) for a in _A], [torch.from_numpy(a.copy()) for a in _A],
            [st.from_numpy(b.copy()) for b in _B], [torch.from_numpy(b.copy()) for b in _B])


def _same(got, want):
    assert type(got) is type(want) and len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-12, atol=1e-12, equal_nan=True)


_SAFE_UNARY = [n for n in foreach_more._UNARY if n not in ("acos", "asin")] + ["acos", "asin"]


@pytest.mark.parametrize("name", foreach_more._UNARY)
def test_unary_in_and_out_of_place(name):
    x, t, _, _ = _lists()
    if name in ("acos", "asin", "atanh"):
        x, t = [a / 4 for a in x], [a / 4 for a in t]
    _same(getattr(st, f"_foreach_{name}")(x), getattr(torch, f"_foreach_{name}")(t))
    got, want = getattr(st, f"_foreach_{name}_")(x), getattr(torch, f"_foreach_{name}_")(t)
    assert got is x
    _same(got, want)


@pytest.mark.parametrize("name", foreach_more._BINARY)
@pytest.mark.parametrize("form", ["scalar", "scalar list", "tensor list", "tensor"])
def test_binary_operand_forms(name, form):
    x, t, y, u = _lists()
    if name == "pow":
        x, t = [a.abs() for a in x], [a.abs() for a in t]
    other_s, other_t = {"scalar": (1.5, 1.5), "scalar list": ([1.5, -0.5], [1.5, -0.5]), "tensor list": (y, u),
                        "tensor": (st.tensor(2.0, dtype=st.float64), torch.tensor(2.0, dtype=torch.float64))}[form]
    try:
        want = getattr(torch, f"_foreach_{name}")(t, other_t)
    except (RuntimeError, TypeError) as e:  # an overload torch lacks: strided may offer it, not required
        pytest.skip(f"torch has no {name} for a {form}: {e}")
    _same(getattr(st, f"_foreach_{name}")(x, other_s), want)
    got = getattr(st, f"_foreach_{name}_")(x, other_s)
    assert got is x
    _same(got, getattr(torch, f"_foreach_{name}_")(t, other_t))


def test_alpha_pow_of_a_scalar_and_ternary_forms():
    x, t, y, u = _lists()
    _same(st._foreach_sub(x, y, alpha=2), torch._foreach_sub(t, u, alpha=2))
    _same(st._foreach_add(x, y, alpha=-1.5), torch._foreach_add(t, u, alpha=-1.5))
    _same(st._foreach_pow(2.0, x), torch._foreach_pow(2.0, t))
    _same(st._foreach_addcmul(x, x, y, [1.0, 2.0]), torch._foreach_addcmul(t, t, u, [1.0, 2.0]))
    _same(st._foreach_addcmul(x, x, y, 0.5), torch._foreach_addcmul(t, t, u, 0.5))
    _same(st._foreach_addcdiv(x, x, y, st.tensor([1.0, -2.0], dtype=st.float64)),
          torch._foreach_addcdiv(t, t, u, torch.tensor([1.0, -2.0], dtype=torch.float64)))
    _same(st._foreach_lerp(x, y, 0.25), torch._foreach_lerp(t, u, 0.25))
    _same(st._foreach_lerp(x, y, y), torch._foreach_lerp(t, u, u))


def test_reductions_products_and_copies():
    x, t, y, u = _lists()
    for ord_ in (2, 1, 3, float("inf")):
        _same(st._foreach_norm(x, ord_), torch._foreach_norm(t, ord_))
    xf, tf = [a.float() for a in x], [a.float() for a in t]
    _same(st._foreach_norm(xf, 2, dtype=st.float64), torch._foreach_norm(tf, 2, dtype=torch.float64))
    with pytest.raises(RuntimeError, match=r"the dtype of the input \(Double\) should be convertible without"):
        st._foreach_norm(x, 2, dtype=st.float32)
    _same(st._foreach_powsum(x, 3), torch._foreach_powsum(t, 3))
    _same(st._foreach_max(x), torch._foreach_max(t))
    m = [np.arange(4.0).reshape(2, 2)]
    _same(st._foreach_mm([st.from_numpy(m[0])], [st.from_numpy(m[0])]),
          torch._foreach_mm([torch.from_numpy(m[0])], [torch.from_numpy(m[0])]))
    clones = st._foreach_clone(x)
    assert all(c._storage is not a._storage for c, a in zip(clones, x))
    got = st._foreach_copy_(x, y)
    assert got is x
    _same(got, torch._foreach_copy_(t, u))


def test_fused_in_place_ops_return_their_list_as_torch():
    x, t, y, u = _lists()
    got = st._foreach_add_(x, 1.0)
    assert got is x and type(st._foreach_add(x, 1.0)) is tuple
    _same(got, torch._foreach_add_(t, 1.0))
    assert st._foreach_zero_(x) is x and float(x[0].abs().sum()) == 0


def test_list_checks_in_torchs_words():
    x, _, y, _ = _lists()
    with pytest.raises(RuntimeError, match="Tensor list must have at least one tensor."):
        st._foreach_abs([])
    with pytest.raises(RuntimeError, match="Tensor lists must have the same number of tensors, got 2 and 1"):
        st._foreach_mul(x, y[:1])
    with pytest.raises(RuntimeError, match="Tensor list must have same number of elements as scalar list."):
        st._foreach_mul(x, [1.0])
    with pytest.raises(TypeError, match=r"_foreach_exp\(\): argument 'self' \(position 1\) must be tuple of Tensors"):
        st._foreach_exp(x[0])  # a tensor is not a list of tensors (iterating it would run on its rows)
    with pytest.raises(TypeError, match=r"_foreach_norm\(\): argument 'self' \(position 1\) must be tuple of"):
        st._foreach_norm([x[0], 2.0])


def test_gradients_flow_through_the_loops():
    a = [np.array([0.5, 1.5]), np.array([2.0])]
    xs = [st.from_numpy(v.copy()).requires_grad_() for v in a]
    ts = [torch.from_numpy(v.copy()).requires_grad_() for v in a]
    sum(v.sum() for v in st._foreach_mul(st._foreach_exp(xs), 3.0)).backward()
    sum(v.sum() for v in torch._foreach_mul(torch._foreach_exp(ts), 3.0)).backward()
    for x, t in zip(xs, ts):
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize("name", ["addcdiv_", "addcmul_"])
@pytest.mark.parametrize("form", ["value=", "positional", "scalar list", "tensor", "default"])
def test_in_place_pointwise_forms_the_fused_op_lacks(name, form):
    # torch's _foreach_addcdiv_ / _foreach_addcmul_ take a number (also as value=), a list of numbers or a tensor
    # of them; strided's YAML registers one form each, the rest run the per-tensor loop
    rng = np.random.default_rng(7)
    a = [rng.standard_normal(4) for _ in range(3)]
    b = [rng.standard_normal(4) for _ in range(3)]
    c = [rng.random(4) + 1 for _ in range(3)]
    values = [0.1, -0.2, 0.3]
    args = {"value=": ((), {"value": -0.3}), "positional": ((-0.3,), {}), "scalar list": ((values,), {}),
            "tensor": ((st.tensor(values, dtype=st.float64),), {}), "default": ((), {})}[form]
    per = {"value=": [-0.3] * 3, "positional": [-0.3] * 3, "scalar list": values, "tensor": values,
           "default": [1.0] * 3}[form]
    ps = [st.tensor(x) for x in a]
    out = getattr(st, "_foreach_" + name)(ps, [st.tensor(x) for x in b], [st.tensor(x) for x in c], *args[0],
                                          **args[1])
    assert out is ps
    for p, x, y, z, v in zip(ps, a, b, c, per):
        expected = x + v * (y / z if name == "addcdiv_" else y * z)
        np.testing.assert_allclose(p.numpy(), expected, rtol=1e-12)


def test_in_place_lerp_with_tensor_weights():
    a, b, w = ([st.tensor([1.0, 2.0]), st.tensor([3.0])] for _ in range(3))
    w = [st.tensor([0.25, 0.5]), st.tensor([1.0])]
    out = st._foreach_lerp_(a, [st.tensor([3.0, 4.0]), st.tensor([5.0])], w)
    assert out is a and a[0].tolist() == [1.5, 3.0] and a[1].tolist() == [5.0]


def test_norm_takes_a_0_dim_tensor_as_ord():
    # torch's parser reads a 0-dim tensor for the Scalar ord
    got = st._foreach_norm([st.tensor([3.0, 4.0]), st.tensor([1.0, -1.0])], st.tensor(1))
    assert [g.item() for g in got] == [7.0, 2.0]


def test_nonsense_operands_are_refused_by_type():
    ps = [st.ones(2), st.ones(2)]
    with pytest.raises(TypeError, match="must be a number, a tensor, or a list of numbers or tensors, not str"):
        st._foreach_addcdiv_(ps, [st.ones(2)] * 2, [st.ones(2)] * 2, value="x")
    with pytest.raises(TypeError, match="not str"):
        st._foreach_lerp_(ps, [st.ones(2)] * 2, "w")
    with pytest.raises(TypeError, match="not str"):
        st._foreach_add(ps, "x")
    with pytest.raises(TypeError, match=r"_foreach_norm\(\): argument 'ord' \(position 2\) must be Number, not Tensor"):
        st._foreach_norm(ps, st.ones(2))
    assert ps[0].tolist() == [1.0, 1.0]  # nothing was written
