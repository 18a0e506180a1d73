"""``set_flush_denormal`` (Note [Flush denormal through fenv] in ``strided/denormals.py``): on glibc x86-64 and
AArch64 it sets the calling thread's flush-to-zero mode, which NumPy's loops (the CPU kernels) obey, and clears it
again; elsewhere it returns False and changes nothing."""

from __future__ import annotations

import platform
import threading

import numpy as np
import pytest

import strided as st
from strided import denormals

SUPPORTED = denormals._fenv() is not None
TINY = 1e-320  # subnormal in float64


@pytest.fixture(autouse=True)
def _restore():
    yield
    st.set_flush_denormal(False)


def test_supported_where_the_layout_is_known():
    on_glibc = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"
    assert SUPPORTED == (on_glibc and platform.machine() in ("x86_64", "aarch64"))


@pytest.mark.skipif(not SUPPORTED, reason="needs glibc on x86-64 or AArch64")
def test_flushes_subnormals_in_cpu_kernels_and_restores():
    x = st.tensor([TINY, 1.0, -TINY], dtype=st.float64)
    assert (x * 1).tolist() == [TINY, 1.0, -TINY]
    assert st.set_flush_denormal(True) is True
    assert (x * 1).tolist() == [0.0, 1.0, 0.0]
    assert (x + 0).tolist() == [0.0, 1.0, 0.0]
    f32 = st.tensor([1e-40, 2.0], dtype=st.float32)  # subnormal in float32
    assert (f32 * 1).tolist() == [0.0, 2.0]
    assert st.set_flush_denormal(True) is True  # already on
    assert st.set_flush_denormal(False) is True
    assert (x * 1).tolist() == [TINY, 1.0, -TINY]
    assert np.float64(TINY) * 1.0 == TINY  # the rest of the environment (rounding, masks) is back as it was
    assert np.float64(1.0) / 3.0 == 1.0 / 3.0


@pytest.mark.skipif(not SUPPORTED, reason="needs glibc on x86-64 or AArch64")
def test_the_mode_belongs_to_the_calling_thread():
    assert st.set_flush_denormal(True)
    seen = []
    t = threading.Thread(target=lambda: seen.append((st.tensor([TINY], dtype=st.float64) * 1).item()))
    t.start()
    t.join()
    assert seen == [TINY]
    assert (st.tensor([TINY], dtype=st.float64) * 1).item() == 0.0


def test_unsupported_platform_returns_false(monkeypatch):
    monkeypatch.setattr(denormals, "_libm", False)
    assert st.set_flush_denormal(True) is False
    assert (st.tensor([TINY], dtype=st.float64) * 1).item() == TINY


def test_mode_must_be_bool():
    with pytest.raises(RuntimeError, match="flush_denormal expects a bool, but got int"):  # torch's words
        st.set_flush_denormal(1)


def test_against_torch():
    torch = pytest.importorskip("torch")
    try:
        assert st.set_flush_denormal(True) == torch.set_flush_denormal(True)
        flushed = (torch.tensor([TINY], dtype=torch.float64) * 1).item()
        assert (st.tensor([TINY], dtype=st.float64) * 1).item() == flushed
    finally:
        torch.set_flush_denormal(False)
