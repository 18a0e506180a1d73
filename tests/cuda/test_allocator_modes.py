"""Allocator modes and debugging switches on a real GPU: no caching, pluggable allocators, pool
allocators, CUDA_LAUNCH_BLOCKING, and copies between devices.

Settings read at import (environment variables) or valid only before the caching allocator is
first used run in a fresh interpreter.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda
from strided.backends.cuda.driver import check, cu, ensure_context
from strided.tensor import make_tensor

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]

ROOT = Path(__file__).resolve().parents[2]
MiB = 1 << 20


def _run(code: str, **env) -> str:
    """Run ``code`` in a fresh interpreter (repo on sys.path, extra ``env``); its output."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    full = dict(os.environ, PYTHONPATH=path, **env)
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full, capture_output=True,
                       text=True, timeout=180)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    return out


def _view(t, offset, sizes, strides):
    storage, offset = t.untyped_storage(), t.storage_offset() + offset
    return make_tensor(storage, offset, tuple(sizes), tuple(strides), t.dtype)


def test_no_caching_goes_straight_to_the_driver():
    out = _run("""
        import gc
        import strided as st, strided.cuda as cuda
        from strided.backends.cuda import allocator
        from strided.backends.cuda.driver import cu
        assert allocator.NO_CACHING
        cuda.init()
        # the driver's own record of the allocation (mem_get_info would also see other processes on the GPU)
        x = st.full((64 << 20,), 2.0, device="cuda")  # 256 MiB straight from cuMemAlloc
        ptr = x.data_ptr()
        err, base, size = cu().cuMemGetAddressRange(ptr)
        assert int(err) == 0 and int(base) == ptr and size == 256 << 20, (err, base, size)
        assert type(x.untyped_storage().owner).__name__ == "_RawAllocation"
        assert (x.cpu().numpy() == 2.0).all()
        y = st.arange(1000, dtype=st.int64, device="cuda")
        assert y.cpu().numpy().tolist() == list(range(1000))
        assert cuda.memory_reserved() == 0 and cuda.memory_allocated() == 0
        del x
        gc.collect()
        err = cu().cuMemGetAddressRange(ptr)[0]  # given back at once: the driver no longer knows the address
        assert err in (cu().CUresult.CUDA_ERROR_NOT_FOUND, cu().CUresult.CUDA_ERROR_INVALID_VALUE), err
        print("no-caching ok")
    """, STRIDED_NO_CUDA_MEMORY_CACHING="1")
    assert "no-caching ok" in out


def test_pluggable_allocator_receives_every_allocation():
    out = _run("""
        import gc
        import strided as st, strided.cuda as cuda
        from strided.backends.cuda.driver import check, cu, ensure_context
        calls = {"alloc": [], "free": []}

        def alloc(size, device, stream):
            ensure_context(device)
            ptr = int(check(cu().cuMemAlloc(size)))
            calls["alloc"].append((ptr, size, device, stream))
            return ptr

        def free(ptr, size, device, stream):
            calls["free"].append((ptr, size, device, stream))
            check(cu().cuCtxSynchronize())
            check(cu().cuMemFree(ptr))

        a = cuda.memory.CUDAPluggableAllocator(alloc, free)
        cuda.memory.change_current_allocator(a)
        assert cuda.memory.get_current_allocator() is a
        x = st.arange(1000, dtype=st.float32, device="cuda")
        assert [c[1:] for c in calls["alloc"]] == [(4000, 0, 0)]
        assert x.data_ptr() == calls["alloc"][0][0]
        assert x.cpu().numpy().tolist() == list(range(1000))
        ptr = x.data_ptr()
        del x
        gc.collect()
        assert calls["free"] == [(ptr, 4000, 0, 0)]
        s = cuda.Stream()
        with cuda.stream(s):
            y = st.full((10,), 3.0, device="cuda")
        assert calls["alloc"][-1][1:] == (40, 0, s.handle)
        s.synchronize()
        assert (y.cpu().numpy() == 3.0).all()
        assert cuda.memory_reserved() == 0  # the caching allocator never ran
        print("pluggable ok", len(calls["alloc"]), len(calls["free"]))
    """)
    assert "pluggable ok" in out


def test_mem_pool_with_pluggable_allocator():
    calls = {"alloc": [], "free": []}

    def alloc(size, device, stream):
        ensure_context(device)
        ptr = int(check(cu().cuMemAlloc(size)))
        calls["alloc"].append((ptr, size, device, stream))
        return ptr

    def free(ptr, size, device, stream):
        calls["free"].append((ptr, size, device, stream))
        check(cu().cuMemFree(ptr))

    pool = cuda.MemPool(allocator=cuda.memory.CUDAPluggableAllocator(alloc, free))
    assert pool.allocator is not None
    with cuda.use_mem_pool(pool):
        x = st.full((MiB,), 3.0, device="cuda")  # 4 MiB: one 20 MiB segment from `alloc`
        y = st.full((MiB,), 4.0, device="cuda")  # split from the same segment
    assert [c[1:] for c in calls["alloc"]] == [(20 * MiB, 0, 0)]
    base = calls["alloc"][0][0]
    assert all(base <= p < base + 20 * MiB for p in (x.data_ptr(), y.data_ptr()))
    z = st.empty(MiB, device="cuda")  # outside the block: the ordinary caching allocator
    assert not base <= z.data_ptr() < base + 20 * MiB
    assert (x.cpu().numpy() == 3.0).all() and (y.cpu().numpy() == 4.0).all()
    assert [s["address"] for s in pool.snapshot()] == [base]
    with pytest.raises(TypeError, match="CUDAPluggableAllocator"):
        cuda.MemPool(allocator=alloc)
    del x, y, z, pool
    gc.collect()
    cuda.empty_cache()
    assert calls["free"] == [(base, 20 * MiB, 0, 0)]


_FAULT = """
    import strided as st, strided.cuda as cuda
    from strided import dtypes as dt
    from strided.backends.cuda import driver
    from strided.backends.cuda.kernels import fill_kernel
    x = st.empty(4, device="cuda")
    try:  # an invalid address faults inside the kernel
        fill_kernel(0, dt.float32, 16, (1 << 20,), (1,), 1.0, 0)
        cuda.synchronize()
    except driver.CudaError as e:
        print("FAULT:", e)
    else:
        raise SystemExit("a faulting kernel reported no error")
"""


def test_launch_blocking_names_the_failing_kernel():
    # without CUDA_LAUNCH_BLOCKING the fault surfaces at a later synchronization, nameless
    fault = _run(_FAULT, CUDA_LAUNCH_BLOCKING="0").split("FAULT:")[1].splitlines()[0]
    assert "ILLEGAL_ADDRESS" in fault and "kernel" not in fault
    fault = _run(_FAULT, CUDA_LAUNCH_BLOCKING="1").split("FAULT:")[1].splitlines()[0]
    assert "kernel 'fill'" in fault and "CUDA_LAUNCH_BLOCKING=1" in fault and "ILLEGAL_ADDRESS" in fault
    out = _run("""
        import strided as st
        from strided.backends.cuda import driver
        from strided.backends.cuda.kernels import FILL_FMT, source
        from strided.backends.cuda.launch import get_kernel
        assert driver.LAUNCH_BLOCKING
        x = st.empty(4, device="cuda")
        k = get_kernel(source("fill.cu", "float32"), "fill", FILL_FMT, 0)
        pad = [0] * 7
        try:  # grid.x past 2**31 - 1: the launch itself fails
            k(1 << 31, 256, 0, x.data_ptr(), 4, 1, 4, *pad, 1, *pad, 1.0, 0)
        except driver.CudaError as e:
            print("LAUNCH:", e)
        else:
            raise SystemExit("an out-of-range grid launched")
    """, CUDA_LAUNCH_BLOCKING="1")
    launch = out.split("LAUNCH:")[1].splitlines()[0]
    assert "launching kernel 'fill'" in launch and "CUDA_ERROR_INVALID_VALUE" in launch


@pytest.mark.skipif(cuda.device_count() < 2, reason="needs 2 GPUs")
def test_cross_device_copies():
    a = np.arange(48, dtype=np.float32).reshape(6, 8)
    x0 = st.from_numpy(a).to("cuda:0")
    x1 = x0.to("cuda:1")  # dense peer copy
    assert x1.device == st.device("cuda:1")
    np.testing.assert_array_equal(x1.cpu().numpy(), a)
    # strided source (a transpose) into a strided, wider-typed destination on the other device
    dst = _view(st.zeros(8, 12, dtype=st.float64, device="cuda:1"), 1, (8, 6), (12, 2))
    dst.copy_(_view(x0, 0, (8, 6), (1, 8)))
    np.testing.assert_array_equal(dst.cpu().numpy(), a.T.astype(np.float64))
    # back again, with side streams current on both devices
    s0, s1 = cuda.Stream(0), cuda.Stream(1)
    back = st.empty(6, 8, device="cuda:0")
    with cuda.stream(s0), cuda.stream(s1):
        x1.fill_(5.0)
        back.copy_(x1)
    s0.synchronize()
    s1.synchronize()
    assert (back.cpu().numpy() == 5.0).all()
