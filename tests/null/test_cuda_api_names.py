"""strided.cuda's remaining torch.cuda names: nested stats, the deprecated memory aliases (torch's warnings),
pinned-memory stat resets, seeding, device_of, peer access and tf32 support; CUDA cases against torch's."""

from __future__ import annotations

import gc
import re

import pytest

import strided as st
import strided.cuda as sc

CUDA = pytest.mark.skipif(not sc.is_available(), reason="no CUDA device")


def test_nested_dict_is_the_flat_stats_nested():
    from strided.cuda.memory import _nested

    flat = {"allocated_bytes.all.current": 5, "allocated_bytes.small_pool.peak": 2, "num_ooms": 1}
    assert _nested(flat) == {"allocated_bytes": {"all": {"current": 5}, "small_pool": {"peak": 2}}, "num_ooms": 1}
    assert sc.memory_stats_as_nested_dict() == {} or "allocated_bytes" in sc.memory_stats_as_nested_dict()


@pytest.mark.parametrize("name,words", [
    ("reset_max_memory_allocated", "reset_max_memory_allocated now calls torch.cuda.reset_peak_memory_stats"),
    ("reset_max_memory_cached", "reset_max_memory_cached now calls torch.cuda.reset_peak_memory_stats"),
    ("memory_cached", "`torch.cuda.memory_cached` has been renamed to `torch.cuda.memory_reserved`"),
    ("max_memory_cached", "`torch.cuda.max_memory_cached` has been renamed to `torch.cuda.max_memory_reserved`"),
])
def test_deprecated_aliases_warn_in_torchs_words(name, words):
    if not sc.is_available() and name.startswith("reset"):
        pytest.skip("resets need a device to look up")  # torch's need one too
    with pytest.warns(FutureWarning, match=words):
        getattr(sc, name)()


def test_host_stat_resets_and_names():
    from strided.backends.cuda.host_allocator import host_allocator

    host_allocator.stats["allocations"][2] += 3  # as if blocks had been made
    host_allocator.num_host_alloc += 3
    sc.reset_accumulated_host_memory_stats()
    assert sc.host_memory_stats()["allocations.allocated"] == 0 and sc.host_memory_stats()["num_host_alloc"] == 0
    sc.reset_peak_host_memory_stats()
    nested = sc.host_memory_stats_as_nested_dict()
    assert nested["allocated_bytes"]["peak"] == nested["allocated_bytes"]["current"]
    assert sc.get_allocator_backend() == "native"
    for name in ("CUDAPluggableAllocator", "change_current_allocator", "get_per_process_memory_fraction", "seed",
                 "seed_all", "initial_seed", "can_device_access_peer", "device_of", "is_tf32_supported"):
        assert callable(getattr(sc, name)), name


def test_device_of_a_cpu_tensor_changes_nothing():
    with sc.device_of(st.ones(2)):
        pass
    if not sc.is_available():
        assert sc.is_tf32_supported() is False and sc.default_generators == ()


@CUDA
def test_cuda_names_match_torch():
    torch = pytest.importorskip("torch")
    x = st.ones(4, device="cuda")
    t = torch.ones(4, device="cuda")  # torch reports nothing before its allocator is used
    gc.collect()  # a collection between the two reads frees earlier tests' tensors (seen once on the H200)
    gc.disable()
    try:
        nested = sc.memory_stats_as_nested_dict()
        allocated = sc.memory_allocated()
    finally:
        gc.enable()
    theirs = torch.cuda.memory_stats_as_nested_dict()
    del t
    # num_oom_rejections is the newest torch's key (2.14), which an older torch (the GPU machine's 2.11) lacks
    # reserved_bytes_by_private_pools appears (in torch too) only while a private pool lives: an earlier test's
    # MemPool or graph pool in this process may still hold cached memory, and torch has none here
    pools = nested.pop("reserved_bytes_by_private_pools", {})
    for pool_key, by_type in pools.items():
        assert re.fullmatch(r"-?\d+_-?\d+", pool_key)
        assert set(by_type) == {"all", "small_pool", "large_pool"}
        assert all(set(fields) == {"current", "peak", "allocated", "freed"} for fields in by_type.values())
    assert set(nested) <= set(theirs) | {"max_split_size", "oversize_allocations", "oversize_segments",
                                         "requested_bytes", "num_oom_rejections"}
    assert nested["allocated_bytes"]["all"]["current"] == allocated
    assert sc.can_device_access_peer(0, 0) == torch.cuda.can_device_access_peer(0, 0)
    assert sc.is_tf32_supported() == torch.cuda.is_tf32_supported()
    sc.manual_seed(7)
    assert sc.initial_seed() == 7
    sc.seed_all()
    assert len(sc.default_generators) == sc.device_count()
    with sc.device_of(x):
        assert sc.current_device() == 0


@pytest.mark.parametrize("mode,level", [("default", 0), ("warn", 1), ("error", 2), (0, 0), (1, 1), (2, 2)])
def test_sync_debug_mode_names_and_numbers(mode, level):
    try:
        sc.set_sync_debug_mode(mode)
        assert sc.get_sync_debug_mode() == level
    finally:
        sc.set_sync_debug_mode(0)


@pytest.mark.parametrize("mode,words", [
    ("loud", "invalid value of debug_mode, expected one of `default`, `warn`, `error`"),
    (3, "invalid value of debug_mode, expected one of 0,1,2"),
    (-1, "invalid value of debug_mode, expected one of 0,1,2"),
    (1.0, "invalid argument to set_sync_debug_mode, debug_mode type is float"),
    (True, "invalid argument to set_sync_debug_mode, debug_mode type is bool"),
])
def test_sync_debug_mode_refuses_other_values_and_keeps_the_mode(mode, words):
    sc.set_sync_debug_mode("warn")
    try:
        with pytest.raises(RuntimeError, match=words.replace("(", r"\(")):
            sc.set_sync_debug_mode(mode)
        assert sc.get_sync_debug_mode() == 1
    finally:
        sc.set_sync_debug_mode(0)


def test_arch_list_is_what_nvrtc_compiles_for():
    # Note [Arch list]: strided compiles per device with NVRTC, so its list is NVRTC's targets
    from strided.backends.cuda.compiler import supported_archs

    archs = sc.get_arch_list()
    try:
        expected = [f"sm_{a}" for a in supported_archs()]
    except Exception:  # noqa: BLE001 - no NVRTC library here: torch's CPU-build answer
        expected = []
    assert archs == expected and all(re.fullmatch(r"sm_\d+", a) for a in archs)
    flags = sc.get_gencode_flags()
    first = f"-gencode compute=compute_{archs[0][3:]},code={archs[0]}" if archs else ""
    assert flags.split(" -gencode ")[0] == first
    assert flags.count("-gencode") == len(archs)


def test_caching_allocator_disabled_restores_the_setting():
    from strided.backends.cuda import allocator

    before = allocator.NO_CACHING
    with pytest.raises(KeyError):
        with sc.caching_allocator_disabled():
            assert allocator.NO_CACHING
            raise KeyError("inside")  # restored on the way out of an exception too
    assert allocator.NO_CACHING == before


def test_torchs_parameter_names_are_taken_as_keywords():
    # torch.cuda's parameter names (found by comparing signatures): keyword calls reach the function
    with sc.stream(stream=None), sc.StreamContext(stream=None), sc.device(device=None):
        sc.set_stream(stream=None)
    with pytest.raises(ValueError, match="was not allocated by caching_allocator_alloc"):
        sc.caching_allocator_delete(mem_ptr=12345)
    sc.set_device(device=-1)  # a negative index does nothing, as torch's
    if sc.is_available():
        sc.set_device(device=sc.current_device())
    else:
        with pytest.raises(RuntimeError, match="Found no NVIDIA driver"):  # torch's refusal without a GPU
            sc.set_device(device=0)
        with pytest.raises(RuntimeError, match="Found no NVIDIA driver"):
            with sc.device(0):
                pass
    for fn in (sc.get_device_name, sc.get_device_capability, sc.get_device_properties, sc.synchronize,
               sc.mem_get_info):
        if sc.is_available():
            fn(device=0)
        else:
            with pytest.raises(RuntimeError):  # no GPU here: the function's own refusal, not a TypeError
                fn(device=0)
