"""Zero-copy interop of CUDA tensors with torch, CuPy and JAX: DLPack and __cuda_array_interface__.

torch, CuPy and JAX are only yardsticks here: each test skips (with a reason) when its library
is missing.  Writes on either side must be visible on the other (no copy), strides and 0-dim
shapes must survive, and DLPack must be stream-ordered (Note [DLPack stream ordering]).
"""

from __future__ import annotations

import contextlib
import gc
import os
import re

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda
from strided import interop
from strided.tensor import make_tensor

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX must not take 75% of the GPU

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]

BIG = 64 << 20  # floats: 256 MiB, so queued fills outlast a host round trip
FILLS = 40
DTYPES = ["float32", "float16", "bfloat16", "float64", "int64", "int32", "uint8", "bool"]


def _view(t, offset, sizes, strides):
    storage, offset = t.untyped_storage(), t.storage_offset() + offset
    return make_tensor(storage, offset, tuple(sizes), tuple(strides), t.dtype)


def _np(t):
    return t.cpu().numpy()


def _f64(t):
    return _np(t).astype(np.float64)


def _data(shape, dtype: str, seed=0):
    """A CUDA tensor of ``dtype`` with random values (cast on the device) and its float64 values."""
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(shape) * 8).astype(np.float32)
    t = st.from_numpy(a).cuda().to(st.dtypes.to_dtype(dtype))
    return t, _f64(t)


def _torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA")
    return torch


def _cupy():
    return pytest.importorskip("cupy")


def _torch_f64(tt):
    return tt.detach().cpu().to(dtype=_torch().float64).numpy()


def _fill_on(x, s, n=FILLS):
    with cuda.stream(s):
        for k in range(n):
            x.fill_(float(k + 1))


# ---------------------------------------------------------------------- protocol surface
def test_dlpack_device_and_cai_fields():
    t = st.empty(3, 4, device="cuda")
    assert t.__dlpack_device__() == (2, 0)
    assert st.empty(3).__dlpack_device__() == (1, 0)
    assert st.empty(3, pin_memory=True).__dlpack_device__() == (3, 0)  # torch: kDLCUDAHost
    cai = t.__cuda_array_interface__
    assert cai == {"shape": (3, 4), "typestr": "<f4", "data": (t.data_ptr(), False), "version": 3,
                   "strides": None, "stream": 1}
    v = _view(t, 1, (3, 2), (4, 2))
    assert v.__cuda_array_interface__["strides"] == (16, 8)
    assert v.__cuda_array_interface__["data"][0] == t.data_ptr() + 4
    s = cuda.Stream()
    with cuda.stream(s):
        assert t.__cuda_array_interface__["stream"] == s.handle
    assert st.empty(0, device="cuda").__cuda_array_interface__["data"] == (0, False)
    assert st.empty(2, device="cuda", dtype=st.bool).__cuda_array_interface__["typestr"] == "|b1"
    with pytest.raises(TypeError, match=r"dtype bfloat16 is not supported by __cuda_array_interface__ "
                                        r"\(use DLPack\)"):
        _ = st.empty(2, device="cuda", dtype=st.bfloat16).__cuda_array_interface__
    cpu = st.empty(2)
    assert not hasattr(cpu, "__cuda_array_interface__")
    with pytest.raises(AttributeError, match="Can't get __cuda_array_interface__ on non-CUDA tensor type"):
        _ = cpu.__cuda_array_interface__


def test_dlpack_export_arguments():
    t = st.ones(4, device="cuda")
    with pytest.raises(BufferError, match="stream 0 is ambiguous"):
        t.__dlpack__(stream=0)
    with pytest.raises(TypeError, match="stream must be"):
        t.__dlpack__(stream=1.5)
    with pytest.raises(BufferError, match="not supported"):
        t.__dlpack__(dl_device=(1, 0))
    live = len(interop._LIVE)
    for kw in ({}, {"stream": -1}, {"stream": 2}, {"max_version": (1, 0)}, {"dl_device": (2, 0)}):
        cap = t.__dlpack__(**kw)
        assert type(cap).__name__ == "PyCapsule"
        del cap  # never consumed: the capsule's destructor runs our deleter
    assert len(interop._LIVE) == live


# ---------------------------------------------------------------------- torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_round_trip_zero_copy(dtype):
    torch = _torch()
    t, want = _data((5, 7), dtype)
    tt = torch.from_dlpack(t)
    assert tt.device.type == "cuda" and tt.dtype == getattr(torch, dtype)
    assert tt.data_ptr() == t.data_ptr() and tuple(tt.shape) == (5, 7)
    np.testing.assert_array_equal(_torch_f64(tt), want)
    tt.fill_(3)  # torch writes, strided sees it
    torch.cuda.synchronize()
    assert (_f64(t) == (1.0 if dtype == "bool" else 3.0)).all()
    back = st.from_dlpack(tt)  # and back: the same memory again
    assert back.data_ptr() == t.data_ptr() and back.dtype is t.dtype and back.device == t.device
    back.fill_(0)
    assert not _torch_f64(tt).any()
    # torch -> strided for a tensor torch allocated
    src = torch.arange(12, device="cuda").to(getattr(torch, dtype)).reshape(3, 4)
    s = st.from_dlpack(src)
    assert s.data_ptr() == src.data_ptr() and s.shape == (3, 4) and s.stride() == (4, 1)
    np.testing.assert_array_equal(_f64(s), _torch_f64(src))
    s.fill_(1)
    assert (_torch_f64(src) == 1).all()


def test_torch_strides_offsets_and_0dim():
    torch = _torch()
    base, want = _data((6, 8), "float32", seed=1)
    v = _view(base, 3, (4, 3), (1, 16))  # transposed, stepped, offset
    tt = torch.from_dlpack(v)
    assert tt.stride() == (1, 16) and tt.data_ptr() == v.data_ptr()
    flat = want.reshape(-1)
    index = 3 + np.arange(4)[:, None] + 16 * np.arange(3)[None, :]
    np.testing.assert_array_equal(_torch_f64(tt), flat[index])
    src = torch.arange(48.0, device="cuda").reshape(6, 8)[1:, ::3].t()  # torch-made view
    s = st.from_dlpack(src)
    assert s.stride() == src.stride() and s.data_ptr() == src.data_ptr() and s.shape == tuple(src.shape)
    np.testing.assert_array_equal(_f64(s), _torch_f64(src))
    z = st.full((), 2.5, device="cuda")
    tz = torch.from_dlpack(z)
    assert tz.shape == () and tz.item() == 2.5
    sz = st.from_dlpack(torch.tensor(-1.5, device="cuda"))
    assert sz.shape == () and sz.item() == -1.5
    e = st.from_dlpack(torch.empty(0, 3, device="cuda"))
    assert e.shape == (0, 3) and e.device.type == "cuda"
    assert torch.from_dlpack(st.empty(0, 3, device="cuda")).shape == (0, 3)


def test_torch_bfloat16_both_ways():
    torch = _torch()
    x = torch.linspace(-4, 4, 33, device="cuda").to(torch.bfloat16)
    s = st.from_dlpack(x)
    assert s.dtype is st.bfloat16 and s.data_ptr() == x.data_ptr()
    np.testing.assert_array_equal(_f64(s), _torch_f64(x))
    t = st.full((9,), 1.25, dtype=st.bfloat16, device="cuda")
    tt = torch.from_dlpack(t)
    assert tt.dtype == torch.bfloat16 and (tt == 1.25).all().item()


def test_lifetimes_keep_the_producer_alive():
    torch = _torch()
    gc.collect()
    before = torch.cuda.memory_allocated()
    src = torch.full((1 << 20,), 5.0, device="cuda")
    s = st.from_dlpack(src)
    del src
    gc.collect()
    assert torch.cuda.memory_allocated() == before + (4 << 20)  # kept by the DLPack deleter
    assert (_np(_view(s, (1 << 20) - 3, (3,), (1,))) == 5.0).all()
    del s
    gc.collect()
    assert torch.cuda.memory_allocated() == before
    live, ours = len(interop._LIVE), cuda.memory_allocated()
    t = st.full((1 << 20,), 6.0, device="cuda")
    tt = torch.from_dlpack(t)
    del t
    gc.collect()
    assert cuda.memory_allocated() == ours + (4 << 20) and len(interop._LIVE) == live + 1
    assert (tt[-3:] == 6.0).all().item()
    del tt
    gc.collect()
    assert cuda.memory_allocated() == ours and len(interop._LIVE) == live


def test_copy_export_and_imported_record_stream():
    torch = _torch()
    t = st.full((8,), 2.0, device="cuda")
    c = torch.from_dlpack(t.__dlpack__(copy=True))
    assert c.data_ptr() != t.data_ptr() and (c == 2.0).all().item()
    s = st.from_dlpack(torch.ones(4, device="cuda"))
    s.record_stream(cuda.Stream())  # foreign memory: nothing to protect, no error


def test_torch_consumes_cuda_array_interface():
    torch = _torch()
    t, want = _data((4, 6), "float32", seed=2)
    tt = torch.as_tensor(t, device="cuda")
    assert tt.data_ptr() == t.data_ptr()
    np.testing.assert_array_equal(_torch_f64(tt), want)
    v = _view(t, 1, (4, 3), (6, 2))
    tv = torch.as_tensor(v, device="cuda")
    assert tv.data_ptr() == v.data_ptr() and tv.stride() == (6, 2)
    tv.zero_()
    torch.cuda.synchronize()
    assert not _f64(v).any() and (_f64(t)[:, 0] == want[:, 0]).all()


# ---------------------------------------------------------------------- stream ordering
def test_dlpack_export_is_stream_ordered():
    """Fills queued on a strided side stream are finished before torch's stream reads the export."""
    torch = _torch()
    x = st.zeros(BIG, device="cuda")
    cuda.synchronize()
    side = cuda.Stream()
    ts = torch.cuda.Stream()
    for consumer in ("torch side stream", "torch default stream"):
        _fill_on(x, side)
        with cuda.stream(side):  # the producer's current stream is `side` at export time
            with torch.cuda.stream(ts) if consumer == "torch side stream" else contextlib.nullcontext():
                tt = torch.from_dlpack(x)  # passes ts (or 1, the legacy default) as the consumer
                tail = tt[-4:].clone()
        torch.cuda.synchronize()
        assert (tail == float(FILLS)).all().item(), consumer
        x.fill_(0.0)
        cuda.synchronize()
    # control: with stream=-1 nothing orders the read after the fills, so it races
    _fill_on(x, side)
    with cuda.stream(side):
        cap = x.__dlpack__(stream=-1, max_version=(1, 0))
    with torch.cuda.stream(ts):
        raced = torch.from_dlpack(cap)[-1:].clone()
    torch.cuda.synchronize()
    cuda.synchronize()
    assert raced.item() != float(FILLS), "the unordered read should have raced the queued fills"


def test_dlpack_import_is_stream_ordered():
    """strided.from_dlpack passes our current stream: torch's pending writes finish first."""
    torch = _torch()
    ts = torch.cuda.Stream()
    mine = cuda.Stream()
    for ours in (None, mine):
        with torch.cuda.stream(ts):
            big = torch.zeros(BIG, device="cuda")
            for k in range(FILLS):
                big.fill_(float(k + 1))
            with cuda.stream(ours):
                s = st.from_dlpack(big)  # torch records on ts; our current stream waits
                tail = _view(s, BIG - 4, (4,), (1,)).clone()
        mine.synchronize()
        assert (_np(tail) == float(FILLS)).all(), f"consumer stream {ours}"
        torch.cuda.synchronize()
        del s, big


def test_cuda_array_interface_import_waits_on_its_stream():
    """An object exposing only __cuda_array_interface__ (v3, with a stream) is imported stream-ordered."""
    torch = _torch()
    ts = torch.cuda.Stream()
    with torch.cuda.stream(ts):
        big = torch.zeros(BIG, device="cuda")
        for k in range(FILLS):
            big.fill_(float(k + 1))

    class OnlyCAI:
        def __init__(self, tensor, stream):
            self.tensor = tensor
            cai = dict(tensor.__cuda_array_interface__)
            cai["version"], cai["stream"] = 3, stream
            self.__cuda_array_interface__ = cai

    obj = OnlyCAI(big, ts.cuda_stream)
    s = st.from_dlpack(obj)
    assert s.data_ptr() == big.data_ptr() and s.shape == (BIG,)
    assert s.untyped_storage().owner.keep is obj
    tail = _view(s, BIG - 4, (4,), (1,)).clone()  # on our default stream, after the wait
    assert (_np(tail) == float(FILLS)).all()
    strided_view = OnlyCAI(big[:12].reshape(3, 4)[:, ::2], None)
    sv = st.from_dlpack(strided_view)
    assert sv.stride() == (4, 2) and sv.shape == (3, 2)
    np.testing.assert_array_equal(_f64(sv), _torch_f64(big[:12].reshape(3, 4)[:, ::2]))
    torch.cuda.synchronize()


# ---------------------------------------------------------------------- CuPy
@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "uint8", "bool"])
def test_cupy_round_trip_zero_copy(dtype):
    cp = _cupy()
    t, want = _data((5, 6), dtype, seed=3)
    c = cp.from_dlpack(t)
    assert c.data.ptr == t.data_ptr() and c.shape == (5, 6)
    np.testing.assert_array_equal(cp.asnumpy(c).astype(np.float64), want)
    c[...] = 1
    cp.cuda.runtime.deviceSynchronize()
    assert (_f64(t) == 1).all()
    src = cp.arange(24, dtype=np.float32).astype(np.dtype(st.dtypes.to_dtype(dtype).numpy_dtype))
    src = src.reshape(4, 6)[:, 1::2]
    s = st.from_dlpack(src)
    assert s.data_ptr() == src.data.ptr and s.stride() == tuple(k // src.itemsize for k in src.strides)
    np.testing.assert_array_equal(_f64(s), cp.asnumpy(src).astype(np.float64))
    s.fill_(0)
    assert not cp.asnumpy(src).any()


def test_cupy_consumes_cuda_array_interface_and_0dim():
    cp = _cupy()
    t, want = _data((4, 6), "float32", seed=4)
    c = cp.asarray(t)  # __cuda_array_interface__ (CuPy prefers it to DLPack)
    assert c.data.ptr == t.data_ptr()
    np.testing.assert_array_equal(cp.asnumpy(c), want)
    v = _view(t, 2, (3, 2), (6, 3))
    cv = cp.asarray(v)
    assert cv.data.ptr == v.data_ptr() and cv.strides == (24, 12)
    cv[...] = -1
    cp.cuda.runtime.deviceSynchronize()
    assert (_np(v) == -1).all()
    want = _np(t)
    z = cp.from_dlpack(st.full((), 4.0, device="cuda"))
    assert z.shape == () and float(z) == 4.0
    sz = st.from_dlpack(cp.asarray(7.0, dtype=cp.float32))
    assert sz.shape == () and sz.item() == 7.0
    only = type("OnlyCAI", (), {})()
    only.__cuda_array_interface__ = c.__cuda_array_interface__
    only.keep = c
    s = st.from_dlpack(only)
    assert s.data_ptr() == t.data_ptr()
    np.testing.assert_array_equal(_np(s), want)


# ---------------------------------------------------------------------- JAX
# Note [JAX in a child process]: once JAX's GPU backend starts, its runtime threads (py_xla_execute,
# py_xla_callback, ...) keep making CUDA calls that a global-mode stream capture forbids, from any thread.
# In the test process they invalidated CUDA graph captures of later tests at random (a capture spanning a
# gc.collect() or a sleep failed 5 times in 120 on an H200). So the JAX test runs in a child pytest process.
_JAX_CHILD = "STRIDED_TEST_JAX_CHILD"


def _jax():
    jax = pytest.importorskip("jax")
    try:
        gpus = jax.devices("gpu")
    except RuntimeError:
        gpus = []
    if not gpus:
        pytest.skip("jax has no GPU backend")
    return jax


def test_jax_import_and_export():
    if os.environ.get(_JAX_CHILD):
        return _jax_import_and_export()
    import importlib.util
    import subprocess
    import sys

    if importlib.util.find_spec("jax") is None:
        pytest.skip("could not import 'jax'")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", "-rs",
                        f"{__file__}::test_jax_import_and_export"], env={**os.environ, _JAX_CHILD: "1"},
                       capture_output=True, text=True, timeout=600)
    if r.returncode == 0 and re.search(r"\b1 skipped\b", r.stdout):
        pytest.skip(next((ln for ln in r.stdout.splitlines() if ln.startswith("SKIPPED")), "skipped in the child"))
    assert r.returncode == 0 and re.search(r"\b1 passed\b", r.stdout), r.stdout[-6000:] + r.stderr[-2000:]


def _jax_import_and_export():
    jax = _jax()
    jnp = jax.numpy
    a = jnp.arange(12, dtype=jnp.float32).reshape(3, 4) * 2
    a.block_until_ready()
    s = st.from_dlpack(a)
    assert s.device.type == "cuda" and s.shape == (3, 4)
    assert s.data_ptr() == a.unsafe_buffer_pointer()
    np.testing.assert_array_equal(_np(s), np.asarray(a))
    b = jnp.linspace(-1, 1, 8, dtype=jnp.bfloat16)
    sb = st.from_dlpack(b)
    assert sb.dtype is st.bfloat16
    np.testing.assert_array_equal(_f64(sb), np.asarray(b).astype(np.float64))
    t, want = _data((4, 5), "float32", seed=5)
    j = jnp.from_dlpack(t)
    np.testing.assert_array_equal(np.asarray(j), want)
