"""strided.library.custom_op and its register_* functions (Note [Custom ops]), torch's behaviour and words."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from strided.library import custom_op, infer_schema

import strided as st
from strided import Tensor

_ids = itertools.count()


def _name(op: str) -> str:
    return f"custom_ops_test{next(_ids)}::{op}"  # operators cannot be undefined: a fresh namespace per test


def _numpy_sin():
    @custom_op(_name("numpy_sin"), mutates_args=(), device_types="cpu")
    def numpy_sin(x: Tensor, scale: float = 1.0) -> Tensor:
        return st.from_numpy(np.sin(x.detach().numpy()) * scale)

    return numpy_sin


def test_schema_is_inferred_from_annotations_as_torchs():
    def f(x: Tensor, n: int, k: float = 1.0, s: str = "a", d: st.dtype = st.float32, o: Tensor | None = None,
          ints: list[int] | None = None, *, flag: bool = False) -> tuple[Tensor, Tensor]:
        raise AssertionError

    assert infer_schema(f, mutates_args=()) == (
        '(Tensor x, SymInt n, float k=1.0, str s="a", ScalarType d=float32, Tensor? o=None, SymInt[]? ints=None, '
        "*, bool flag=False) -> (Tensor, Tensor)")

    def g(x: Tensor, ys: list[Tensor]) -> list[Tensor]:
        raise AssertionError

    assert infer_schema(g, mutates_args={"ys"}, op_name="g") == "g(Tensor x, Tensor(a1!)[] ys) -> Tensor[]"
    assert infer_schema(g, mutates_args="unknown") == "(Tensor(a0!) x, Tensor(a1!)[] ys) -> Tensor[]"

    def h(x: Tensor, y: dict) -> Tensor:
        raise AssertionError

    with pytest.raises(ValueError, match="Parameter y has unsupported type"):
        infer_schema(h, mutates_args=())
    with pytest.raises(ValueError, match="Parameter x must have a type annotation"):
        infer_schema(lambda x: x, mutates_args=())
    with pytest.raises(ValueError, match=r"\{'z'\} in mutates_args were not found"):
        infer_schema(g, mutates_args=("z",))
    with pytest.raises(ValueError, match="Parameter n is in mutable_args but only Tensors"):
        infer_schema(f, mutates_args=("n",))
    with pytest.raises(ValueError, match="No return type annotation"):
        infer_schema(_no_return, mutates_args=())


def _no_return(x: Tensor):
    raise AssertionError


def test_custom_op_is_an_operator_with_a_kernel_per_device():
    numpy_sin = _numpy_sin()
    x = st.tensor([0.0, 0.5, 1.0])
    assert st.allclose(numpy_sin(x), x.sin())
    ns, name = numpy_sin._qualname.split("::")
    assert st.allclose(getattr(getattr(st.ops, ns), name)(x, 2.0), 2 * x.sin())  # the registry's operator
    assert str(numpy_sin._opoverload.schema) == f"{name}(Tensor x, float scale=1.0) -> Tensor"
    assert repr(numpy_sin) == f"<CustomOpDef({numpy_sin._qualname})>"
    with pytest.raises(RuntimeError, match="There was no fake impl registered for"):
        numpy_sin(st.empty(3, device="meta"))

    @numpy_sin.register_fake
    def _(x, scale=1.0):
        return st.empty_like(x)

    out = numpy_sin(st.empty(2, 5, device="meta"))
    assert out.device.type == "meta" and out.shape == (2, 5)

    @numpy_sin.register_kernel("meta")  # a kernel at the Meta key replaces the fake function's
    def _(x, scale=1.0):
        return st.empty(7, device="meta")

    assert numpy_sin(st.empty(2, device="meta")).shape == (7,)
    with pytest.raises(ValueError, match="unknown device type 'mps'"):
        numpy_sin.register_kernel("mps", lambda x, scale=1.0: x)


def test_no_device_types_serves_every_device_and_outputs_may_not_alias_inputs():
    @custom_op(_name("twice"), mutates_args=())
    def twice(x: Tensor) -> Tensor:
        return x * 2

    assert twice(st.ones(2)).tolist() == [2.0, 2.0]

    @custom_op(_name("same"), mutates_args=())
    def same(x: Tensor) -> Tensor:
        return x

    @custom_op(_name("view"), mutates_args=())
    def view(x: Tensor) -> Tensor:
        return x[1:]

    for op in (same, view):
        with pytest.raises(RuntimeError, match="must not also be an input to this custom operator"):
            op(st.ones(3))


def test_autograd_without_a_formula_raises_in_backward_with_torchs_words():
    numpy_sin = _numpy_sin()
    seen = []
    numpy_sin.register_kernel("cpu", lambda x, scale=1.0: seen.append(st.is_grad_enabled()) or x.detach() * 1)
    x = st.ones(3, requires_grad=True)
    y = numpy_sin(x)
    assert seen == [False]  # the kernel runs below autograd, grad mode off
    assert type(y.grad_fn).__name__.startswith("GeneratedBackwardFor_custom_ops_test")
    with pytest.raises(RuntimeError, match=r"Trying to backward through custom_ops_test\d+\.numpy_sin\.default but "
                                           "no autograd formula was registered"):
        y.sum().backward()
    with st.no_grad():
        assert numpy_sin(x).grad_fn is None


def test_register_autograd_gives_gradients_that_pass_gradcheck():
    numpy_sin = _numpy_sin()
    numpy_sin.register_kernel("cpu", lambda x, scale=1.0: st.from_numpy(np.sin(x.numpy()) * scale))
    calls = []

    def setup_context(ctx, inputs, output):
        calls.append((len(inputs), inputs[1]))
        x, scale = inputs
        ctx.save_for_backward(x)
        ctx.scale = scale

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        assert ctx.needs_input_grad == (True, False)
        return grad * x.cos() * ctx.scale, None

    numpy_sin.register_autograd(backward, setup_context=setup_context)
    x = st.tensor([0.1, 0.7, -1.3], dtype=st.float64, requires_grad=True)
    numpy_sin(x).sum().backward()
    assert st.allclose(x.grad, x.detach().cos())
    assert calls == [(2, 1.0)]  # setup_context sees the defaults filled in
    assert st.autograd.gradcheck(lambda t: numpy_sin(t, 3.0), (x,))


def test_tensor_lists_and_keyword_only_arguments_through_autograd():
    @custom_op(_name("weighted_sum"), mutates_args=())
    def weighted_sum(xs: list[Tensor], *, weight: float = 2.0) -> list[Tensor]:
        return [x * weight for x in xs] + [sum(xs) * weight]

    def setup_context(ctx, inputs, keyword_only_inputs, output):
        ctx.n = len(inputs[0])
        ctx.weight = keyword_only_inputs["weight"]

    def backward(ctx, grads):
        assert isinstance(grads, list) and len(grads) == ctx.n + 1
        return ([(g + grads[-1]) * ctx.weight for g in grads[:-1]],)

    weighted_sum.register_autograd(backward, setup_context=setup_context)
    a, b = st.ones(2, requires_grad=True), st.full((2,), 3.0, requires_grad=True)
    outs = weighted_sum([a, b], weight=0.5)
    assert isinstance(outs, list) and len(outs) == 3 and outs[2].tolist() == [2.0, 2.0]
    (outs[0].sum() + 2 * outs[2].sum()).backward()
    assert a.grad.tolist() == [1.5, 1.5] and b.grad.tolist() == [1.0, 1.0]


def test_backward_must_return_one_gradient_per_positional_input():
    @custom_op(_name("scale"), mutates_args=())
    def scale(x: Tensor, k: float) -> Tensor:
        return x * k

    scale.register_autograd(lambda ctx, g: g)  # two inputs, one gradient
    x = st.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"returned an incorrect number of gradients \(expected 2, got 1\)"):
        scale(x, 3.0).sum().backward()


def test_mutating_ops_bump_versions_and_refuse_a_backward_formula():
    @custom_op(_name("add_into"), mutates_args=("out",))
    def add_into(x: Tensor, out: Tensor) -> None:
        out.numpy()[...] += x.numpy()  # a write autograd cannot see: the op's own bump counts it

    out = st.zeros(3)
    before = out._version
    assert add_into(st.ones(3), out) is None
    assert out.tolist() == [1.0, 1.0, 1.0] and out._version == before + 1
    assert add_into(st.ones(3, device="meta"), st.empty(3, device="meta")) is None  # nothing to fake
    with pytest.raises(RuntimeError, match="Cannot register autograd formula for non-functional operator"):
        add_into.register_autograd(lambda ctx, g: g)
    w = st.ones(3, requires_grad=True)
    saved = w * 1
    y = saved.sin()  # sin saves its input
    add_into(st.ones(3), saved.detach())
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_register_functions_take_library_defined_operators_and_refuse_atens():
    ns = _name("x").split("::")[0]
    lib = st.library.Library(ns, "DEF")
    lib.define("cube(Tensor x) -> Tensor")
    st.library.register_kernel(f"{ns}::cube", "cpu", lambda x: x.detach() ** 3)
    st.library.register_fake(f"{ns}::cube", lambda x: st.empty_like(x))
    st.library.register_autograd(f"{ns}::cube", lambda ctx, g: g * 3 * ctx.x ** 2,
                                 setup_context=lambda ctx, inputs, output: setattr(ctx, "x", inputs[0]))
    cube = getattr(st.ops, ns).cube
    x = st.tensor([1.0, 2.0], requires_grad=True)
    cube(x).sum().backward()
    assert x.grad.tolist() == [3.0, 12.0]
    assert cube(st.empty(4, device="meta")).shape == (4,)
    with pytest.raises(ValueError, match="one of strided's own operators"):
        st.library.register_fake("aten::sin", lambda x: x)


def test_bad_definitions_are_refused_clearly():
    with pytest.raises(ValueError, match="expected a name of the form 'namespace::op_name'"):
        custom_op("no_namespace", lambda x: x, mutates_args=())
    with pytest.raises(ValueError, match="'aten' namespace is reserved"):
        custom_op("aten::mine", mutates_args=())
    with pytest.raises(TypeError, match="mutates_args"):
        custom_op(_name("f"))
    with pytest.raises(NotImplementedError, match="kwarg-only Tensor args"):
        @custom_op(_name("kw"), mutates_args=())
        def kw(x: Tensor, *, y: Tensor) -> Tensor:
            return x + y
    name = _name("twice")
    with pytest.raises(ValueError, match="unknown device type 'tpu'"):
        custom_op(name, lambda x: x * 2, mutates_args=(), schema="(Tensor x) -> Tensor", device_types="tpu")
    with pytest.raises(ValueError, match="schema must be the signature without a name"):
        custom_op(name, lambda x: x * 2, mutates_args=(), schema="twice(Tensor x) -> Tensor")
    custom_op(name, lambda x: x * 2, mutates_args=(), schema="(Tensor x) -> Tensor")
    with pytest.raises(RuntimeError, match="duplicate overload"):
        custom_op(name, lambda x: x * 2, mutates_args=(), schema="(Tensor x) -> Tensor")


def test_scalar_type_defaults_reach_kernels_as_dtypes():
    seen = []

    @custom_op(_name("cast"), mutates_args=())
    def cast(x: Tensor, d: st.dtype = st.float64, k: int = 1) -> Tensor:
        seen.append(d)
        return x.to(d) * k

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cast(st.ones(2), k=3).dtype == st.float64  # the default in the middle is filled in
    assert seen == [st.float64]


def test_opcheck_passes_a_well_registered_operator_and_names_each_broken_registration():
    from strided.library import OpCheckError, opcheck

    numpy_sin = _numpy_sin()
    x = st.randn(3, requires_grad=True)
    with pytest.raises(OpCheckError, match="test_faketensor failed with There was no fake impl registered"):
        opcheck(numpy_sin, (x,))
    numpy_sin.register_fake(lambda x, scale=1.0: st.empty(5))
    with pytest.raises(OpCheckError, match=r"Shapes strided.Size\(\[3\]\) and strided.Size\(\[5\]\) are not equal"):
        opcheck(numpy_sin, (x,), test_utils="test_faketensor")
    numpy_sin.register_fake(lambda x, scale=1.0: st.empty_like(x))
    numpy_sin.register_autograd(lambda ctx, g: (g, None))
    assert opcheck(numpy_sin, (x, 2.0)) == {"test_schema": "SUCCESS", "test_autograd_registration": "SUCCESS",
                                             "test_faketensor": "SUCCESS"}

    @custom_op(_name("sneaky"), mutates_args=())
    def sneaky(x: Tensor) -> Tensor:
        x.add_(1)
        return x.clone()

    with pytest.raises(OpCheckError, match="test_schema failed with Argument x is not defined as mutable but was"):
        opcheck(sneaky, (st.randn(3),), test_utils=("test_schema",))
    result = opcheck(sneaky, (st.randn(3),), test_utils="test_schema", raise_exception=False)
    assert isinstance(result["test_schema"], RuntimeError)

    ns = _name("x").split("::")[0]
    lib = st.library.Library(ns, "DEF")
    lib.define("head(Tensor x) -> Tensor")
    lib.impl("head", lambda x: x[:1], "CPU")  # a view of its input, which the schema does not say
    lib.define("double(Tensor x) -> Tensor")
    lib.impl("double", lambda x: x * 2, "CPU")  # differentiable ops in a backend kernel: autograd bypasses the op
    ops = getattr(st.ops, ns)
    with pytest.raises(OpCheckError, match="Argument x is not defined to alias output but was aliasing"):
        opcheck(ops.head.default, (st.ones(3),), test_utils="test_schema")
    with pytest.raises(OpCheckError, match="does not have an autograd kernel defined at an autograd key"):
        opcheck(ops.double, (st.ones(3, requires_grad=True),), test_utils="test_autograd_registration")
    with pytest.raises(OpCheckError, match="no inputs have requires_grad=True"):
        opcheck(ops.double, (st.ones(3),), test_utils="test_autograd_registration")
    with pytest.raises(ValueError, match="need a compiler, which strided does not have"):
        opcheck(ops.double, (st.ones(3),), test_utils=("test_schema", "test_aot_dispatch_dynamic"))
    with pytest.raises(ValueError, match="if you specify one of rtol/atol, you must specify both"):
        opcheck(ops.double, (st.ones(3),), rtol=1e-5)
