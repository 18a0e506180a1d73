"""torch's compatibility modules: ``backends.cudnn`` flags and the deprecated ``cuda.amp`` names."""

from __future__ import annotations

import pytest

import strided as st


def test_cudnn_reports_unavailable_and_keeps_the_flags_a_script_sets():
    c = st.backends.cudnn
    assert c.is_available() is False and c.version() is None and c.is_acceptable(st.ones(2)) is False
    assert (c.enabled, c.benchmark, c.deterministic, c.allow_tf32, c.benchmark_limit) == (True, False, False, True, 10)
    c.benchmark = True
    try:
        assert st.backends.cudnn.benchmark is True
    finally:
        c.benchmark = False


def test_cudnn_flags_restore_on_exit_and_on_error():
    c = st.backends.cudnn
    with pytest.raises(ValueError):
        with c.flags(enabled=False, deterministic=True, allow_tf32=False):
            assert (c.enabled, c.deterministic, c.allow_tf32) == (False, True, False)
            raise ValueError
    assert (c.enabled, c.deterministic, c.allow_tf32) == (True, False, True)


def test_cuda_amp_names_warn_and_build_the_cuda_objects():
    with pytest.warns(FutureWarning, match=r"Please use `strided.amp.GradScaler\('cuda', args...\)`"):
        scaler = st.cuda.amp.GradScaler(init_scale=8.0, enabled=False)
    assert isinstance(scaler, st.amp.GradScaler) and not scaler.is_enabled()
    with pytest.warns(FutureWarning, match=r"Please use `strided.amp.autocast\('cuda', args...\)`"):
        region = st.cuda.amp.autocast(dtype=st.bfloat16)
    assert isinstance(region, st.amp.autocast) and region.device == "cuda" and region.fast_dtype is st.bfloat16
