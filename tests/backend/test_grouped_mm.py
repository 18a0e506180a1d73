"""F.grouped_mm / _grouped_mm (Note [Grouped GEMM as GEMMs]): the four layouts against torch's CPU grouped GEMM --
values, gradients, the output's padded strides -- and torch's refusals in its words."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st

torch = pytest.importorskip("torch")
F = st.nn.functional
RNG = np.random.default_rng(17)


def _pair(shape, dtype, transpose=False):
    """The same values as a strided and a torch tensor (the last two dims swapped in memory with ``transpose``)."""
    a = RNG.standard_normal(shape).astype(np.float32)
    if transpose:
        a = np.ascontiguousarray(np.swapaxes(a, -1, -2))
    s, t = st.tensor(a).to(getattr(st, dtype)), torch.tensor(a).to(getattr(torch, dtype))
    return (s.transpose(-2, -1), t.transpose(-2, -1)) if transpose else (s, t)


def _offs(values):
    return st.tensor(values, dtype=st.int32), torch.tensor(values, dtype=torch.int32)


# (id, mat_a shape, mat_b shape, offs, mat_b stored transposed): rows grouped (the last rows past offs[-1]),
# columns grouped, the contraction grouped (an empty group), a batched product, a column-major mat_b (an empty group),
# one whose N of 6 pads the output's rows
LAYOUTS = [
    ("2d-3d", (10, 16), (3, 16, 8), [3, 7, 9], False),
    ("3d-2d", (3, 8, 16), (16, 40), [8, 24, 32], False),
    ("2d-2d", (8, 80), (80, 16), [16, 16, 72], False),
    ("3d-3d", (3, 5, 16), (3, 16, 8), None, False),
    ("2d-3d-column-major-b", (10, 16), (3, 16, 8), [2, 10, 10], True),
    ("2d-3d-padded-rows", (10, 16), (3, 16, 6), [2, 9, 10], True),
]
TOL = {"float32": dict(rtol=1e-5, atol=1e-5), "bfloat16": dict(rtol=2e-2, atol=5e-2),
       "float16": dict(rtol=2e-3, atol=5e-3)}


def _valid(out, a_shape, offs):
    """The part of the output torch writes (rows or columns past offs[-1] it leaves uninitialized)."""
    if offs is None or len(a_shape) == len(out.shape) == 3:
        return out
    return out[: offs[-1]] if len(a_shape) == 2 else out[:, : offs[-1]]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("name,a_shape,b_shape,offs,b_transposed", LAYOUTS, ids=[c[0] for c in LAYOUTS])
def test_values_gradients_and_strides_match_torch(dtype, name, a_shape, b_shape, offs, b_transposed):
    (a, ta), (b, tb) = _pair(a_shape, dtype), _pair(b_shape, dtype, b_transposed)
    o, to = _offs(offs) if offs is not None else (None, None)
    for x in (a, b, ta, tb):
        x.requires_grad_()
    out, tout = F.grouped_mm(a, b, offs=o), torch.nn.functional.grouped_mm(ta, tb, offs=to)
    assert tuple(out.shape) == tuple(tout.shape) and out.stride() == tout.stride() and out.dtype.name == dtype
    got, want = _valid(out, a_shape, offs), _valid(tout, a_shape, offs)
    np.testing.assert_allclose(got.detach().float().numpy(), want.detach().float().numpy(), **TOL[dtype])
    if offs is not None and offs[-1] < (a_shape[0] if len(a_shape) == 2 and len(b_shape) == 3 else 10**9):
        assert (out[offs[-1]:] == 0).all()  # torch leaves them uninitialized; strided writes zeros
    upstream = RNG.standard_normal(tuple(got.shape)).astype(np.float32)
    if name == "2d-3d-padded-rows":  # torch's own backward refuses this layout (grad rows of 6 break its 16-byte
        (got * st.tensor(upstream).to(got.dtype)).sum().backward()  # rule): strided's against NumPy's per group
        an, bn, up = a.detach().float().numpy(), b.detach().float().numpy(), upstream
        for g, (lo, hi) in enumerate(zip([0, *offs[:-1]], offs)):
            np.testing.assert_allclose(a.grad[lo:hi].float().numpy(), up[lo:hi] @ bn[g].T, **TOL[dtype])
            np.testing.assert_allclose(b.grad[g].float().numpy(), an[lo:hi].T @ up[lo:hi], **TOL[dtype])
        return
    (got * st.tensor(upstream).to(got.dtype)).sum().backward()
    (want * torch.tensor(upstream).to(want.dtype)).sum().backward()
    for s, t, grouped_dim in ((a, ta, 0 if len(b_shape) == 3 else 1), (b, tb, 1 if len(a_shape) == 3 else 0)):
        sg, tg = s.grad.float().numpy(), t.grad.float().numpy()
        if offs is not None and s.dim() == 2:  # past offs[-1] torch's gradient is uninitialized too; strided's 0
            cut = [slice(None)] * 2
            cut[grouped_dim] = slice(offs[-1], None)
            assert (sg[tuple(cut)] == 0).all()
            cut[grouped_dim] = slice(0, offs[-1])
            sg, tg = sg[tuple(cut)], tg[tuple(cut)]
        np.testing.assert_allclose(sg, tg, **TOL[dtype])


def test_offsets_past_the_end_or_decreasing_are_clamped():
    a, b = st.randn(6, 16), st.randn(2, 16, 8)
    out = F.grouped_mm(a, b, offs=st.tensor([4, 99], dtype=st.int32))
    np.testing.assert_allclose(out[4:].numpy(), (a[4:] @ b[1]).numpy(), rtol=1e-6)
    out = F.grouped_mm(a, b, offs=st.tensor([4, 2], dtype=st.int32))  # the second group is empty
    np.testing.assert_allclose(out[:4].numpy(), (a[:4] @ b[0]).numpy(), rtol=1e-6)
    assert (out[4:] == 0).all()


def test_meta_gives_torchs_shape_and_strides():
    a, b = st.empty(10, 16, dtype=st.bfloat16, device="meta"), st.empty(3, 6, 16, dtype=st.bfloat16, device="meta")
    out = F.grouped_mm(a, b.transpose(-2, -1), offs=st.tensor([3, 7, 9], dtype=st.int32, device="meta"))
    assert out.device.type == "meta" and tuple(out.shape) == (10, 6) and out.stride() == (8, 1)


def _refusal(lib, case):
    bf = lib.bfloat16
    a, b = lib.zeros(10, 16, dtype=bf), lib.zeros(3, 16, 8, dtype=bf)
    offs = lib.tensor([3, 7, 9], dtype=lib.int32)
    F_ = lib.nn.functional
    calls = {
        "float64": lambda: F_.grouped_mm(a.double(), b.double(), offs=offs),
        "int": lambda: F_.grouped_mm(a, b.int(), offs=offs),
        "1-d": lambda: F_.grouped_mm(a[0], b, offs=offs),
        "contraction": lambda: F_.grouped_mm(a, lib.zeros(3, 8, 8, dtype=bf), offs=offs),
        "unaligned": lambda: F_.grouped_mm(lib.zeros(10, 12, dtype=bf), lib.zeros(3, 12, 8, dtype=bf), offs=offs),
        "no-contiguous-dim": lambda: F_.grouped_mm(lib.zeros(10, 32, dtype=bf)[:, ::2], b, offs=offs),
        "no-offs": lambda: F_.grouped_mm(a, b),
        "offs-with-3d": lambda: F_.grouped_mm(lib.zeros(3, 5, 16, dtype=bf), b, offs=offs),
        "offs-2d": lambda: F_.grouped_mm(a, b, offs=offs[None]),
        "offs-int64": lambda: F_.grouped_mm(a, b, offs=offs.long()),
        "bias": lambda: F_.grouped_mm(a, b, offs=offs, bias=lib.zeros(3, 8, dtype=bf)),
        "out-dtype": lambda: F_.grouped_mm(a, b, offs=offs, out_dtype=lib.float32),
        "groups": lambda: F_.grouped_mm(a, b, offs=offs[:2]),
        "batch": lambda: F_.grouped_mm(lib.zeros(2, 5, 16, dtype=bf), b),
        "mixed": lambda: F_.grouped_mm(a, b.float(), offs=offs),
    }
    with pytest.raises(RuntimeError) as info:
        calls[case]()
    return str(info.value).splitlines()[0]


@pytest.mark.parametrize("case", ["float64", "int", "1-d", "contraction", "unaligned", "no-contiguous-dim", "no-offs",
                                  "offs-with-3d", "offs-2d", "offs-int64", "bias", "out-dtype", "groups", "batch",
                                  "mixed"])
def test_refusals_are_torchs(case):
    assert _refusal(st, case) == _refusal(torch, case)
