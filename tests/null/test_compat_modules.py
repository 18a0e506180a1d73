"""torch's compatibility modules: ``backends.cudnn`` flags, the back ends and packages strided lacks, the
deprecated ``cuda.amp`` names."""

from __future__ import annotations

import threading

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


def test_backends_strided_lacks_answer_as_a_build_without_them():
    # Note [Backends strided lacks]: the device-selection idiom runs and picks the CPU here
    device = "cuda" if st.cuda.is_available() else "mps" if st.backends.mps.is_available() else "cpu"
    assert device in ("cuda", "cpu")
    assert not st.backends.mps.is_built()
    assert not st.backends.mkl.is_available() and not st.backends.openmp.is_available()
    assert not st.backends.mkldnn.is_available() and st.backends.mkldnn.enabled
    with st.backends.mkldnn.flags(enabled=False):
        assert st.backends.mkldnn.enabled is False
    assert st.backends.mkldnn.enabled is True
    import strided.backends.mps  # noqa: F401 - importable by name, as torch.backends.mps


def test_distributed_reports_no_process_groups():
    # Note [No process groups]: the usual guard is False; other names say why they are missing
    dist = st.distributed
    assert dist.is_available() is False and dist.is_initialized() is False
    assert not hasattr(dist, "get_rank")
    with pytest.raises(AttributeError, match=r"init_process_group: strided has no process-group back end"):
        dist.init_process_group("nccl")


def test_set_multithreading_enabled_is_thread_local_and_restores():
    from strided.autograd import grad_mode

    assert grad_mode.is_multithreading_enabled() and st.autograd.is_multithreading_enabled()
    with st.autograd.set_multithreading_enabled(False):
        assert not grad_mode.is_multithreading_enabled()
        seen = []
        t = threading.Thread(target=lambda: seen.append(grad_mode.is_multithreading_enabled()))
        t.start()
        t.join()
        assert seen == [True]  # another thread keeps its own setting
        x = st.ones(3, requires_grad=True)
        (x * 2).sum().backward()  # backward runs (on this thread) either way
        assert x.grad.tolist() == [2.0, 2.0, 2.0]
    assert grad_mode.is_multithreading_enabled()
    st.autograd.set_multithreading_enabled(False).clone()  # takes effect at once, as torch's function form
    assert not grad_mode.is_multithreading_enabled()
    st.autograd.set_multithreading_enabled(True)
    with pytest.raises(TypeError, match="argument 'enabled' \\(position 1\\) must be bool, not int"):
        st.autograd.set_multithreading_enabled(1)


def test_signature_leftovers_take_torchs_keywords():
    x = st.ones(2, requires_grad=True)
    with pytest.warns(FutureWarning, match="only_inputs argument is deprecated and is ignored now"):
        (g,) = st.autograd.grad((x * 3).sum(), x, only_inputs=False)
    assert g.tolist() == [3.0, 3.0]
    assert st.cuda.memory_snapshot(mempool_id=None, include_traces=False) == [] or st.cuda.is_available()
    with pytest.raises(TypeError, match="include_traces must be a bool"):
        st.cuda.memory_snapshot(include_traces="no")
    with pytest.raises(TypeError, match="mempool_id must be a pair of ints"):
        st.cuda.memory_snapshot(mempool_id=3)
    out = st.empty(2, 2)
    for fn in (st.qr, st.cholesky):  # removed in torch 2.14: out= reaches the removal message, not a TypeError
        with pytest.raises(RuntimeError, match="deprecated since version 1.9 and is now removed"):
            fn(st.eye(2), out=out)
