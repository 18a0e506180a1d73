"""derivatives.yaml: multi-input formulas (``input, weight, bias: f(..., grad_input_mask)``) and the
fused formulas of GPT's ops (layer_norm, tanh gelu, cross_entropy) against gradcheck and torch's
op count budget."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided.autograd import gradcheck
from strided.utils.profiler import count_ops

_MULTI = """\
- name: addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor
  self: grad
  tensor1, tensor2: (grad * tensor2 * value, None) if grad_input_mask == (True, False) else (grad, grad)
"""


def test_multi_input_formula_gets_the_mask(tmp_path):
    from strided.autograd.derivatives import load_derivatives

    path = tmp_path / "derivatives.yaml"
    path.write_text(_MULTI)
    (info,) = load_derivatives(str(path)).values()
    assert [name for name, _, _ in info.inputs] == ["self", "tensor1", "tensor2"]
    assert [name for name, _, _ in info.saved] == ["tensor2", "value"]
    x = st.ones(2)
    out = info.fn([x], (False, True, False), x * 2, 3.0)
    assert out[0] is None and out[2] is None
    np.testing.assert_array_equal(out[1].numpy(), [6.0, 6.0])
    assert info.fn([x], (False, False, False), x, 3.0) == (None, None, None)
    out = info.fn([x], (True, True, True), x, 3.0)
    assert out[0] is x and out[1] is x and out[2] is x


@pytest.mark.parametrize("body, message", [
    ("- name: mul.Tensor(Tensor self, Tensor other) -> Tensor\n  self, oops: (grad, grad)\n",
     r"derivatives.yaml:1: 'oops' is not an argument of mul.Tensor"),
    ("- name: mul.Tensor(Tensor self, Tensor other) -> Tensor\n  self: grad\n  other, self: (grad, grad)\n",
     r"derivatives.yaml:1: second formula for 'self'"),
])
def test_multi_input_formula_errors(tmp_path, body, message):
    from strided.autograd.derivatives import load_derivatives
    from strided.ops.schema import SchemaError

    path = tmp_path / "derivatives.yaml"
    path.write_text(body)
    with pytest.raises(SchemaError, match=message):
        load_derivatives(str(path))


def _r(*shape, grad=True):
    return st.randn(*shape, dtype=st.float64).requires_grad_(grad)


@pytest.mark.parametrize("mask", [(True, True, True), (True, False, False), (False, True, False),
                                  (False, False, True), (False, True, True)])
def test_layer_norm_each_subset_of_inputs(mask):
    x, w, b = _r(2, 3, 4, grad=mask[0]), _r(4, grad=mask[1]), _r(4, grad=mask[2])
    assert gradcheck(lambda x, w, b: st.nn.functional.layer_norm(x, (4,), w, b), (x, w, b))


def test_layer_norm_without_affine_and_over_two_dims():
    assert gradcheck(lambda x: st.nn.functional.layer_norm(x, (3, 4)), (_r(2, 3, 4),))
    assert gradcheck(lambda x, w: st.nn.functional.layer_norm(x, (3, 4), w), (_r(2, 3, 4), _r(3, 4)))


def test_layer_norm_backward_is_one_fused_op():
    x, w, b = _r(8, 16), _r(16), _r(16)
    y = st.nn.functional.layer_norm(x, (16,), w, b)
    with count_ops() as stats:
        y.backward(st.randn(8, 16, dtype=st.float64))
    calls = {op: n for (op, _), n in stats.calls.items()}
    assert calls["aten::_layer_norm_backward.default"] == 1 and "aten::var.correction" not in calls


def test_layer_norm_double_backward_uses_the_decomposition():
    x, w, b = _r(8, 16), _r(16), _r(16)
    y = st.nn.functional.layer_norm(x, (16,), w, b)
    with count_ops() as stats:
        gx, = st.autograd.grad(y, (x,), st.randn(8, 16, dtype=st.float64), create_graph=True)
    calls = {op for (op, _), n in stats.calls.items()}
    assert "aten::_layer_norm_backward.default" not in calls and "aten::rsqrt.default" in calls
    (gx * gx).sum().backward()  # the decomposition recorded a graph: second derivatives reach w
    assert w.grad is not None and float(w.grad.abs().sum()) > 0


@pytest.mark.parametrize("approximate", ["tanh", "none"])
def test_gelu_gradcheck(approximate):
    x = st.tensor([-3.0, -1.0, -0.1, 0.0, 0.2, 1.5, 4.0], dtype=st.float64, requires_grad=True)
    assert gradcheck(lambda t: st.nn.functional.gelu(t, approximate=approximate), (x,))


def test_gelu_tanh_matches_torch():
    torch = pytest.importorskip("torch")
    xs = np.linspace(-5, 5, 41)
    x = st.tensor(xs, dtype=st.float64, requires_grad=True)
    st.nn.functional.gelu(x, approximate="tanh").sum().backward()
    tx = torch.tensor(xs, dtype=torch.float64, requires_grad=True)
    torch.nn.functional.gelu(tx, approximate="tanh").sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape, tshape", [((5, 4), (5,)), ((4,), ()), ((3, 4, 2), (3, 2))])
@pytest.mark.parametrize("ignore", [True, False])
def test_cross_entropy_index_targets_match_torch(reduction, shape, tshape, ignore):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    logits = rng.standard_normal(shape)
    target = rng.integers(0, 4, tshape)
    if ignore and target.ndim:
        target.flat[0] = -100
    gout = rng.standard_normal(tshape) if reduction == "none" else np.array(1.7)
    x = st.tensor(logits, dtype=st.float64, requires_grad=True)
    loss = st.nn.functional.cross_entropy(x, st.tensor(target), reduction=reduction)
    loss.backward(st.tensor(gout, dtype=st.float64))
    tx = torch.tensor(logits, requires_grad=True)
    tloss = torch.nn.functional.cross_entropy(tx, torch.tensor(target), reduction=reduction)
    tloss.backward(torch.tensor(gout))
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_cross_entropy_index_gradcheck_and_double_backward():
    x = _r(3, 5)
    target = st.tensor([1, 4, 0])
    assert gradcheck(lambda t: st.nn.functional.cross_entropy(t, target), (x,))
    (g,) = st.autograd.grad(st.nn.functional.cross_entropy(x, target), x, create_graph=True)
    (gg,) = st.autograd.grad((g * g).sum(), x)
    assert gg.shape == x.shape
