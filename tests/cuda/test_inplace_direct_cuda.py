"""The direct in-place kernels on CUDA (Note [Direct in-place kernels]): one launch writing ``self``, results
and version counts as torch's, and the autogen path (functional op + copy_) wherever one kernel cannot do it."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda
from strided.utils.profiler import count_ops

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]

torch = pytest.importorskip("torch")

_FLOAT_UNARY = ["exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tanh", "sigmoid", "tan",
                "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erf", "erfc", "erfinv", "log2",
                "log10", "exp2", "lgamma", "digamma", "neg", "abs", "sign", "relu", "floor", "ceil", "round", "trunc"]


@pytest.fixture
def launches(monkeypatch):
    from strided.backends.cuda.launch import Kernel

    count = [0]
    real = Kernel.__call__

    def counted(self, *args):
        count[0] += 1
        return real(self, *args)

    monkeypatch.setattr(Kernel, "__call__", counted)
    return count


def _pair(values, dtype="float32", transpose=False):
    a = np.asarray(values, dtype=np.float32)
    s = st.from_numpy(a.copy()).to("cuda").to(getattr(st, dtype))
    t = torch.from_numpy(a.copy()).to("cuda").to(getattr(torch, dtype))
    if transpose:
        s, t = s.t(), t.t()
    return s, t


def _close(s, t, dtype="float32"):
    tol = dict(rtol=2e-2, atol=2e-2) if dtype == "bfloat16" else dict(rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s.cpu().float().numpy(), t.cpu().float().numpy(), equal_nan=True, **tol)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("name", _FLOAT_UNARY)
def test_unary_inplace_cuda_is_one_launch_and_matches_torch(name, transpose, dtype, launches):
    rng = np.random.default_rng(0)
    lo, hi = (1.05, 3.0) if name in ("acosh",) else ((-0.9, 0.9) if name in ("asin", "acos", "atanh", "erfinv")
                                                    else (0.1, 2.0) if name in ("log", "log2", "log10", "sqrt",
                                                                                 "rsqrt", "lgamma", "digamma")
                                                    else (-2.0, 2.0))
    s, t = _pair(rng.uniform(lo, hi, (6, 5)), dtype, transpose)
    before = s._version
    made = cuda.memory_stats()["allocation.all.allocated"]
    launches[0] = 0
    out = getattr(s, name + "_")()
    assert launches[0] == 1 and out is s and s._version == before + 1
    assert cuda.memory_stats()["allocation.all.allocated"] == made  # Note [Output redirect]: no temporary
    getattr(t, name + "_")()
    _close(s, t, dtype)


@pytest.mark.parametrize("name", ["sqrt", "sigmoid", "clamp", "addcmul"])
def test_a_non_dense_self_is_written_through_its_strides(name, launches):
    rng = np.random.default_rng(3)
    s, t = _pair(rng.uniform(0.5, 2.0, (6, 8)))
    sy, ty = _pair(rng.uniform(0.5, 2.0, (6, 4)))
    calls = {"sqrt": lambda a, b: a.sqrt_(), "sigmoid": lambda a, b: a.sigmoid_(),
             "clamp": lambda a, b: a.clamp_(0.8, 1.5), "addcmul": lambda a, b: a.addcmul_(b, b, value=0.5)}
    launches[0] = 0
    out = calls[name](s[:, ::2], sy)  # every other column: not dense, the columns between stay as they were
    assert launches[0] == 1 and out._storage is s._storage and s._version == 1
    calls[name](t[:, ::2], ty)
    _close(s, t)


@pytest.mark.parametrize("case", ["clamp", "clamp_tensor", "lerp", "addcmul", "addcdiv", "masked_fill", "pow_scalar",
                                  "pow_tensor", "remainder", "floor_divide", "logical_and", "ge_bool"])
def test_multi_operand_inplace_cuda_is_one_launch_and_matches_torch(case, launches):
    rng = np.random.default_rng(1)
    x = rng.uniform(0.5, 2.0, (4, 8))
    y = rng.uniform(0.5, 2.0, (4, 8))
    row = rng.uniform(0.5, 2.0, (8,))
    (s, t), (sy, ty), (sr, tr) = _pair(x), _pair(y), _pair(row)
    calls = {
        "clamp": lambda a, b, r, lib: a.clamp_(0.8, 1.5),
        "clamp_tensor": lambda a, b, r, lib: a.clamp_(min=r, max=b),  # a broadcast row and a full operand
        "lerp": lambda a, b, r, lib: a.lerp_(b, 0.25),
        "addcmul": lambda a, b, r, lib: a.addcmul_(b, r, value=-0.5),
        "addcdiv": lambda a, b, r, lib: a.addcdiv_(b, r, value=2.0),
        "masked_fill": lambda a, b, r, lib: a.masked_fill_(r > 1.0, -3.0),
        "pow_scalar": lambda a, b, r, lib: a.pow_(1.5),
        "pow_tensor": lambda a, b, r, lib: a.pow_(r),
        "remainder": lambda a, b, r, lib: a.remainder_(r),
        "floor_divide": lambda a, b, r, lib: a.floor_divide_(0.3),
        "logical_and": lambda a, b, r, lib: a.gt(1.0).logical_and_(b.gt(1.0)),
        "ge_bool": lambda a, b, r, lib: a.gt(1.0).ge_(b.gt(1.0)),
    }
    fn = calls[case]
    operands = {"masked_fill": 1, "logical_and": 2, "ge_bool": 2}.get(case, 0)  # launches for the operands
    launches[0] = 0
    got = fn(s, sy, sr, st)
    assert launches[0] == 1 + operands
    want = fn(t, ty, tr, torch)
    _close(got, want)
    if got.dtype is not st.bool:
        assert got is s and s._version == 1


def test_operands_that_are_self_or_overlap_it(launches):
    x = np.linspace(-1, 1, 12, dtype=np.float32)
    s, t = _pair(x)
    launches[0] = 0
    with count_ops() as ops:
        s.addcmul_(s, s, value=0.5)  # the exact view: each element read before it is written
    assert launches[0] == 1 and set(ops.calls) == {("aten::addcmul_.default", "CUDA")}
    t.addcmul_(t, t, value=0.5)
    _close(s, t)
    s = st.from_numpy(x.copy()).to("cuda")
    for call in (lambda v: v[1:].clamp_(min=v[:-1]), lambda v: v.clamp_(min=v[0])):  # partial overlap
        with pytest.raises(RuntimeError) as ours:
            call(s)
        with pytest.raises(RuntimeError) as theirs:
            call(torch.from_numpy(x.copy()).to("cuda"))
        assert str(ours.value) == str(theirs.value)  # Note [Partial overlap]
    s2 = st.from_numpy(x[::-1].copy().reshape(3, 4)).to("cuda")  # decreasing: each clamp moves a value
    expected = s2[:, 1:].clamp(min=s2[:, :-1])
    with count_ops() as ops:  # overlapping views that are not dense: torch's "too hard"; computed apart here
        s2[:, 1:].clamp_(min=s2[:, :-1])
    assert ops.calls[("aten::copy_.default", "CUDA")] == 1
    _close(s2[:, 1:], expected)


def test_what_one_kernel_cannot_do_takes_the_autogen_path(launches):
    s, t = _pair([[1.0, 2.0], [3.0, 4.0]])
    launches[0] = 0
    s.lt_(2.5)  # float self, bool result: computed once, then cast back by copy_
    assert launches[0] == 2 and s._version == 1
    t.lt_(2.5)
    _close(s, t)
    i = st.arange(4, device="cuda")
    with pytest.raises(RuntimeError) as ours:
        i.sqrt_()
    with pytest.raises(RuntimeError) as theirs:
        torch.arange(4, device="cuda").sqrt_()
    assert str(ours.value) == str(theirs.value)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        st.ones(3, device="cuda").addcmul_(st.ones(2, 3, device="cuda"), st.ones(3, device="cuda"))
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        st.ones(3, device="cuda").expand(2, 3).sigmoid_()
    c = st.ones(3, dtype=st.complex64, device="cuda")
    c.neg_()  # complex: the autogen path
    assert c.cpu().numpy().tolist() == [-1, -1, -1]


def test_inplace_cuda_under_autograd_matches_torch():
    x = np.linspace(-2, 2, 10, dtype=np.float32)
    s, t = _pair(x)
    s.requires_grad_()
    t.requires_grad_()
    grads = []
    for v in (s, t):
        y = v * 2
        y.addcmul_(v, v, value=0.5).lerp_(v, 0.25).clamp_(-1.5, 2.5)  # none saves the tensor the next one writes
        z = (v * 1).sigmoid_()  # saves its result, which nothing writes after
        (y.sum() + (z * z).sum()).backward()
        grads.append(v.grad)
    _close(*grads)
    w = (s * 1).sigmoid_()
    w.mul_(2)  # writes the result sigmoid_ saved: torch's error
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        w.sum().backward()
