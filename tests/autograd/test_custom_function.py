"""strided.autograd.Function: custom forward/backward pairs, with torch's semantics and errors."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import strided as st
from strided.autograd import Function, once_differentiable


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y


class ScaleBy(Function):
    """Two inputs, one a Python number; a second, integer output."""

    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return x * k, x.argmax()

    @staticmethod
    def backward(ctx, grad, grad_index):
        ctx.seen_index_grad = grad_index
        return grad * ctx.k, None


def _x(*shape, dtype=st.float64):
    return st.randn(*shape, dtype=dtype, requires_grad=True)


def test_forward_backward_and_node():
    x = _x(4)
    y = Exp.apply(x)
    assert y.requires_grad and not y.is_leaf
    assert type(y.grad_fn).__name__ == "ExpBackward" and y.grad_fn.name() == "ExpBackward"
    assert y.grad_fn.next_functions[0][0] is not None
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(x.detach().numpy()))


def test_gradcheck_and_double_backward():
    x = _x(5)
    assert st.autograd.gradcheck(Exp.apply, (x,))
    (g,) = st.autograd.grad(Exp.apply(x).sum(), x, create_graph=True)
    assert g.grad_fn is not None  # backward's ops were recorded under create_graph
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(x.detach().numpy()))


def test_forward_runs_without_grad_and_ctx_attributes():
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, x, flag):
            seen["grad_enabled"] = st.is_grad_enabled()
            seen["needs"] = ctx.needs_input_grad
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return g, None

    Probe.apply(_x(2), True)
    assert seen == {"grad_enabled": False, "needs": (True, False)}
    Probe.apply(st.randn(2), True)
    assert seen["needs"] == (False, False)
    with st.no_grad():
        out = Probe.apply(_x(2), True)
    assert seen["needs"] == (False, False) and not out.requires_grad and out.grad_fn is None


def test_non_tensor_args_integer_outputs_and_none_grad_outputs():
    x = _x(3)
    y, idx = ScaleBy.apply(x, 3.0)
    assert y.requires_grad and not idx.requires_grad and idx.dtype is st.int64
    node = y.grad_fn
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 3.0))
    # the integer output got no gradient: backward saw zeros of its shape (materialized)
    assert node.seen_index_grad.shape == () and float(node.seen_index_grad) == 0.0


def test_materialize_grads_off_gives_none():
    got = []

    class Two(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, ga, gb):
            got.append((ga, gb))
            return ga * 2 if ga is not None else None

    x = _x(2)
    a, _b = Two.apply(x)
    a.sum().backward()
    assert got[0][1] is None and got[0][0] is not None
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_returned_input_is_a_view_with_the_new_history():
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 5

    x = _x(3)
    y = Identity.apply(x)
    assert y is not x and y._base is x and x.is_leaf and x.grad_fn is None
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0] * 3)
    with st.no_grad():
        z = Identity.apply(x)
    assert z is not x and not z.requires_grad


def test_mark_dirty_rebases_history_and_protects_leaves():
    class AddOneInPlace(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 7

    x = _x(3)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad has been used in an in-place"):
        AddOneInPlace.apply(x)
    h = x * 1
    before = h.detach().clone()
    out = AddOneInPlace.apply(h)
    assert out is h and h.grad_fn.name() == "AddOneInPlaceBackward"
    np.testing.assert_allclose(h.detach().numpy(), before.numpy() + 1)
    h.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [7.0] * 3)

    class Forgot(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match="Some elements marked as dirty during the forward method were not "
                                           "returned as output"):
        Forgot.apply(x * 1)


def test_mark_dirty_on_a_view_goes_through_copy_slices():
    class Double(Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = _x(4)
    base = x * 1
    Double.apply(base[1:3])
    base.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 2.0, 2.0, 1.0])


def test_mark_non_differentiable():
    class Sorted(Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            flag = x > 0
            ctx.mark_non_differentiable(flag)
            return y, flag

        @staticmethod
        def backward(ctx, g, g_flag):
            return g * 2

    x = _x(3)
    y, flag = Sorted.apply(x)
    assert y.requires_grad and not flag.requires_grad and flag.grad_fn is None


def test_saved_tensor_version_check_and_freed_buffers():
    x = _x(3)
    h = x * 1
    y = Exp.apply(h)
    h2 = h * 1
    y.mul_(2)  # modifies the saved output
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    del h2
    y = Exp.apply(x)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        _ = y.grad_fn.saved_tensors
    y = Exp.apply(x)
    y.sum().backward(retain_graph=True)
    y.sum().backward()  # retained: works twice
    np.testing.assert_allclose(x.grad.numpy(), 3 * np.exp(x.detach().numpy()))


def test_saved_output_makes_no_reference_cycle():
    x = _x(3)
    y = Exp.apply(x)
    node = weakref.ref(y.grad_fn)
    gc.disable()
    try:
        del y
        assert node() is None  # freed by reference counting alone
    finally:
        gc.enable()


def test_backward_count_and_type_errors_in_torchs_words():
    class TooFew(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g

    class NonTensorGrad(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g, g

    class ExtraNones(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g, None, None

    class WrongShape(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g[:2]

    class NotATensor(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return 3

    x = _x(3)
    with pytest.raises(RuntimeError, match=r"function TooFewBackward returned an incorrect number of gradients "
                                           r"\(expected 2, got 1\)"):
        TooFew.apply(x, 2.0).sum().backward()
    with pytest.raises(RuntimeError, match="function NonTensorGradBackward returned a gradient different than None "
                                           "at position 2, but the corresponding forward input was not a Variable"):
        NonTensorGrad.apply(x, 2.0).sum().backward()
    ExtraNones.apply(x, 2.0).sum().backward()  # trailing Nones are allowed
    with pytest.raises(RuntimeError, match=r"Function WrongShapeBackward returned an invalid gradient at index 0 - "
                                           r"got \[2\] but expected shape compatible with \[3\]"):
        WrongShape.apply(x).sum().backward()
    with pytest.raises(RuntimeError, match=r"expected Variable or None \(got int\)"):
        NotATensor.apply(x).sum().backward()


def test_broadcast_gradient_is_summed_to_the_input():
    class Broadcast(Function):
        @staticmethod
        def forward(ctx, b):
            return b.clone()

        @staticmethod
        def backward(ctx, g):
            return g.expand(4, 3)  # shaped like a broadcast use of b

    b = _x(3)
    Broadcast.apply(b).sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), [4.0] * 3)


def test_setup_context_style_and_keyword_arguments():
    class Mul(Function):
        @staticmethod
        def forward(x, y, scale=1.0):
            return x * y * scale

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, y, scale = inputs
            ctx.save_for_backward(x, y)
            ctx.scale = scale

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * y * ctx.scale, g * x * ctx.scale, None

    x, y = _x(3), _x(3)
    Mul.apply(x, y, scale=2.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * y.detach().numpy())
    np.testing.assert_allclose(y.grad.numpy(), 2 * x.detach().numpy())


def test_missing_methods_and_legacy_call():
    class NoBackward(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    class Both(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

        @staticmethod
        def vjp(ctx, g):
            return g

    class OnlyVjp(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def vjp(ctx, g):
            return g * 2

    x = _x(2)
    with pytest.raises(NotImplementedError, match="You must implement either the backward or vjp method"):
        NoBackward.apply(x).sum().backward()
    with pytest.raises(RuntimeError, match="Implementing both 'backward' and 'vjp'"):
        Both.apply(x).sum().backward()
    OnlyVjp.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])
    with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward method"):
        OnlyVjp()(x)
    with pytest.raises(TypeError, match="save_for_backward can only save variables, but argument 1 is of type int"):
        class SavesInt(Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, 3)
                return x

        SavesInt.apply(x)


def test_once_differentiable():
    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2

    x = _x(3)
    Cube.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * x.detach().numpy() ** 2)
    (g,) = st.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    assert not g.requires_grad  # no grad output required grad: nothing to differentiate (as torch)
    v = st.ones(3, dtype=st.float64, requires_grad=True)
    (g,) = st.autograd.grad(Cube.apply(x), x, grad_outputs=v, create_graph=True)
    assert g.requires_grad and g.grad_fn.name() == "torch::autograd::Error"
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was marked with "
                                           "@once_differentiable"):
        g.sum().backward()


def test_hooks_on_custom_nodes():
    x = _x(3)
    y = Exp.apply(x)
    calls = []
    y.grad_fn.register_hook(lambda gi, go: calls.append("post"))
    y.grad_fn.register_prehook(lambda go: calls.append("pre"))
    y.register_hook(lambda g: g * 0)
    y.sum().backward()
    assert calls == ["pre", "post"]
    np.testing.assert_allclose(x.grad.numpy(), [0.0] * 3)
