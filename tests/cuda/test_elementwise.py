"""The CUDA elementwise engine: what the op database does not cover.

Host-only tests (no GPU needed) check the launch glue: a stand-in kernel reads the packed parameters
and computes on CPU memory, so pointers, strides, coalescing and the path choice are verified here.
The GPU tests check the vectorized path against the strided path (aligned and unaligned offsets,
odd sizes), poisoned outputs, the 64-bit index path, in-place writes through views, broadcast
(stride-0) operands, 0-dim CPU operands and dropout's reproducibility.
"""

from __future__ import annotations

import ctypes
import math
import struct

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda
from strided.backends.cuda import elementwise as ew
from strided.backends.cuda.kernels import MAX_DIMS
from strided.tensor import make_tensor

gpu = pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")


# ---------------------------------------------------------------------------- host-only: the launch glue
_HOST_EXPRS = {
    "x0 + x1": lambda x: x[0] + x[1],
    "x0 + x2 * x1": lambda x: x[0] + x[2] * x[1],
    "x0 * x1": lambda x: x[0] * x[1],
    "x0 ? x1 : x2": lambda x: np.where(x[0] != 0, x[1], x[2]),
}


class _HostKernel:
    """Stands in for a loaded kernel: decodes the parameters and computes float32/bool on host memory."""

    def __init__(self, expr, name, launches):
        self.fn, self.name, self.launches = _HOST_EXPRS[expr], name, launches

    def __call__(self, grid, block, stream, *v):
        self.launches.append(self.name)
        out, ins, sd, n = v[0], v[1:5], v[5:9], v[13]
        if self.name == "ew_vec":
            shape, rows = (n,), [(1,)] * 5
        else:
            nd = v[14]
            shape = v[15:15 + nd]
            rows = [v[15 + MAX_DIMS + r * MAX_DIMS:15 + MAX_DIMS + r * MAX_DIMS + nd] for r in range(5)]
        idx = np.indices(shape).reshape(len(shape), -1)
        xs = []
        for k in range(4):
            if ins[k]:
                off = (idx * np.array(rows[1 + k])[:, None]).sum(0)
                xs.append(_read(ins[k], off))
            else:
                xs.append(np.float32(sd[k]))
        off = (idx * np.array(rows[0])[:, None]).sum(0)
        res = np.broadcast_to(np.asarray(self.fn(xs), dtype=np.float32), off.shape)
        for o, r in zip(off, res):
            ctypes.c_float.from_address(out + 4 * int(o)).value = float(r)


def _read(ptr, offsets):
    span = int(offsets.max()) + 1
    return np.frombuffer((ctypes.c_float * span).from_address(ptr), np.float32)[offsets]


@pytest.fixture
def host_launches(monkeypatch):
    launches = []
    monkeypatch.setattr(ew, "get_kernel", lambda source, name, fmt, dev: _HostKernel(
        source.split("#define EXPR (")[1].split(")\n")[0], name, launches))
    monkeypatch.setattr(ew, "_launchers", {})
    return launches


def _view(t, offset, sizes, strides):
    return make_tensor(t.untyped_storage(), t.storage_offset() + offset, tuple(sizes), tuple(strides), t.dtype)


def _run(expr, out, args):
    return ew.run(expr, out, args, (st.float32,) * 4, dense=False)


def test_host_glue_same_layout_takes_vector_path(host_launches):
    a, b = st.rand(37), st.rand(37)
    out = st.full((37,), float("nan"))
    _run("x0 + x1", out, (a, b))
    assert host_launches == ["ew_vec"]
    np.testing.assert_allclose(out.numpy(), a.numpy() + b.numpy(), rtol=1e-6)


def test_host_glue_unaligned_and_strided_layouts(host_launches):
    base = st.rand(64)
    a = _view(base, 1, (37,), (1,))  # 4-byte offset: not 16-byte aligned
    out = st.full((37,), float("nan"))
    _run("x0 * x1", out, (a, 3.0))
    assert host_launches == ["ew_strided32"]
    np.testing.assert_allclose(out.numpy(), a.numpy() * 3, rtol=1e-6)
    t = st.rand(5, 7).t()  # transposed operand, contiguous output
    out = st.full((7, 5), float("nan"))
    _run("x0 + x2 * x1", out, (t, st.rand(5), 2.0))
    assert host_launches[-1] == "ew_strided32"


def test_host_glue_broadcast_and_cpu_scalar(host_launches):
    a, row = st.rand(3, 1, 4), st.rand(5, 1)
    out = st.full((3, 5, 4), float("nan"))
    _run("x0 + x2 * x1", out, (a, row, st.tensor(0.5)))
    np.testing.assert_allclose(out.numpy(), a.numpy() + 0.5 * row.numpy(), rtol=1e-6)
    assert ew.plan(out, (a, row, st.tensor(0.5)), (st.float32,) * 3)[0][2][0] == 2  # 0-dim CPU: a scalar


def test_host_glue_coalesces_and_switches_to_64bit(host_launches, monkeypatch):
    a = st.rand(4, 6, 8)
    _, path, shape, _ = ew.plan(a, (a[:, :, :],), (st.float32,))
    assert path == "flat" and shape == (192,)
    sl = _view(st.rand(4, 6, 16), 0, (4, 6, 8), (96, 16, 1))
    _, path, shape, strides = ew.plan(st.empty(4, 6, 8), (sl,), (st.float32,))
    assert path == "strided" and shape == [24, 8] and strides[1] == [16, 1]
    monkeypatch.setattr(ew, "force_64bit_index", True)
    out = st.full((4, 6, 8), float("nan"))
    _run("x0 + x1", out, (sl, 1.0))
    assert host_launches == ["ew_strided64"]
    np.testing.assert_allclose(out.numpy(), sl.numpy() + 1, rtol=1e-6)


def test_host_glue_zero_size_launches_nothing(host_launches):
    out = st.empty(0, 3)
    assert _run("x0 + x1", out, (st.empty(0, 3), 1.0)) is out and host_launches == []


def test_parameter_formats_match_the_structs():
    assert struct.calcsize(ew.FLAT_FMT) == 8 + 4 * 8 + 4 * 8 + 4 * 8 + 8
    assert struct.calcsize(ew.STRIDED_FMT) == struct.calcsize(ew.FLAT_FMT) + 8 + 6 * MAX_DIMS * 8


# ---------------------------------------------------------------------------- GPU
def _np(t):
    return t.cpu().numpy()


def _poisoned(shape, dtype=st.float32, device="cuda"):
    return st.full(shape, float("nan") if dtype.is_floating_point else 77, dtype=dtype, device=device)


@gpu
@pytest.mark.parametrize("n", [1, 3, 1023, 1024, 2048 + 5, 65537])
@pytest.mark.parametrize("offset", [0, 1, 3, 4])
@pytest.mark.parametrize("dtype", [st.float32, st.bfloat16, st.float64, st.int8])
def test_vector_and_strided_paths_agree(n, offset, dtype):
    rng = np.random.default_rng(n + offset)
    host = rng.standard_normal(n + 8).astype(np.float32) * 10
    base_a = st.tensor(host).to(dtype=dtype).cuda()
    base_b = st.tensor(host[::-1].copy()).to(dtype=dtype).cuda()
    a, b = _view(base_a, offset, (n,), (1,)), _view(base_b, offset, (n,), (1,))
    ref = _np(a).astype(np.float64) + _np(b).astype(np.float64)
    outs = []
    for out_offset in (0, offset):  # aligned output (vector path when offset == 0) and shifted
        out_base = _poisoned((n + 8,), dtype)
        out = _view(out_base, out_offset, (n,), (1,))
        ew.run("x0 + x1", out, (a, b), (ew.opmath(dtype),) * 2, dense=False)
        outs.append(_np(out))
        whole = _np(out_base)
        untouched = np.delete(whole, np.arange(out_offset, out_offset + n))
        if dtype.is_floating_point:
            assert np.isnan(untouched.astype(np.float32)).all()
        else:
            assert (untouched == 77).all()
    np.testing.assert_array_equal(outs[0], outs[1])
    got = outs[0].astype(np.float64)
    if dtype is st.int8:
        np.testing.assert_array_equal(got, ref.astype(np.int64).astype(np.int8))
    else:
        np.testing.assert_allclose(got, ref, rtol=1e-2 if dtype is st.bfloat16 else 1e-6)


@gpu
def test_every_element_written_for_noncontiguous_output():
    a = st.randn(33, 17, device="cuda")
    out = _poisoned((17, 33)).t()
    st.add(a, st.ones(1, device="cuda"), out=out)
    np.testing.assert_allclose(_np(out), _np(a) + 1, rtol=1e-6)


@gpu
def test_64bit_index_path_matches_32bit(monkeypatch):
    a = st.randn(6, 7, 5, device="cuda").transpose(0, 2)
    b = st.randn(7, 1, device="cuda")
    r32 = _np(st.mul(a, b))
    monkeypatch.setattr(ew, "force_64bit_index", True)
    r64 = _np(st.mul(a, b))
    np.testing.assert_array_equal(r32, r64)
    np.testing.assert_allclose(r64, _np(a) * _np(b), rtol=1e-6)


@gpu
def test_64bit_index_for_offsets_past_2_31():
    big = st.zeros(2**31 + 64, dtype=st.uint8, device="cuda")  # 2 GiB + 64 B
    view = _view(big, 0, (2, 8), (2**31, 1))  # the second row starts past 2**31 elements
    view.add_(st.arange(16, device="cuda").to(st.uint8).reshape(2, 8))
    assert _np(view).tolist() == [list(range(8)), list(range(8, 16))]
    assert _np(_view(big, 2**31 - 8, (8,), (1,))).tolist() == [0] * 8


@gpu
def test_inplace_on_noncontiguous_views():
    base = st.zeros(6, 8, device="cuda")
    view = base[::2, 1::3]
    view.add_(st.ones(3, 3, device="cuda"), alpha=2)
    view.mul_(3)
    expected = np.zeros((6, 8), np.float32)
    expected[::2, 1::3] = 6
    np.testing.assert_array_equal(_np(base), expected)
    t = st.arange(12.0, device="cuda").reshape(3, 4).t()
    t.sub_(st.tensor([1.0, 2.0, 3.0], device="cuda"))
    t.div_(2)
    np.testing.assert_allclose(_np(t), (np.arange(12.0).reshape(3, 4).T - [1, 2, 3]) / 2)


@gpu
def test_inplace_falls_back_for_overlap_and_promotion():
    a = st.arange(6.0, device="cuda").reshape(2, 3)
    with pytest.raises(RuntimeError, match="some elements of the input tensor and the written-to tensor refer"):
        a.add_(a[:1])  # partial overlap: torch's refusal (Note [Partial overlap]), a untouched
    assert _np(a).tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and a._version == 0
    a.add_(a[:, :1].clone())  # the broadcast operand in its own memory: the direct kernel
    assert _np(a).tolist() == [[0.0, 1.0, 2.0], [6.0, 7.0, 8.0]] and a._version == 1
    h = st.ones(4, dtype=st.float16, device="cuda")
    h.mul_(st.tensor([0.5, 1.5, 2.5, 3.5], dtype=st.float64, device="cuda"))
    assert _np(h).tolist() == [0.5, 1.5, 2.5, 3.5]
    i = st.ones(3, dtype=st.int32, device="cuda")
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Int"):
        i.add_(1.5)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        st.ones(3, device="cuda").add_(st.ones(2, 3, device="cuda"))


@gpu
def test_broadcast_stride0_inputs():
    a = st.randn(1, 5, device="cuda").expand(4, 5)
    b = st.randn(4, 1, device="cuda")
    np.testing.assert_allclose(_np(a * b), _np(a) * _np(b), rtol=1e-6)
    c = st.tensor(2.0, device="cuda")  # CUDA 0-dim: a broadcast tensor operand
    np.testing.assert_allclose(_np(st.addcmul(a, b, c, value=0.5)), _np(a) + 0.5 * _np(b) * 2, rtol=1e-6)


@gpu
def test_cpu_zero_dim_operands_are_kernel_arguments():
    a = st.randn(10, device="cuda")
    s = st.tensor(3.0)  # CPU 0-dim
    np.testing.assert_allclose(_np(a * s), _np(a) * 3, rtol=1e-6)
    assert (a + st.tensor(1, dtype=st.int64)).dtype is st.float32
    m = a > 0
    np.testing.assert_allclose(_np(st.where(m, a, st.tensor(-1.0))), np.where(_np(m), _np(a), -1.0))
    np.testing.assert_allclose(_np(a.masked_fill(m, st.tensor(9.0))), np.where(_np(m), 9.0, _np(a)))


@gpu
def test_half_comparison_rounds_the_scalar_first():
    h = st.tensor([0.1], dtype=st.float16, device="cuda")
    assert (h == 0.1).tolist() == [True]


@gpu
def test_integer_division_by_zero_does_not_raise_on_cuda():
    a = st.tensor([4, 5], device="cuda")
    st.floor_divide(a, st.tensor([1, 0], device="cuda")).cpu()  # no check, as torch's CUDA kernels


@gpu
def test_dropout_reproducible_per_generator():
    x = st.ones(4096, device="cuda")
    g1 = st.Generator(device="cuda").manual_seed(7)
    g2 = st.Generator(device="cuda").manual_seed(7)
    r1 = _np(st.dropout(x, 0.25, True, generator=g1))
    r2 = _np(st.dropout(x, 0.25, True, generator=g2))
    np.testing.assert_array_equal(r1, r2)
    assert set(np.unique(r1).tolist()) <= {0.0, np.float32(1 / 0.75)}
    assert math.isclose((r1 == 0).mean(), 0.25, abs_tol=0.05)
    r3 = _np(st.dropout(x, 0.25, True, generator=g1))
    assert not np.array_equal(r1, r3)


@gpu
@pytest.mark.parametrize("src", [st.float32, st.float64, st.float16, st.bfloat16])
def test_negative_floats_cast_to_uint8_wrap_through_int64_as_on_the_cpu(src):
    values = st.tensor([-3.5, -1.0, -0.5, 0.0, 2.75, 255.0, -200.0]).to(src)
    expected = values.to(st.uint8).numpy()  # the CPU: 253, 255, 0, 0, 2, 255, 56 (c10 casts through int64)
    np.testing.assert_array_equal(values.cuda().to(st.uint8).cpu().numpy(), expected)
    np.testing.assert_array_equal(expected, np.array([253, 255, 0, 0, 2, 255, 56], dtype=np.uint8))
