"""Autograd engine semantics (CPU): leaves, accumulation, retain_graph, hooks, grad modes, in-place."""

from __future__ import annotations

import re
import threading

import numpy as np
import pytest

import strided as st
from strided import autograd


def leaf(*values):
    return st.tensor(list(values), dtype=st.float64, requires_grad=True)


def close(t, expected):
    np.testing.assert_allclose(t.numpy(force=True), np.asarray(expected, dtype=np.float64), rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------- leaves, grad_fn, accumulation
def test_leaves_and_non_leaves():
    x = leaf(1.0, 2.0)
    y = x * 2
    assert x.is_leaf and x.grad_fn is None and x.requires_grad
    assert not y.is_leaf and y.requires_grad and y.grad_fn.name() == "MulBackward0"  # x * 2 is torch's mul.Tensor (Note [Node names])
    assert (x + x).grad_fn.name() == "AddBackward0"
    z = st.tensor([1.0])
    assert z.is_leaf and not z.requires_grad and (z * 2).grad_fn is None


def test_backward_accumulates_into_leaves():
    x = leaf(1.0, 2.0, 3.0)
    (x * x).sum().backward()
    close(x.grad, [2, 4, 6])
    (x * 3).sum().backward()
    close(x.grad, [5, 7, 9])
    x.grad = None
    x.sum().backward()
    close(x.grad, [1, 1, 1])


def test_shared_gradient_is_not_aliased_between_leaves():
    a, b = leaf(1.0, 2.0), leaf(3.0, 4.0)
    (a + b).sum().backward()
    a.grad.mul_(10)
    close(b.grad, [1, 1])


def test_broadcast_and_dtype_are_reduced_back():
    x = leaf(1.0, 2.0)
    w = st.ones(3, 2, dtype=st.float32, requires_grad=True)
    (x * w).sum().backward()
    close(x.grad, [3, 3])
    assert w.grad.dtype is st.float32 and w.grad.shape == (3, 2)


def test_non_scalar_backward_needs_a_gradient():
    x = leaf(1.0, 2.0)
    y = x * 2
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        y.backward()
    y.backward(st.tensor([1.0, 10.0], dtype=st.float64))
    close(x.grad, [2, 20])


def test_backward_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        st.tensor([1.0]).sum().backward()


def test_retain_graph():
    x = leaf(1.0, 2.0)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    close(x.grad, [4, 8])
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_grad_assignment_checks():
    x = leaf(1.0, 2.0)
    x.grad = st.zeros(2, dtype=st.float64)
    with pytest.raises(RuntimeError, match=re.escape("attempting to assign a gradient of size '[3]' to a tensor of "
                                                      "size '[2]'")):  # torch 2.14's words
        x.grad = st.zeros(3, dtype=st.float64)
    with pytest.raises(RuntimeError, match="attempting to assign a gradient with dtype 'float' to a tensor with "
                                           "grad_dtype 'Double'"):
        x.grad = st.zeros(2, dtype=st.float32)
    del x.grad
    assert x.grad is None


# ---------------------------------------------------------------------- hooks, retain_grad
def test_hooks_on_leaf_and_non_leaf():
    x = leaf(1.0, 2.0)
    seen = []
    y = x * 3
    handle = y.register_hook(lambda g: g * 2)
    x.register_hook(lambda g: seen.append(g.tolist()))
    y.sum().backward()
    assert seen == [[6.0, 6.0]]
    close(x.grad, [6, 6])
    handle.remove()
    x.grad = None
    (x * 3).sum().backward()
    close(x.grad, [3, 3])


def test_retain_grad():
    x = leaf(1.0, 2.0)
    y = x * 3
    y.retain_grad()
    z = x * 4
    (y * y).sum().backward()
    assert y.retains_grad and not z.retains_grad
    close(y.grad, [6, 12])
    assert z.grad is None


# ---------------------------------------------------------------------- grad modes
def test_no_grad_enable_grad_set_grad_enabled():
    x = leaf(1.0)
    with st.no_grad():
        assert not st.is_grad_enabled()
        assert not (x * 2).requires_grad
        with st.enable_grad():
            assert (x * 2).requires_grad
    assert st.is_grad_enabled()
    st.set_grad_enabled(False)
    assert not (x * 2).requires_grad
    st.set_grad_enabled(True)
    with st.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad

    @st.no_grad()
    def f():
        return x * 2

    @st.no_grad
    def g():
        return x * 2

    @st.inference_mode
    def h():
        return x * 2

    assert not f().requires_grad and not g().requires_grad and not h().requires_grad


def test_inference_mode():
    x = leaf(1.0)
    with st.inference_mode():
        assert not (x * 2).requires_grad and autograd.is_inference_mode_enabled()
    with st.inference_mode(False):
        assert (x * 2).requires_grad
    assert not autograd.is_inference_mode_enabled()


def test_grad_mode_is_thread_local():
    result = []
    with st.no_grad():
        t = threading.Thread(target=lambda: result.append(st.is_grad_enabled()))
        t.start()
        t.join()
    assert result == [True]


def test_detach():
    x = leaf(1.0, 2.0)
    y = (x * 2).detach()
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf
    d = x.detach()
    before = x._version
    d.add_(1)  # shares memory and version counter with x
    assert x._version == before + 1
    close(x.detach(), [2, 3])


def test_requires_grad_rules():
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
        st.tensor([1, 2]).requires_grad_()
    y = leaf(1.0) * 2
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad_(False)


def test_requires_grad_assignment_refuses_what_torchs_refuses():
    torch = pytest.importorskip("torch")
    cases = [
        (lambda lib: lib.tensor([1, 2]), True),  # an integer dtype
        (lambda lib: lib.tensor([1.0]), 1),  # not a bool
        (lambda lib: lib.tensor([1.0]), None),
        (lambda lib: lib.ones(2, requires_grad=True) * 2, False),  # a non-leaf, either way
        (lambda lib: lib.ones(2, requires_grad=True) * 2, True),
    ]
    for make, value in cases:
        with pytest.raises(RuntimeError) as theirs:
            make(torch).requires_grad = value
        with pytest.raises(RuntimeError) as ours:
            make(st).requires_grad = value
        assert str(ours.value) == str(theirs.value)
    x = st.tensor([1, 2])
    x.requires_grad = False  # allowed on any dtype, as torch's
    z = st.tensor([1.0, 2.0])
    z.requires_grad = True
    (z * 3).sum().backward()
    close(z.grad, [3, 3])
    with st.inference_mode():
        w = st.ones(2)
    with pytest.raises(RuntimeError, match="Setting requires_grad=True on inference tensor outside InferenceMode"):
        w.requires_grad = True
    p = st.nn.Parameter(st.ones(2))
    p.requires_grad = False
    assert not p.requires_grad and p.is_leaf


# ---------------------------------------------------------------------- deep graphs
def test_deep_graph_has_no_recursion_limit():
    x = leaf(1.0)
    y = x
    for _ in range(100_000):
        y = y + 1.0
    y.backward()
    close(x.grad, [1])


# ---------------------------------------------------------------------- in-place and versions
def test_version_counter_error():
    x = leaf(1.0, 2.0)
    y = x * 2
    z = y * y  # saves y
    y.add_(1)
    with pytest.raises(RuntimeError, match=r"one of the variables needed for gradient computation has been "
                                           r"modified by an inplace operation: \[strided.DoubleTensor \[2\]\], "
                                           r"which is output 0 of Add, is at version 1; expected "
                                           r"version 0 instead"):
        z.sum().backward()


def test_versions_are_shared_with_views_and_bumped_by_writes():
    x = st.zeros(4)
    v = x[1:3]
    start = x._version
    assert v._version == start
    v.fill_(1)
    x.copy_(st.ones(4))
    x.add_(1)
    x.zero_()
    assert x._version == v._version == start + 4
    x[0] = 5
    assert v._version == start + 5
    assert st.ones(2)._version == st.ones(2)._version  # a fresh tensor starts where every factory does


def test_fused_optimizer_step_bumps_every_parameter():
    p = leaf(1.0, 2.0)
    loss = (p * p).sum()  # saves p
    with st.no_grad():
        st.ops.aten._fused_sgd_([p], [st.ones(2, dtype=st.float64)], [], weight_decay=0.0, momentum=0.0,
                                lr=0.1, dampening=0.0, nesterov=False, maximize=False, is_first_step=True)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_cpu_graphs_record_no_stream():
    assert (leaf(1.0) * 2).grad_fn.stream is None


def test_inplace_on_leaf_raises():
    x = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        x.add_(1)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an in-place"):
        x[0:1].mul_(2)
    before = x._version
    with st.no_grad():
        x.add_(1)  # allowed under no_grad, and counted
    assert x._version == before + 1
    close(x.detach(), [2, 3])


def test_inplace_rebases_history():
    x = leaf(1.0, 2.0)
    y = x * 1
    y.mul_(x)  # y = x^2 (mul's formula for x reads self: saved as a copy of the old value)
    y.exp_()  # y = exp(x^2)
    assert y.grad_fn.name() == "ExpBackward0"
    y.sum().backward()
    close(x.grad, 2 * np.array([1.0, 2.0]) * np.exp(np.array([1.0, 4.0])))


def test_inplace_overwriting_a_saved_input_raises():
    x = leaf(1.0, 2.0)
    y = x * 1
    y.mul_(y)  # `other` is saved before the write, then overwritten by it (torch raises too)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_inplace_on_view_of_non_leaf_uses_copy_slices():
    x = leaf(1.0, 2.0, 3.0, 4.0)
    y = x * 1
    y[1:3].mul_(10)
    assert y.grad_fn.name() == "torch::autograd::CopySlices"
    (y * st.tensor([1.0, 2.0, 3.0, 4.0], dtype=st.float64)).sum().backward()
    close(x.grad, [1, 20, 30, 4])


def test_views_see_inplace_changes_through_their_base():
    x = leaf(1.0, 2.0, 3.0, 4.0)
    h = x * 1
    v1, v2 = h[1:], h[0:2]
    v2.mul_(10)  # also changes v1[0]: v1's history is regenerated from h's (Note [Stale views])
    (v1 * st.tensor([1.0, 2.0, 3.0], dtype=st.float64)).sum().backward()
    close(x.grad, [0, 10, 2, 3])


def test_setitem_with_a_value_that_requires_grad():
    v = leaf(5.0, 6.0)
    buf = st.zeros(4, dtype=st.float64)
    buf[1:3] = v * 2
    assert buf.requires_grad
    (buf * buf).sum().backward()
    close(v.grad, [40, 48])


def test_views_of_leaves():
    x = st.arange(0, 6, dtype=st.float64).reshape(2, 3).requires_grad_()
    (x[1] * 2 + x.t()[0:1].sum()).sum().backward()
    close(x.grad, [[3, 0, 0], [5, 2, 2]])


def test_random_fills_have_zero_gradient_and_dropout_its_mask():
    x = leaf(1.0, 2.0, 3.0, 4.0)
    y = x * 1
    y.uniform_()
    y.sum().backward()
    close(x.grad, [0, 0, 0, 0])
    x.grad = None
    st.manual_seed(0)
    out = st.dropout(x, 0.5, True)
    out.sum().backward()
    kept = out.detach().numpy() != 0
    close(x.grad, np.where(kept, 2.0, 0.0))


def test_out_variants_refuse_inputs_that_require_grad():
    with pytest.raises(RuntimeError, match=r"add\(\): functions with out=... arguments don't support"):
        st.add(leaf(1.0), leaf(1.0), out=st.empty(1, dtype=st.float64))
    with st.no_grad():
        st.add(leaf(1.0), leaf(1.0), out=st.empty(1, dtype=st.float64))


# ---------------------------------------------------------------------- autograd.grad, create_graph
def test_autograd_grad_and_allow_unused():
    x, y = leaf(1.0, 2.0), leaf(3.0)
    z = (x * x).sum()
    (gx,) = autograd.grad(z, x, retain_graph=True)
    close(gx, [2, 4])
    assert x.grad is None
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        autograd.grad(z, [x, y], retain_graph=True)
    gx, gy = autograd.grad(z, [x, y], allow_unused=True)
    assert gy is None
    close(gx, [2, 4])


def test_autograd_grad_runs_leaf_hooks():
    x = leaf(1.0, 2.0)
    x.register_hook(lambda g: g * 10)
    (gx,) = autograd.grad((x * x).sum(), x)
    close(gx, [20, 40])
    assert x.grad is None


def test_autograd_grad_of_non_leaf():
    x = leaf(1.0, 2.0)
    h = x * 3
    (gh,) = autograd.grad((h * h).sum(), h)
    close(gh, [6, 12])


def test_double_backward():
    x = leaf(2.0)
    y = x * x * x
    (g,) = autograd.grad(y, x, create_graph=True)
    close(g, [12])
    (g2,) = autograd.grad(g, x)
    close(g2, [12])


def test_backward_inputs_argument():
    x, y = leaf(1.0), leaf(2.0)
    (x * y).backward(inputs=[x])
    close(x.grad, [2])
    assert y.grad is None


def test_training_step_core_ops():
    st.manual_seed(0)
    w = st.randn(4, 3, dtype=st.float64, requires_grad=True)
    b = st.zeros(4, dtype=st.float64, requires_grad=True)
    x = st.randn(5, 3, dtype=st.float64)
    loss = st.cross_entropy_loss(st.linear(x, w, b).relu(), st.tensor([0, 1, 2, 3, 0]))
    loss.backward()
    assert w.grad.shape == (4, 3) and b.grad.shape == (4,)
    assert autograd.gradcheck(lambda w, b: st.cross_entropy_loss(st.linear(x, w, b).relu(),
                                                                   st.tensor([0, 1, 2, 3, 0])), (w, b))


# ---------------------------------------------------------------------- derivatives.yaml loader
@pytest.mark.parametrize("body, message", [
    ("- name: mul.Tensor(Tensor self, Tensor other) -> Tensor\n  self: grad * other\n", None),
    ("- name: mul.Tensor(Tensor self, Tensor oops) -> Tensor\n  self: grad\n",
     r"derivatives.yaml:1: 'mul.Tensor\(Tensor self, Tensor oops\) -> Tensor' is not a schema"),
    ("- name: mul.Tensor(Tensor self, Tensor other) -> Tensor\n  alpha: grad\n",
     r"derivatives.yaml:1: 'alpha' is not an argument of mul.Tensor"),
    ("- name: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\n  alpha: grad\n",
     r"derivatives.yaml:1: 'alpha' of add.Tensor is not a Tensor argument"),
    ("- name: mul.Tensor(Tensor self, Tensor other) -> Tensor\n  self: grad * no_such_helper(other)\n",
     r"derivatives.yaml:1: formula for 'self' uses unknown name 'no_such_helper'"),
    ("\n- name: mul.Tensor(Tensor self, Tensor other) -> Tensor\n  self: grad *\n",
     r"derivatives.yaml:2: formula for 'self' is not a Python expression"),
])
def test_derivatives_loader_is_strict(tmp_path, body, message):
    from strided.autograd.derivatives import load_derivatives
    from strided.ops.schema import SchemaError

    path = tmp_path / "derivatives.yaml"
    path.write_text(body)
    if message is None:
        (info,) = load_derivatives(str(path)).values()
        assert [s[:1] + s[2:] for s in info.saved] == [("other", "tensor")]
        return
    with pytest.raises(SchemaError, match=message):
        load_derivatives(str(path))


def test_formulas_save_only_what_they_read():
    from strided.autograd.kernels import DERIVATIVES

    by_name = {op.schema.qualified_name: info for op, info in DERIVATIVES.items()}
    assert by_name["add.Tensor"].saved == (("alpha", 2, "value"),)
    assert [s[2] for s in by_name["sum.dim_IntList"].saved if s[0] == "self"] == ["geometry"]
    assert [s[0] for s in by_name["exp"].saved] == ["result"]


def test_tensor_subclasses_are_leaves_too():
    from strided.nn import Parameter

    w = Parameter(st.ones(2, 3, dtype=st.float64))
    b = Parameter(st.zeros(2, dtype=st.float64))
    st.linear(st.ones(4, 3, dtype=st.float64), w, b).sum().backward()
    close(w.grad, np.full((2, 3), 4.0))
    close(b.grad, [4, 4])


def _r(*shape):
    st.manual_seed(sum(shape))
    return st.randn(*shape, dtype=st.float64, requires_grad=True)


SECOND_ORDER = {
    "mul": (lambda a, b: a * b * a, lambda: (_r(3), _r(3))),
    "exp_tanh": (lambda a: a.exp().tanh(), lambda: (_r(3),)),
    "sigmoid": (lambda a: a.sigmoid() * a, lambda: (_r(3),)),
    "softmax": (lambda a: st.softmax(a, 1) * st.arange(0, 4, dtype=st.float64), lambda: (_r(2, 4),)),
    "log_softmax": (lambda a: st.log_softmax(a, 1) ** 2, lambda: (_r(2, 4),)),
    "matmul": (lambda a, b: (a @ b) ** 2, lambda: (_r(2, 3), _r(3, 2))),
    "layer_norm": (lambda a, w, b: st.layer_norm(a, [3], w, b) ** 2, lambda: (_r(2, 3), _r(3), _r(3))),
    "div_sqrt": (lambda a: (a * a + 1).sqrt() / (a * a + 2), lambda: (_r(3),)),
    "cross_entropy": (lambda a: st.cross_entropy_loss(a, st.tensor([0, 2])), lambda: (_r(2, 3),)),
    "gelu": (lambda a: st.gelu(a), lambda: (_r(4),)),
    "var_mean": (lambda a: a.var(1) * a.mean(), lambda: (_r(2, 3),)),
    "linear_3d": (lambda x, w, b: st.nn.functional.linear(x, w, b) ** 2, lambda: (_r(2, 2, 3), _r(4, 3), _r(4))),
    "linear_1d_weight": (lambda x, w: st.nn.functional.linear(x, w) ** 2, lambda: (_r(2, 3), _r(3))),
    "linear_2d_bias": (lambda x, w, b: st.nn.functional.linear(x, w, b) ** 2,
                       lambda: (_r(3, 2, 3), _r(4, 3), _r(2, 4))),
    "matmul_batched": (lambda a, b: (a @ b) ** 2, lambda: (_r(2, 1, 2, 3), _r(3, 3, 2))),
    "matmul_vector": (lambda a, b: (a @ b) ** 2, lambda: (_r(3), _r(2, 3, 2))),
}


def test_linear_and_matmul_are_one_node_each():
    """Note [Fused linear]: one node, whose output is not a view; in-place ops on it work."""
    x, w, b = _r(2, 5, 3), _r(4, 3), _r(4)
    y = st.nn.functional.linear(x, w, b)
    assert y.grad_fn.name() == "LinearBackward0" and y._base is None
    assert [e[0].name() for e in y.grad_fn.next_functions] == ["torch::autograd::AccumulateGrad"] * 3
    z = x @ w.t()
    assert z.grad_fn.name() == "MatmulBackward0" and z._base is None
    y.mul_(2.0)
    y.sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), np.full(4, 20.0))
    np.testing.assert_allclose(w.grad.numpy(), 2.0 * x.detach().numpy().reshape(10, 3).sum(0)[None, :].repeat(4, 0))


@pytest.mark.parametrize("name", list(SECOND_ORDER))
def test_second_derivatives(name):
    """gradcheck of the gradient itself (create_graph=True): formulas are differentiable."""
    f, make = SECOND_ORDER[name]

    def first(*xs):
        out = f(*xs)
        return autograd.grad(out.sum(), xs, create_graph=True)

    assert autograd.gradcheck(first, make())


def test_node_names_are_torchs():
    """grad_fn.name() is a method, and the names are torch's (Note [Node names]): the ordinal of torch's
    derivatives.yaml, a Python number reaching the Tensor overload, a letter after a digit capitalized."""
    x = st.tensor([1.0, 2.0], requires_grad=True)
    cases = {
        "MulBackward0": x * 2, "AddBackward0": x + 1, "SubBackward0": x - 1, "DivBackward0": x / 2,
        "PowBackward0": x ** 2, "PowBackward2": st.pow(2, x), "DivBackward2": x.div(2, rounding_mode="floor"),
        "WhereBackward0": st.where(x > 1, x, 0.0), "ClampBackward1": x.clamp(0), "MaxBackward1": x.max(),
        "MaxBackward0": x.max(0)[0], "RemainderBackward0": x % 2, "Log1PBackward0": x.log1p(),
        "MaskedFillBackward0": x.masked_fill(x > 1, 0.0),
    }
    assert {name: t.grad_fn.name() for name, t in cases.items()} == {name: name for name in cases}
    assert repr(x * 2).endswith("grad_fn=<MulBackward0>)")
    assert type((x * 2).grad_fn).__name__ == "MulBackward0"  # graph-drawing tools read the class name
    assert (x * 2).grad_fn.next_functions[0][0].name() == "torch::autograd::AccumulateGrad"
