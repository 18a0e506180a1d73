"""cuBLASLt GEMMs on a real GPU: layouts, epilogues, broadcast batches, workspaces, flags, TunableOp.

Results are checked against a float64 NumPy reference with issue 5's relative-error bounds, and
against torch on the same GPU when torch is importable.
"""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]

try:
    import torch

    HAVE_TORCH = torch.cuda.is_available()
except ImportError:  # torch is only a yardstick
    HAVE_TORCH = False

# relative error (max |err| / max |ref|) allowed per dtype (issue 5 point 7)
REL = {st.float64: 1e-12, st.float32: 2e-5, st.float16: 1e-2, st.bfloat16: 1e-2}
TF32_REL = 3e-3


@pytest.fixture(autouse=True)
def _flags():
    from strided.backends.cuda import matmul

    saved = dict(matmul._state)
    yield
    matmul._state.update(saved)
    st.use_deterministic_algorithms(False)


def _blas():
    from strided.backends.cuda import blas

    return blas


def _host(x, dtype):
    """Values exactly representable in ``dtype`` (so the reference sees the same inputs)."""
    return np.asarray(x).astype(dtype.numpy_dtype).astype(np.float64)


def _cuda(x64, dtype):
    return st.from_numpy(np.ascontiguousarray(x64.astype(dtype.numpy_dtype))).cuda()


def _rel(got, ref):
    got = np.asarray(got, dtype=np.float64)
    scale = max(np.abs(ref).max(), 1e-30) if ref.size else 1.0
    assert not np.isnan(got).any(), "NaN in the result"
    return float(np.abs(got - ref).max() / scale) if ref.size else 0.0


def _out(t):
    return t.cpu().to(st.float64).numpy() if t.dtype is not st.float64 else t.cpu().numpy()


def _layouts(x64, dtype, kind):
    """A CUDA tensor with x64's values (r x c) in layout ``kind``."""
    r, c = x64.shape
    if kind == "contiguous":
        return _cuda(x64, dtype)
    if kind == "transposed":  # column-major storage: passed as op T
        return _cuda(x64.T, dtype).t()
    if kind == "row-slice":  # rows of a wider matrix: ld > cols
        wide = np.zeros((r, c + 3))
        wide[:, 1:c + 1] = x64
        return _cuda(wide, dtype)[:, 1:c + 1]
    if kind == "strided":  # every other column: neither layout works, copied
        wide = np.zeros((r, 2 * c))
        wide[:, ::2] = x64
        return _cuda(wide, dtype)[:, ::2]
    raise ValueError(kind)


KINDS = ("contiguous", "transposed", "row-slice", "strided")
DTYPES = (st.float32, st.float16, st.bfloat16, st.float64)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("ka", KINDS)
@pytest.mark.parametrize("kb", KINDS)
def test_mm_layouts(dtype, ka, kb):
    rng = np.random.default_rng(0)
    a64, b64 = _host(rng.standard_normal((67, 45)), dtype), _host(rng.standard_normal((45, 33)), dtype)
    a, b = _layouts(a64, dtype, ka), _layouts(b64, dtype, kb)
    out = st.mm(a, b)
    assert out.shape == (67, 33) and out.is_contiguous() and out.dtype is dtype
    ref = a64 @ b64
    assert _rel(_out(out), ref) < REL[dtype]
    if HAVE_TORCH and ka == "contiguous":
        tt = torch.from_numpy(a64).to("cuda", getattr(torch, dtype.name)) @ torch.from_numpy(b64).to(
            "cuda", getattr(torch, dtype.name))
        assert _rel(_out(out), tt.double().cpu().numpy()) < REL[dtype]


def test_layouts_copy_only_when_needed():
    _blas()
    from strided.backends.cuda import gemm_operands

    x = _cuda(np.ones((8, 8)), st.float32)
    for t in (x, x.t(), x[:, 1:5], x[1:5]):
        assert gemm_operands.layout(t, *t.shape) is not None
    assert gemm_operands.layout(x[:, ::2], 8, 4) is None
    assert gemm_operands.layout(x[:1, ::2], 1, 4) is not None  # one row, stride 2: a 1 x 4 column-major, ld 2


def test_geometry_memo_repeats_give_the_first_calls_results():
    # Note [GEMM geometry memo]: in-place layouts are memoized per (sizes, strides); a layout that
    # needs a copy is not, and every repeat must still compute the right product
    _blas()
    from strided.backends.cuda import gemm_operands

    rng = np.random.default_rng(3)
    a64, b64 = rng.standard_normal((12, 16)), rng.standard_normal((16, 12))
    a, b = _cuda(a64, st.float32), _cuda(b64, st.float32)
    bat = _cuda(rng.standard_normal((3, 12, 16)), st.float32)
    cases = [
        (lambda: st.mm(a, b), a64 @ b64, True),
        (lambda: st.mm(b.t(), a.t()), b64.T @ a64.T, True),
        (lambda: st.mm(a[2:10], b[:, 1:9]), a64[2:10] @ b64[:, 1:9], True),
        (lambda: st.mm(a[:, ::2], b[::2]), a64[:, ::2] @ b64[::2], False),  # stride-2 columns: a copy
        (lambda: st.bmm(bat, b.expand(3, 16, 12)), bat.cpu().numpy().astype(np.float64) @ b64, True),
    ]
    for _ in range(3):
        for fn, ref, _in_place in cases:
            assert _rel(_out(fn()), ref) < 1e-3
    memo = gemm_operands._GEOMETRY
    key = (a[:, ::2]._sizes, a[:, ::2]._strides, b[::2]._sizes, b[::2]._strides, (12, 12))
    assert key not in memo
    assert (a._sizes, a._strides, b._sizes, b._strides, (12, 12)) in memo


def test_plan_cache_is_bounded(monkeypatch):
    """A plan per GEMM shape, dropped all at once when MAX_PLANS is reached; products stay right."""
    blas = _blas()
    monkeypatch.setattr(blas, "MAX_PLANS", 4)
    rng = np.random.default_rng(5)
    for n in range(3, 15):
        a64, b64 = rng.standard_normal((n, 7)), rng.standard_normal((7, n + 1))
        assert _rel(_out(st.mm(_cuda(a64, st.float32), _cuda(b64, st.float32))), a64 @ b64) < 1e-3
        assert len(blas._plans) <= 4


def test_addmm_bias_epilogue_and_beta_paths():
    blas = _blas()
    rng = np.random.default_rng(1)
    dtype = st.float32
    a64, b64 = rng.standard_normal((64, 32)), rng.standard_normal((32, 48))
    bias64, full64 = rng.standard_normal(48), rng.standard_normal((64, 48))
    a, b, bias, full = (_cuda(x, dtype) for x in (a64, b64, bias64, full64))
    blas._plans.clear()
    r = st.addmm(bias, a, b)
    assert _rel(_out(r), a64 @ b64 + bias64) < REL[dtype]
    assert any(k[5] == blas._EPILOGUES[(None, True)] for k in blas._plans), "bias did not use the epilogue"
    assert _rel(_out(st.addmm(bias, a, b, beta=0.5, alpha=2)), 2 * a64 @ b64 + 0.5 * bias64) < REL[dtype]
    assert _rel(_out(st.addmm(full, a, b, beta=-1)), a64 @ b64 - full64) < REL[dtype]
    col = _cuda(full64[:, :1], dtype)
    assert _rel(_out(st.addmm(col, a, b)), a64 @ b64 + full64[:, :1]) < REL[dtype]
    nan = _cuda(np.full((64, 48), math.nan), dtype)
    assert _rel(_out(st.addmm(nan, a, b, beta=0)), a64 @ b64) < REL[dtype]
    k0 = st.addmm(full, _cuda(np.zeros((64, 0)), dtype), _cuda(np.zeros((0, 48)), dtype), beta=2)
    assert _rel(_out(k0), 2 * full64) < REL[dtype]
    a_nan = _cuda(np.full((64, 32), math.nan), dtype)
    assert _rel(_out(st.addmm(full, a_nan, b, alpha=0)), full64) < REL[dtype]


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("use_gelu", [False, True])
def test_addmm_activation_epilogues(dtype, use_gelu):
    rng = np.random.default_rng(2)
    a64, b64, bias64 = (_host(rng.standard_normal(s), dtype) for s in ((40, 24), (24, 56), (56,)))
    r = st._addmm_activation(_cuda(bias64, dtype), _cuda(a64, dtype), _cuda(b64, dtype), use_gelu=use_gelu)
    pre = a64 @ b64 + bias64
    ref = _gelu_tanh(pre) if use_gelu else np.maximum(pre, 0)
    assert _rel(_out(r), ref) < max(REL[dtype], 1e-5)
    if HAVE_TORCH:
        tb = [torch.from_numpy(x).to("cuda", getattr(torch, dtype.name)) for x in (bias64, a64, b64)]
        t = torch._addmm_activation(*tb, use_gelu=use_gelu)
        assert _rel(_out(r), t.double().cpu().numpy()) < max(REL[dtype], 1e-5)


def test_bmm_baddbmm_broadcast_batch_has_stride_zero():
    blas = _blas()
    rng = np.random.default_rng(3)
    dtype = st.float32
    a64, b64, c64 = rng.standard_normal((1, 16, 8)), rng.standard_normal((5, 8, 12)), rng.standard_normal(12)
    a = _cuda(a64, dtype).expand(5, 16, 8)
    assert a.stride()[0] == 0
    blas._plans.clear()
    r = st.bmm(a, _cuda(b64, dtype))
    assert _rel(_out(r), np.matmul(np.broadcast_to(a64, (5, 16, 8)), b64)) < REL[dtype]
    (key,) = blas._plans
    assert key[11] == 5 and key[15] == 0  # batch 5, a's batch stride 0: no copy
    r = st.baddbmm(_cuda(c64, dtype), a, _cuda(b64, dtype).transpose(1, 2).contiguous().transpose(1, 2),
                   beta=0.5, alpha=2)
    assert _rel(_out(r), 2 * np.matmul(a64, b64) + 0.5 * c64) < REL[dtype]
    m = st.matmul(_cuda(rng.standard_normal((3, 1, 4, 6)), dtype), _cuda(b64[:, :6, :], dtype))
    assert m.shape == (3, 5, 4, 12)


def test_integer_gemm_raises_like_torch():
    i = st.ones((4, 4), dtype=st.int64, device="cuda")
    with pytest.raises(NotImplementedError, match="\"addmm_cuda\" not implemented for 'Long'"):
        st.mm(i, i)
    with pytest.raises(NotImplementedError, match="\"bmm_cuda\" not implemented for 'Int'"):
        st.bmm(i.to(st.int32).reshape(1, 4, 4), i.to(st.int32).reshape(1, 4, 4))
    z = st.mm(st.ones((3, 0), dtype=st.int64, device="cuda"), st.ones((0, 2), dtype=st.int64, device="cuda"))
    assert z.cpu().numpy().tolist() == [[0, 0]] * 3


def test_workspace_from_caching_allocator_and_handle_per_stream():
    blas = _blas()
    blas.clear_workspaces()
    cuda.synchronize()
    before = cuda.memory_stats()["allocated_bytes.all.current"]
    x = st.randn(64, 64, device="cuda")
    base = cuda.memory_stats()["allocated_bytes.all.current"]
    st.mm(x, x)
    dev = x.device.index
    storage, ptr, n = blas._workspaces[(dev, cuda.current_stream().handle)]
    assert n == blas.workspace_size(dev) and n > 0
    grown = cuda.memory_stats()["allocated_bytes.all.current"] - base
    assert grown >= n, (before, base, grown, n)
    blocks = [b for seg in cuda.memory_snapshot() for b in seg["blocks"] if b["state"] == "active_allocated"]
    segs = [seg for seg in cuda.memory_snapshot() if seg["address"] <= ptr < seg["address"] + seg["total_size"]]
    assert segs and blocks, "workspace is not a caching-allocator block"
    s = cuda.Stream()
    with cuda.stream(s):
        y = st.mm(x, x)
    s.synchronize()
    assert (dev, s.handle) in blas._handles and (dev, s.handle) in blas._workspaces
    assert blas._workspaces[(dev, s.handle)][1] != ptr  # one workspace per stream (the handle may be shared)
    assert _rel(_out(y), _out(x) @ _out(x)) < REL[st.float32]


def test_tf32_toggle_changes_results_within_tolerance():
    rng = np.random.default_rng(4)
    a64, b64 = _host(rng.standard_normal((512, 512)), st.float32), _host(rng.standard_normal((512, 512)), st.float32)
    a, b = _cuda(a64, st.float32), _cuda(b64, st.float32)
    ref = a64 @ b64
    full = _out(st.mm(a, b))
    assert _rel(full, ref) < REL[st.float32]
    st.backends.cuda.matmul.allow_tf32 = True
    tf32 = _out(st.mm(a, b))
    assert 1e-5 < _rel(tf32, ref) < TF32_REL
    st.set_float32_matmul_precision("highest")
    assert np.array_equal(_out(st.mm(a, b)), full)


def test_reduced_precision_reduction_off_and_determinism():
    blas = _blas()
    x = st.randn(128, 4096, device="cuda", dtype=st.float16)
    w = st.randn(4096, 128, device="cuda", dtype=st.float16)
    st.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    st.use_deterministic_algorithms(True)
    blas._plans.clear()
    r1, r2 = st.mm(x, w), st.mm(x, w)
    (key,) = blas._plans
    assert key[4] == int(blas._RS.NONE) | int(blas._RS.COMPUTE_TYPE)
    assert np.array_equal(r1.cpu().numpy(), r2.cpu().numpy())


def test_tunable_write_then_read_in_new_process(tmp_path):
    f = tmp_path / "tunable.csv"
    code = textwrap.dedent(f"""
        import strided as st, strided.cuda.tunable as tn
        from strided.backends.cuda import gemm_tuning
        tn.enable(); tn.set_filename({str(f)!r}); tn.set_max_tuning_iterations(5)
        st.manual_seed(0)
        a = st.randn(256, 512, device="cuda", dtype=st.bfloat16); b = st.randn(512, 384, device="cuda",
                                                                              dtype=st.bfloat16)
        c = st.mm(a, b)
        h = lambda t: t.cpu().to(st.float64).numpy()
        ok = float(abs(h(c) - h(a) @ h(b)).max()) < 0.5
        print("TUNED", gemm_tuning.STATE.tuned_count, len(tn.get_results()), ok)
        tn.write_file()
    """)
    env_run = [sys.executable, "-c", code]
    one = subprocess.run(env_run, capture_output=True, text=True, timeout=120)
    assert one.returncode == 0, one.stderr
    assert "TUNED 1 1 True" in one.stdout, one.stdout + one.stderr
    text = f.read_text()
    assert text.startswith("Validator,GPU,") and "CUBLASLT_VERSION" in text and "STRIDED_VERSION" in text
    two = subprocess.run(env_run, capture_output=True, text=True, timeout=120)
    assert two.returncode == 0, two.stderr
    assert "TUNED 0 1 True" in two.stdout, two.stdout + two.stderr  # read back: nothing re-tuned
