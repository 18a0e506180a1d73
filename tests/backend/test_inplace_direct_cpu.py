"""The CPU's direct in-place kernels (Note [CPU direct in-place kernels]): the functional kernel called without
a dispatch, its result copied in with NumPy; results, versions and errors as torch's."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided.dispatch.keys import DispatchKey
from strided.dispatch.library import get_op
from strided.utils.profiler import count_ops

torch = pytest.importorskip("torch")

_UNARY = ["exp", "log", "sqrt", "rsqrt", "reciprocal", "sin", "tanh", "sigmoid", "erf", "neg", "abs", "sign", "relu",
          "floor", "round", "trunc", "expm1", "log1p", "lgamma"]


def _pair(values, dtype="float32", transpose=False):
    a = np.asarray(values, dtype=np.float32)
    s = st.from_numpy(a.copy()).to(getattr(st, dtype))
    t = torch.from_numpy(a.copy()).to(getattr(torch, dtype))
    return (s.t(), t.t()) if transpose else (s, t)


def _close(s, t, dtype="float32"):
    tol = dict(rtol=2e-2, atol=2e-2) if dtype == "bfloat16" else dict(rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(s.float().numpy(), t.float().numpy(), equal_nan=True, **tol)


def test_the_direct_kernels_are_registered():
    for name in ("aten::sqrt_", "aten::clamp_", "aten::addcmul_", "aten::lerp_.Scalar", "aten::add_.Tensor",
                 "aten::masked_fill_.Scalar", "aten::cumsum_", "aten::eq_.Scalar"):
        fn = get_op(name)._kernels.get(DispatchKey.CPU)
        assert fn is not None and fn.__module__ == "strided.backends.cpu.inplace", name


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("name", _UNARY)
def test_unary_inplace_is_one_dispatch_and_matches_torch(name, transpose, dtype):
    rng = np.random.default_rng(0)
    s, t = _pair(rng.uniform(0.1, 2.0, (4, 5)), dtype, transpose)
    with count_ops() as ops:
        out = getattr(s, name + "_")()
    assert set(ops.calls) == {(f"aten::{name}_.default", "CPU")}
    assert out is s and s._version == 1
    getattr(t, name + "_")()
    _close(s, t, dtype)


def test_multi_operand_inplace_ops_match_torch():
    rng = np.random.default_rng(1)
    x, y, r = rng.uniform(0.5, 2.0, (4, 8)), rng.uniform(0.5, 2.0, (4, 8)), rng.uniform(0.5, 2.0, (8,))
    calls = [
        lambda a, b, c: a.clamp_(0.8, 1.5), lambda a, b, c: a.clamp_(min=c, max=b), lambda a, b, c: a.lerp_(b, 0.25),
        lambda a, b, c: a.addcmul_(b, c, value=-0.5), lambda a, b, c: a.addcdiv_(b, c, value=2.0),
        lambda a, b, c: a.masked_fill_(c > 1.0, -3.0), lambda a, b, c: a.pow_(c), lambda a, b, c: a.add_(b, alpha=2),
        lambda a, b, c: a.mul_(c), lambda a, b, c: a.div_(b, rounding_mode="floor"), lambda a, b, c: a.cumsum_(1),
        lambda a, b, c: a.addcmul_(a, a, value=0.5),  # self as its own operands
    ]
    for call in calls:
        (s, t), (sb, tb), (sc, tc) = _pair(x), _pair(y), _pair(r)
        assert call(s, sb, sc) is s and s._version == 1
        call(t, tb, tc)
        _close(s, t)


def test_a_result_of_another_dtype_is_cast_back_by_copy_():
    s, t = _pair([[1.0, 2.0], [3.0, 4.0]])
    with count_ops() as ops:
        s.lt_(2.5)
    assert ops.calls[("aten::copy_.default", "CPU")] == 1 and s._version == 1
    t.lt_(2.5)
    _close(s, t)


def test_refusals_are_torchs():
    cases = [
        lambda lib: lib.arange(4).sqrt_(),  # a float result into an integer tensor
        lambda lib: lib.ones(3).addcmul_(lib.ones(2, 3), lib.ones(3)),  # self would have to grow
        lambda lib: lib.ones(3).expand(2, 3).sigmoid_(),  # repeated elements
    ]
    for case in cases:
        with pytest.raises(RuntimeError) as theirs:
            case(torch)
        with pytest.raises(RuntimeError) as ours:
            case(st)
        assert str(ours.value).split(".")[0] == str(theirs.value).split(".")[0]


def test_complex_keeps_the_autogen_path_and_autograd_still_sees_the_write():
    c = st.ones(3, dtype=st.complex64)
    with count_ops() as ops:
        c.neg_()
    assert ops.calls[("aten::copy_.default", "CPU")] == 1
    assert c.numpy().tolist() == [-1, -1, -1]
    x = st.ones(3, requires_grad=True)
    y = x * 2
    z = y.sin()
    y.mul_(3)  # sin saved y: backward must see the write
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_write_once_kernels_write_self_without_an_output(monkeypatch):
    # Note [CPU output redirect]: no output storage is allocated for them; a kernel outside the set still is
    from strided import backends

    p, g = st.randn(8, 8), st.randn(8, 8)
    mask = g > 0
    allocations = []
    real = backends.STORAGE_ALLOCATORS["cpu"]
    monkeypatch.setitem(backends.STORAGE_ALLOCATORS, "cpu", lambda *a: allocations.append(a) or real(*a))
    ptr = p.data_ptr()
    for call in (lambda: p.addcmul_(g, g, value=0.1), lambda: p.lerp_(g, 0.1), lambda: p.mul_(0.5),
                 lambda: p.add_(g, alpha=-2), lambda: p.div_(g), lambda: p.clamp_(-1, 1), lambda: p.neg_(),
                 lambda: p.relu_(), lambda: p.round_(), lambda: p.abs().sqrt_()):
        call()
    assert p.data_ptr() == ptr
    assert len(allocations) == 1  # abs()'s output; sqrt_ wrote into it
    p.masked_fill_(mask, 1.0)  # not in the set: its output is allocated, then copied in
    assert len(allocations) == 2


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided-slice"])
def test_write_once_kernels_with_self_among_their_operands_match_torch(layout):
    def make(lib):
        x = lib.arange(48, dtype=lib.float32).reshape(6, 8) / 7 - 3
        if layout == "transposed":
            return x.t()
        return x[:, ::2] if layout == "strided-slice" else x

    steps = [lambda x: x.addcmul_(x, x, value=0.5), lambda x: x.add_(x, alpha=2), lambda x: x.lerp_(x * 2, 0.3),
             lambda x: x.addcdiv_(x, x.abs() + 1, value=-0.25), lambda x: x.mul_(x), lambda x: x.clamp_(max=x / 2),
             lambda x: x.abs_().sqrt_(), lambda x: x.div_(x + 10), lambda x: x.neg_().relu_(),
             lambda x: x.sub_(0.3).sign_(), lambda x: x.mul_(2.6).round_(), lambda x: x.add_(0.5).floor_()]
    s, t = make(st), make(torch)
    versions = s._version
    for step in steps:
        assert step(s) is s
        step(t)
        _close(s, t)
    assert s._version == versions + len(steps) + 5  # each of the five chained steps writes twice
