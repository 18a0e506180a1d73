"""saved_tensors_hooks / save_on_cpu / disable_saved_tensors_hooks (Note [Saved tensor hooks]),
checked against torch's behaviour where torch is installed."""

from __future__ import annotations

import gc
import threading
import weakref

import numpy as np
import pytest

import strided as st
from strided.autograd import Function
from strided.autograd.graph import disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks


def _leaf(*shape):
    return st.tensor(np.random.default_rng(0).standard_normal(shape).astype(np.float32), requires_grad=True)


def test_pack_sees_each_saved_tensor_and_unpack_runs_per_read():
    a = _leaf(3)
    packed, unpacked = [], [0]

    def pack(t):
        packed.append(tuple(t.shape))
        return t

    def unpack(t):
        unpacked[0] += 1
        return t

    with saved_tensors_hooks(pack, unpack):
        y = (a * a).sum()
    assert packed == [(3,), (3,)]  # mul saves both operands; sum saves only a shape
    y.backward(retain_graph=True)
    y.backward()
    assert unpacked[0] == 4  # two saved tensors, read in each of two backwards
    np.testing.assert_allclose(a.grad.numpy(), 4 * a.detach().numpy(), rtol=1e-6)


def test_unpack_result_is_what_backward_uses():
    a = _leaf(3)
    with saved_tensors_hooks(lambda t: t * 0 + 5, lambda t: t):
        y = a * a
    y.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.full(3, 10.0))


def test_no_hooks_under_no_grad_and_outside_the_block():
    a = _leaf(3)
    calls = []
    with st.no_grad(), saved_tensors_hooks(lambda t: calls.append(1) or t, lambda t: t):
        a * a
    assert calls == []
    with saved_tensors_hooks(lambda t: calls.append(1) or t, lambda t: t):
        pass
    (a * a).sum().backward()
    assert calls == []


def test_innermost_pair_applies_and_pack_runs_without_hooks():
    a = _leaf(3)
    seen = []
    with saved_tensors_hooks(lambda t: seen.append("outer") or t, lambda t: t):
        with saved_tensors_hooks(lambda t: (seen.append("inner"), t * t)[1], lambda t: t):
            a * a  # the pack hook's own t * t must not call the hooks again
        a.exp()
    assert seen == ["inner", "inner", "outer"]


def test_output_saved_through_hooks_gets_its_history_back():
    a = _leaf(4)
    with saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        y = a.exp()  # exp saves its result
    y.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.exp(a.detach().numpy()), rtol=1e-6)


def test_custom_function_saves_through_hooks():
    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * g * x

    a = _leaf(3)
    packed = []
    with saved_tensors_hooks(lambda t: packed.append(t) or ("box", t.clone()), lambda p: p[1]):
        y = Square.apply(a)
    assert len(packed) == 1
    y.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), 2 * a.detach().numpy(), rtol=1e-6)


def test_hooked_tensor_skips_the_version_check_as_torch():
    a = _leaf(3)
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        y = a.exp()
    with st.no_grad():
        y.mul_(2)
    y.sum().backward()  # no version error: the hooks own what is kept
    np.testing.assert_allclose(a.grad.numpy(), 2 * np.exp(a.detach().numpy()), rtol=1e-6)


def test_errors_in_torch_words():
    a = _leaf(3)
    with saved_tensors_hooks(lambda t: 1, lambda t: t):
        y = a.exp()
    with pytest.raises(TypeError, match="Output of saved tensor unpack_hook expected to be a Tensor but got "
                                        "result of type int"):
        y.sum().backward()

    def modifies(t):
        t.add_(1)
        return t

    b = a * 2
    with saved_tensors_hooks(modifies, lambda t: t), pytest.raises(RuntimeError, match="A saved tensor pack hook "
                                                                                       "is modifying its input"):
        b * b
    with pytest.raises(TypeError, match="pack_hook must be callable"):
        saved_tensors_hooks(None, lambda t: t)
    with disable_saved_tensors_hooks("no hooks here"), pytest.raises(RuntimeError, match="no hooks here"):
        with saved_tensors_hooks(lambda t: t, lambda t: t):
            pass
    with saved_tensors_hooks(lambda t: t, lambda t: t):  # usable again after the disabled block
        pass
    with pytest.raises(ValueError, match="save_on_cpu: device_type 'xpu' is not supported"):
        save_on_cpu(device_type="xpu")


def test_save_on_cpu_on_cpu_keeps_the_graph_exact():
    a = _leaf(5)
    with save_on_cpu():
        y = (a.exp() * a).sum()
    y.backward()
    x = a.detach().numpy()
    np.testing.assert_allclose(a.grad.numpy(), np.exp(x) * (1 + x), rtol=1e-6)


def test_hooks_are_per_thread():
    a = _leaf(3)
    seen = []
    started, done = threading.Event(), threading.Event()

    def other():
        started.wait()
        (a * a).sum()  # recorded while the main thread has hooks: must not use them
        done.set()

    t = threading.Thread(target=other)
    t.start()
    with saved_tensors_hooks(lambda x: seen.append(threading.get_ident()) or x, lambda x: x):
        started.set()
        done.wait()
        a * a
    t.join()
    assert seen == [threading.get_ident()] * 2


def test_packed_value_is_all_the_graph_keeps():
    a = _leaf(64)
    h = a.exp()
    ref = weakref.ref(h)
    with saved_tensors_hooks(lambda t: t.detach().numpy().copy(), lambda arr: st.tensor(arr)):
        y = (h * h).sum()
    del h
    gc.collect()
    assert ref() is None  # only the numpy copies are kept
    y.backward()
    x = a.detach().numpy()
    np.testing.assert_allclose(a.grad.numpy(), 2 * np.exp(2 * x), rtol=1e-5)


def test_linear_tanh_saves_what_torch_saves():
    torch = pytest.importorskip("torch")
    from torch.autograd.graph import saved_tensors_hooks as t_hooks

    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    w = np.random.default_rng(2).standard_normal((5, 4)).astype(np.float32)

    def run(lib, hooks):
        xs, ws = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        shapes = []
        with hooks(lambda t: shapes.append(tuple(t.shape)) or t, lambda t: t):
            y = lib.nn.functional.linear(xs, ws).tanh()
        y.sum().backward()
        return shapes, xs.grad.detach().numpy(), ws.grad.detach().numpy()

    s_shapes, sx, sw = run(st, saved_tensors_hooks)
    t_shapes, tx, tw = run(torch, t_hooks)
    # the same tensors are saved (torch's linear saves the weight as its transposed view)
    assert sorted(int(np.prod(s)) for s in s_shapes) == sorted(int(np.prod(s)) for s in t_shapes)
    np.testing.assert_allclose(sx, tx, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sw, tw, rtol=1e-5, atol=1e-6)
