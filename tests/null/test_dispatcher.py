"""The dispatcher: keysets, resolution order, caching, errors, and strided.library."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

import strided as st
from strided.dispatch.dispatcher import NotImplementedForBackend
from strided.dispatch.keys import DispatchKey

_ids = itertools.count()


def _fresh_op(schema="f(Tensor self) -> Tensor"):
    ns = f"test{next(_ids)}"
    lib = st.library.Library(ns, "DEF")
    op = lib.define(schema)
    return ns, op


def test_missing_backend_kernel_raises_torchs_message():
    ns, op = _fresh_op()
    op.register(DispatchKey.CPU, lambda self: self)
    with pytest.raises(NotImplementedForBackend) as e:
        op(st.empty(2, device="meta"))
    msg = str(e.value)
    assert f"Could not run '{ns}::f' with arguments from the 'Meta' backend." in msg
    assert f"'{ns}::f' is only available for these backends: [CPU]." in msg


def test_cuda_without_backend_is_the_dispatcher_message_not_a_traceback():
    try:
        import strided.cuda as cuda

        if cuda.is_available():
            pytest.skip("a GPU is present: this checks the no-CUDA message")
    except ImportError:
        pass
    want = "Could not run 'aten::empty' with arguments from the 'CUDA' backend"
    with pytest.raises(NotImplementedError, match=want) as e:
        st.ones(2, device="cuda")
    msg = str(e.value)
    assert "the CUDA backend is not available (" in msg and "device='cpu'" in msg
    assert "only available for these backends" not in msg  # that list would name CUDA itself


def test_resolution_order_backend_then_composites():
    ns, op = _fresh_op()
    calls = []
    op.register(DispatchKey.CompositeImplicitAutograd, lambda self: calls.append("implicit") or self)
    x = st.empty(1)
    op(x)
    op.register(DispatchKey.CompositeExplicitAutograd, lambda self: calls.append("explicit") or self)
    op(x)
    op.register(DispatchKey.CPU, lambda self: calls.append("cpu") or self)
    op(x)
    assert calls == ["implicit", "explicit", "cpu"]  # registering cleared the cache each time
    op(st.empty(1, device="meta"))
    assert calls[-1] == "explicit"  # meta has no kernel of its own


def test_duplicate_registration_is_an_error():
    _, op = _fresh_op()
    op.register(DispatchKey.CPU, lambda self: self)
    with pytest.raises(RuntimeError, match="second kernel"):
        op.register(DispatchKey.CPU, lambda self: self)
    with pytest.raises(RuntimeError, match="second kernel"):
        st.ops.aten.add.Tensor.register(DispatchKey.CPU, lambda *a, **k: None)


def test_kernel_is_cached_per_keyset():
    _, op = _fresh_op()
    op.register(DispatchKey.CPU, lambda self: self)
    op.register(DispatchKey.Meta, lambda self: self)
    op(st.empty(1))
    op(st.empty(1, device="meta"))
    assert set(op._cache) == {DispatchKey.CPU, DispatchKey.Meta}


def test_autograd_bit_set_only_when_grad_needed():
    _, op = _fresh_op()
    seen = []
    op.register(DispatchKey.Autograd, lambda self: seen.append("autograd") or self)
    op.register(DispatchKey.CPU, lambda self: seen.append("cpu") or self)
    op(st.empty(1))
    op(st.empty(1, requires_grad=True))
    assert seen == ["cpu", "autograd"]


def test_device_mismatch_in_torchs_words():
    a = st.empty(2)
    b = st.empty(2, device="meta")
    with pytest.raises(RuntimeError, match=r"Expected all tensors to be on the same device, but found at "
                                           r"least two devices, cpu and meta!"):
        st.ops.aten.add.Tensor(a, b)


def test_zero_dim_cpu_tensor_joins_other_devices():
    m = st.empty(3, device="meta")
    scalar = st.tensor(2.0)
    out = st.ops.aten.add.Tensor(m, scalar)
    assert out.device.type == "meta" and out.shape == (3,)


def test_tensor_lists_are_scanned_for_devices():
    with pytest.raises(RuntimeError, match="same device"):
        st.ops.aten.cat.default([st.empty(2), st.empty(2, device="meta")])


def test_library_define_and_impl_custom_op():
    lib = st.library.Library("mylib_scale", "DEF")
    lib.define("scale(Tensor self, float factor) -> Tensor")

    @st.library.impl("mylib_scale::scale", "CPU")
    def scale_cpu(self, factor):
        return self * factor

    x = st.tensor([1.0, 2.0])
    assert st.ops.mylib_scale.scale(x, 3.0).tolist() == [3.0, 6.0]
    assert st.ops.mylib_scale.scale.default.schema.name == "scale"
    with pytest.raises(ValueError, match="reserved"):
        st.library.define("aten::foo(Tensor self) -> Tensor")


def test_overload_resolution_by_argument_types():
    x = st.tensor([1.0, 2.0])
    assert st.add(x, 1).tolist() == [2.0, 3.0]  # add.Scalar
    assert st.add(x, x, alpha=2).tolist() == [3.0, 6.0]  # add.Tensor
    with pytest.raises(TypeError, match=r"add\(\) received an invalid combination of arguments"):
        st.add(x, "one")


def test_every_yaml_kernel_name_resolves():
    aten = st.ops.aten
    for packet in aten:
        for op in packet._ordered:
            for key in list(op._dispatch_names):
                if key is DispatchKey.CUDA:
                    continue  # resolved where a GPU is present (tests/cuda)
                assert op.kernel(key) is not None, f"{op} {key.name}"


def _kernel_definitions():
    """(file, key, kernel name) of every ``@kernel(...)`` function under strided/, read from the source (the CUDA
    kernel modules import only where a GPU is present)."""
    import ast
    import pathlib

    root = pathlib.Path(st.__file__).parent
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text())
        constants = {}  # module-level names of key strings: _CIA = "..." and _CEA, _CIA = "...", "..."
        for n in tree.body:
            if isinstance(n, ast.Assign) and len(n.targets) == 1:
                names, values = n.targets[0], n.value
                if isinstance(names, ast.Tuple) and isinstance(values, ast.Tuple):
                    pairs = zip(names.elts, values.elts)
                else:
                    pairs = [(names, values)]
                constants.update((t.id, v.value) for t, v in pairs
                                 if isinstance(t, ast.Name) and isinstance(v, ast.Constant))
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef):
                continue
            for d in node.decorator_list:
                if isinstance(d, ast.Call) and getattr(d.func, "id", None) == "kernel":
                    name = next((kw.value.value for kw in d.keywords if kw.arg == "name"), node.name)
                    for a in d.args:
                        yield path.relative_to(root), a.value if isinstance(a, ast.Constant) else constants[a.id], name


def test_every_kernel_definition_is_bound_by_the_yaml():
    # a named kernel the YAML never binds is dead code: the op runs another kernel (the direct CUDA convolution
    # was one, its forward never called, until this test)
    bound = set()
    for packet in st.ops.aten:
        for op in packet._ordered:
            bound.update((key.name, name) for key, name in op._dispatch_names.items())
    definitions = list(_kernel_definitions())
    assert len(definitions) > 500
    unbound = [(str(f), key, name) for f, key, name in definitions if (key, name) not in bound]
    assert not unbound, f"@kernel functions no YAML dispatch entry names: {unbound}"


def test_factory_keys_come_from_the_device_argument_on_every_call():
    # Note [Explicit device keys]: the key of a factory is memoized per device value
    ns, op = _fresh_op("g(int n, *, Device? device=None) -> Tensor")
    op.register(DispatchKey.CPU, lambda n, device=None: "cpu")
    op.register(DispatchKey.Meta, lambda n, device=None: "meta")
    st.device(1)  # interns cuda:1, which True == 1 must not find
    for _ in range(3):
        assert op(1) == "cpu" and op(1, device="cpu") == "cpu" and op(1, device=None) == "cpu"
        assert op(1, device="meta") == "meta" and op(1, device=st.device("meta")) == "meta"
        with pytest.raises(RuntimeError, match="Expected one of cpu, cuda, meta device type"):
            op(1, device="gpu")
        with pytest.raises(TypeError, match="got bool"):
            op(1, device=True)  # True == 1: must not find an entry made for an int device
    with pytest.raises(TypeError, match="got bool"):
        st.empty(2, device=False)


def test_three_leading_tensors_take_the_fast_keyset_with_the_same_result():
    # Note [Keyset fast path]: addmm's three Tensor arguments; a 0-dim CPU tensor among them, a
    # meta tensor among CPU ones, and requires_grad on the third all give the general keyset's answer
    a, b, c = st.ones(2, 2), st.ones(2, 2), st.ones(2, 2)
    assert st.addmm(a, b, c).tolist() == [[3.0, 3.0], [3.0, 3.0]]
    assert st.addmm(st.tensor(1.0), b, c).tolist() == [[3.0, 3.0], [3.0, 3.0]]
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        st.addmm(a, b, st.ones(2, 2, device="meta"))
    w = st.ones(2, 2, requires_grad=True)
    out = st.addmm(a, b, w)
    assert out.requires_grad and out.grad_fn is not None


def test_overload_choice_follows_keyword_and_element_types():
    # Note [Overload match cache]: the cached choice is keyed on keyword value types and on the
    # element types of list arguments, so alternating calls pick their own overloads every time
    ns = f"test{next(_ids)}"
    lib = st.library.Library(ns, "DEF")
    t_op = lib.define("g.Tensor(Tensor self, Tensor other) -> Tensor")
    s_op = lib.define("g.Scalar(Tensor self, Scalar other) -> Tensor")
    i_op = lib.define("h.ints(Tensor self, int[] dims) -> Tensor")
    l_op = lib.define("h.tensors(Tensor self, Tensor[] others) -> Tensor")
    for op, mark in ((t_op, 1.0), (s_op, 2.0), (i_op, 3.0), (l_op, 4.0)):
        op.register(DispatchKey.CPU, lambda self, *rest, m=mark, **kw: st.full((1,), m))
    g, h = getattr(st.ops, ns).g, getattr(st.ops, ns).h
    x = st.ones(2)
    for _ in range(2):
        assert g(x, other=x).item() == 1.0
        assert g(x, other=3.0).item() == 2.0
        assert g(x, 3).item() == 2.0
        assert h(x, [0, 1]).item() == 3.0
        assert h(x, [x, x]).item() == 4.0
        assert h(x, (0,)).item() == 3.0
        assert h(x, dims=[0]).item() == 3.0
        assert h(x, others=[x]).item() == 4.0
    with pytest.raises(TypeError, match="received an invalid combination of arguments"):
        h(x, [[0]])


def test_a_non_tensor_where_a_tensor_is_required_gets_torchs_binding_error():
    # Note [Non-tensor arguments]: not an AttributeError from inside a kernel
    import strided as st

    for fn, value in ((st.exp, "a"), (st.lgamma, [1.0]), (st.exp, 2.0)):
        with pytest.raises(TypeError, match=rf"\(\): argument 'input' \(position 1\) must be Tensor, not "
                                            rf"{type(value).__name__}"):
            fn(value)
    assert st.exp(st.zeros(2)).tolist() == [1.0, 1.0]


def test_a_zero_dim_tensor_stands_for_a_scalar_as_in_torch():
    """Note [Tensors as Scalars]: only when no overload fits the strict way; each call checks its tensors."""
    x, y = st.ones(3), st.ones(3)
    assert x.add(y, alpha=st.tensor(2.0)).tolist() == [3.0, 3.0, 3.0]
    assert st.sub(x, y, alpha=st.tensor(-1)).tolist() == [2.0, 2.0, 2.0]
    assert st.arange(st.tensor(1.0), 3).tolist() == [1.0, 2.0]  # a lone overload
    assert st.arange(st.tensor(3)).dtype is st.int64  # the tensor's value keeps its type
    for bad in (st.tensor([2.0]), st.tensor(2.0, requires_grad=True)):  # after a cached match, too
        with pytest.raises(TypeError, match="add\\(\\): argument 'alpha' must be Number, not Tensor"):
            x.add(y, alpha=bad)
    ns, op = _fresh_op("f(Tensor self, Tensor other) -> Tensor")
    op.register(DispatchKey.CPU, lambda self, other: other)
    calls = []
    lib = st.library.Library(ns, "FRAGMENT")
    scalar = lib.define("f.Scalar(Tensor self, Scalar other) -> Tensor")
    scalar.register(DispatchKey.CPU, lambda self, other: calls.append(other) or self)
    t = st.tensor(5.0)
    assert getattr(st.ops, ns).f(x, t) is t  # a 0-dim tensor binds the Tensor overload when there is one
    assert calls == []


def test_non_tensor_arguments_get_torchs_binding_errors_not_attribute_errors():
    # Note [Non-tensor arguments]: refused before a kernel reads .dtype of them, in torch's words
    x = st.ones(2)
    cases = [
        (lambda: st.sin(None), "sin(): argument 'input' (position 1) must be Tensor, not NoneType"),
        (lambda: st.addmm(st.ones(2, 2), None, st.ones(2, 2)), "argument 'mat1' (position 2) must be Tensor"),
        (lambda: st.logical_and(x, "x"), "logical_and(): argument 'other' (position 2) must be Tensor, not str"),
        (lambda: st.dot(x, "x"), "dot(): argument 'tensor' (position 2) must be Tensor, not str"),
        (lambda: st.index_select(x, 0, [0]), "index_select(): argument 'index' (position 3) must be Tensor, not list"),
        (lambda: st.stack([1, "a"]), "expected Tensor as element 0 in argument 0, but got int"),
        (lambda: st.stack([x, "a"]), "expected Tensor as element 1 in argument 0, but got str"),
        (lambda: st.ops.aten.index(x, "x"), "argument 'indices' (position 2) must be tuple of Tensors, not str"),
        (lambda: st.is_floating_point("s"), "is_floating_point(): argument 'input' (position 1) must be Tensor"),
        (lambda: st.promote_types(x, st.float32), "argument 'type1' (position 1) must be strided.dtype, not Tensor"),
        (lambda: st.tensordot(x, "x"), "tensordot(): argument 'b' (position 2) must be Tensor, not str"),
        (lambda: x.is_same_size("s"), "is_same_size(): argument 'other' (position 1) must be Tensor, not str"),
        (lambda: x.resize_as_(None), "resize_as_(): argument 'the_template' (position 1) must be Tensor"),
        (lambda: st.heaviside(x, 2), "heaviside(): argument 'values' (position 2) must be Tensor, not int"),
    ]
    for call, words in cases:
        with pytest.raises(TypeError, match=re.escape(words)):
            call()
    # numbers are still taken where a Tensor argument wraps a scalar, and None where the schema allows it
    assert (x + np.float32(2)).tolist() == [3.0, 3.0] and st.add(x, 1).tolist() == [2.0, 2.0]
    assert st.ops.aten.index(st.arange(4.0).reshape(2, 2), [None, st.tensor([1])]).tolist() == [[1.0], [3.0]]


def test_the_keyset_fast_path_keeps_numbers_and_an_optional_none(monkeypatch):
    # Note [Non-tensor arguments]: only a non-tensor, non-number (or a None for a plain Tensor) leaves the fast path
    from strided.dispatch.dispatcher import OpOverload

    slow = []
    original = OpOverload._keyset
    monkeypatch.setattr(OpOverload, "_keyset", lambda self, *a, **k: slow.append(self.name) or original(self, *a, **k))
    x, w = st.ones(2, 3), st.ones(4, 3)
    st.ops.aten.linear.default(x, w, None)  # an optional bias given as None (linear without bias, every layer)
    _ = x + 1, x * 2.0, st.add(x, x), st.where(x > 0, x, x)
    assert slow == []
    with pytest.raises(TypeError, match="argument 'mat2' \\(position 3\\) must be Tensor, not NoneType"):
        st.addmm(st.ones(2, 2), st.ones(2, 2), None)
    assert slow  # the refusal came from the slow path
