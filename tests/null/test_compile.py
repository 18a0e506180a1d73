"""Note [No compiler]: ``strided.compile`` checks torch.compile's arguments in torch's words and returns what runs
eagerly: a module wrapped as torch's OptimizedModule (state-dict keys prefixed ``_orig_mod.``), a function wrapped;
``Module.compile()`` keeps the module's keys. Compared with torch where it is installed."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st


def test_a_compiled_module_computes_as_the_module_and_keeps_torchs_state_dict_keys():
    m = st.nn.Sequential(st.nn.Linear(2, 3), st.nn.ReLU(), st.nn.Linear(3, 1))
    c = st.compile(m)
    assert type(c).__name__ == "OptimizedModule" and c._orig_mod is m
    assert list(c.state_dict()) == ["_orig_mod.0.weight", "_orig_mod.0.bias", "_orig_mod.2.weight", "_orig_mod.2.bias"]
    assert c._modules["_orig_mod"] is m and st.compile(st.nn.Linear(2, 3)).in_features == 2  # read through
    with pytest.raises(TypeError, match="not subscriptable"):  # as torch's: dunder methods are not forwarded
        c[0]
    x = st.randn(5, 2)
    assert st.equal(c(x), m(x))
    c(x).sum().backward()
    assert m[0].weight.grad is not None
    c.eval()
    assert not m.training
    other = st.compile(st.nn.Sequential(st.nn.Linear(2, 3), st.nn.ReLU(), st.nn.Linear(3, 1)))
    other.load_state_dict(c.state_dict())
    assert st.equal(other(x), m(x))
    assert st.compile(m, disable=True) is m


def test_functions_and_decorators():
    f = st.compile(lambda x: x + 1)
    assert f.__name__ == "<lambda>" and f(st.ones(2)).tolist() == [2.0, 2.0]

    @st.compile(mode="max-autotune", fullgraph=True, dynamic=False)
    def g(x):
        return x * 2

    assert g.__name__ == "g" and g.__wrapped__(st.ones(1)).item() == 2.0 and g(st.ones(1)).item() == 2.0
    assert not st.compiler.is_compiling() and not st.compiler.is_dynamo_compiling()
    assert st.compiler.disable(g) is g and st.compiler.disable()(g) is g and st.compiler.allow_in_graph(g) is g
    st.compiler.reset()
    m = st.nn.Linear(2, 3)
    assert m.compile(mode="reduce-overhead") is None and list(m.state_dict()) == ["weight", "bias"]


BAD = [
    (dict(mode="fast"), RuntimeError, "Unrecognized mode=fast, should be one of: default, lite, reduce-overhead, "
                                      "max-autotune-no-cudagraphs, max-autotune"),
    (dict(mode="default", options={}), RuntimeError, "Either mode or options can be specified, but both can't be "
                                                     "specified at the same time."),
    (dict(backend="nope"), RuntimeError, "Invalid backend: 'nope'. See `"),
]


@pytest.mark.parametrize("kwargs, error, words", BAD)
def test_bad_arguments_in_torchs_words(kwargs, error, words):
    m = st.nn.Linear(2, 3)
    with pytest.raises(error) as info:
        st.compile(m, **kwargs)
    assert str(info.value).startswith(words)
    with pytest.raises(error):
        m.compile(**kwargs)
    torch = pytest.importorskip("torch")
    with pytest.raises(error) as info:
        torch.compile(torch.nn.Linear(2, 3), **kwargs)
    assert str(info.value).startswith(words.replace("strided", "torch"))


def test_what_strided_cannot_do_is_refused():
    with pytest.raises(AssertionError, match="A callable function is expected, but <class 'int'> is provided."):
        st.compile(5)
    with pytest.raises(RuntimeError, match="a callable backend compiles a captured FX graph"):
        st.compile(st.nn.Linear(2, 3), backend=lambda gm, example_inputs: gm)
    with pytest.raises(TypeError, match="unexpected keyword argument 'fast'"):
        st.nn.Linear(2, 3).compile(fast=True)


def test_the_same_training_step_compiled_or_not():
    rng = np.random.default_rng(0)
    st.manual_seed(0)
    a = st.nn.Linear(4, 1)
    b = st.nn.Linear(4, 1)
    b.load_state_dict(a.state_dict())
    cb = st.compile(b)
    oa, ob = st.optim.SGD(a.parameters(), lr=0.1), st.optim.SGD(cb.parameters(), lr=0.1)
    for _ in range(3):
        x = st.tensor(rng.standard_normal((8, 4)).astype(np.float32))
        for model, opt in ((a, oa), (cb, ob)):
            opt.zero_grad()
            model(x).square().mean().backward()
            opt.step()
    assert st.equal(a.weight, b.weight)
