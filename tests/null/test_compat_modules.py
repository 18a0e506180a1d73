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


def test_sdpa_kernel_switches_gate_the_one_implementation():
    from strided.nn.attention import SDPBackend, sdpa_kernel

    q = st.randn(1, 2, 4, 8)
    expected = st.nn.functional.scaled_dot_product_attention(q, q, q)
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        assert not st.backends.cuda.math_sdp_enabled() and st.backends.cuda.flash_sdp_enabled()
        with pytest.raises(RuntimeError, match="No viable backend for scaled_dot_product_attention was found"):
            st.nn.functional.scaled_dot_product_attention(q, q, q)
    with sdpa_kernel([SDPBackend.MATH, SDPBackend.EFFICIENT_ATTENTION]):
        assert not st.backends.cuda.flash_sdp_enabled()
        assert st.equal(st.nn.functional.scaled_dot_product_attention(q, q, q), expected)
    assert st.backends.cuda.flash_sdp_enabled() and st.backends.cuda.math_sdp_enabled()
    with pytest.raises(TypeError, match="Backend must be an instance of SDPBackend"):
        with sdpa_kernel(3):
            pass


def test_backends_cuda_sdp_switches_and_the_deprecated_block():
    c = st.backends.cuda
    c.enable_math_sdp(False)
    try:
        assert not c.math_sdp_enabled()
        with pytest.raises(RuntimeError, match="No viable backend"):
            st.nn.functional.scaled_dot_product_attention(st.ones(1, 2, 3), st.ones(1, 2, 3), st.ones(1, 2, 3))
    finally:
        c.enable_math_sdp(True)
    with pytest.warns(FutureWarning, match="sdp_kernel\\(\\)` is deprecated"):
        with c.sdp_kernel(enable_flash=False, enable_cudnn=False):
            assert not c.flash_sdp_enabled() and not c.cudnn_sdp_enabled() and c.mem_efficient_sdp_enabled()
    assert c.flash_sdp_enabled() and c.cudnn_sdp_enabled()


def test_is_bf16_supported_is_false_without_a_gpu():
    if not st.cuda.is_available():
        assert st.cuda.is_bf16_supported() is False
    else:
        assert st.cuda.is_bf16_supported() is True
        assert st.cuda.is_bf16_supported(including_emulation=False) is (st.cuda.get_device_capability()[0] >= 8)
