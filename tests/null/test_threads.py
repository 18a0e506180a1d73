"""strided.set_num_threads / get_num_threads drive the BLAS library NumPy loaded (no threadpoolctl)."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided.backends.cpu import threads


@pytest.fixture
def restore_threads():
    before = st.get_num_threads()
    yield
    st.set_num_threads(before)


def _numpy_blas_name() -> str:
    try:
        config = np.show_config(mode="dicts")
    except TypeError:  # NumPy < 1.26
        return ""
    return str(config.get("Build Dependencies", {}).get("blas", {}).get("name", "")).lower()


def test_numpys_openblas_is_found():
    lib = threads.blas_library()
    if "openblas" in _numpy_blas_name():
        assert lib is not None and lib.kind == "openblas", lib
        assert "openblas" in lib.path.lower() and "set_num_threads" in lib.set_symbol
    if lib is not None:
        assert lib.get_num_threads() >= 1


def test_set_num_threads_reaches_the_blas_library(restore_threads):
    st.set_num_threads(1)
    assert st.get_num_threads() == 1
    lib = threads.blas_library()
    if lib is not None:
        assert lib.get_num_threads() == 1  # the library's own getter
    st.set_num_threads(2)
    assert st.get_num_threads() == 2
    if lib is not None:
        assert lib.get_num_threads() == 2
    a = st.randn((64, 64), dtype=st.float64)
    np.testing.assert_allclose(st.mm(a, a).numpy(), a.numpy() @ a.numpy(), rtol=1e-12)


def test_fallback_without_a_controllable_blas(monkeypatch):
    monkeypatch.setattr(threads, "_library", None)
    monkeypatch.setattr(threads, "_num_threads", None)
    assert threads.blas_library() is None
    assert st.get_num_threads() >= 1
    st.set_num_threads(3)
    assert st.get_num_threads() == 3


@pytest.mark.parametrize("value, message", [
    (0, "set_num_threads expects a positive integer"),
    (-2, "set_num_threads expects a positive integer"),
    (1.5, "set_num_threads expects an int, but got float"),
    (True, "set_num_threads expects an int, but got bool"),
])
def test_set_num_threads_rejects_bad_values(value, message):
    with pytest.raises(RuntimeError, match=message):
        st.set_num_threads(value)


def test_interop_threads_follow_torchs_rules(monkeypatch):
    # Note [No inter-op pool]: kept with torch's checks and messages; settable once per process
    monkeypatch.setattr(threads, "_num_interop_threads", None)
    assert st.get_num_interop_threads() >= 1
    for bad, match in ((0, "expects a positive integer"), (-2, "expects a positive integer"),
                       (3.0, "expects an int, but got float"), (True, "expects an int, but got bool")):
        with pytest.raises(RuntimeError, match=match):
            st.set_num_interop_threads(bad)
    st.set_num_interop_threads(3)
    assert st.get_num_interop_threads() == 3
    with pytest.raises(RuntimeError, match="cannot set number of interop threads after parallel work"):
        st.set_num_interop_threads(4)
    assert st.get_num_interop_threads() == 3
