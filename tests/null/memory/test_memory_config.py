from __future__ import annotations

import subprocess
import sys

import pytest

from strided.memory import AllocatorConfig, AllocatorConfigError, CachingAllocator, SimulatedDevice
from strided.memory.config import SIZE_MAX

MiB = 1 << 20


def test_defaults():
    c = AllocatorConfig()
    assert c.max_split_size == SIZE_MAX and c.max_non_split_rounding_size == 20 * MiB
    assert c.roundup_power2_divisions == [0] * 16 and c.garbage_collection_threshold == 0.0
    assert not c.expandable_segments and c.settings_dict()["max_split_size"] == -1


def test_full_string_like_c10_test():
    c = AllocatorConfig(
        "max_split_size_mb:40, max_non_split_rounding_mb:30, garbage_collection_threshold:0.5,"
        "roundup_power2_divisions:[64:8,128:2,256:4,512:2,1024:4,>:1],expandable_segments:True,"
        "pinned_use_background_threads:True"
    )
    assert c.max_split_size == 40 * MiB and c.max_non_split_rounding_size == 30 * MiB
    assert c.garbage_collection_threshold == 0.5 and c.expandable_segments
    divs = {size: c.roundup_divisions(size * MiB) for size in (32, 64, 128, 256, 512, 1024, 2048)}
    assert divs == {32: 8, 64: 8, 128: 2, 256: 4, 512: 2, 1024: 4, 2048: 1}
    assert c.pinned_use_background_threads


@pytest.mark.parametrize(
    "text, message",
    [
        ("foo:1", "Unrecognized key 'foo' in CUDA allocator config."),
        ("expandable_segments:yes", "Expected 'True' or 'False' at index 2 in ConfigTokenizer but got 'yes'"),
        ("max_split_size_mb:5", "CachingAllocator option max_split_size_mb too small, must be >= 20"),
        ("max_non_split_rounding_mb:1", "max_non_split_rounding_mb too small, must be >= 20"),
        ("garbage_collection_threshold:1.5", "garbage_collect_threshold is invalid, set it in (0.0, 1.0)"),
        ("roundup_power2_divisions:3", "For roundups, the divisions has to be power of 2"),
        ("roundup_power2_divisions:[3:4]", "For roundups, the intervals have to be power of 2"),
        ("roundup_power2_divisions:[1:3]", "has to be power of 2 or 0 to disable roundup"),
        ("roundup_power2_divisions:[1:4", "Expected closing bracket ']'"),
        ("max_split_size_mb", "expected :"),
        ("max_split_size_mb:x", "Expected an integer"),
        ("backend:foo", "Unknown allocator backend, options are native and cudaMallocAsync"),
        ("per_process_memory_fraction:2", "per_process_memory_fraction is invalid, set it in [0.0, 1.0]"),
        ("pinned_num_register_threads:3", "Number of register threads has to be power of 2, got 3"),
        ("pinned_num_register_threads:256", "less than or equal to 128, got 256"),
        ("expandable_segments:True:max_split_size_mb", "expected ,"),
        ("strided_large_page_mb:3", "strided_large_page_mb must be a positive multiple of 2"),
    ],
)
def test_errors_in_pytorch_words(text, message):
    with pytest.raises(AllocatorConfigError) as info:
        AllocatorConfig(text)
    assert message in str(info.value)
    assert isinstance(info.value, ValueError) and isinstance(info.value, RuntimeError)


def test_parse_resets_three_keys_only():
    c = AllocatorConfig("max_split_size_mb:40,expandable_segments:True,garbage_collection_threshold:0.3")
    c.parse("release_lock_on_cudamalloc:True")
    assert c.max_split_size == SIZE_MAX and c.garbage_collection_threshold == 0.0
    assert c.expandable_segments and c.release_lock_on_cudamalloc
    assert c.last_allocator_settings == "release_lock_on_cudamalloc:True"


def test_failed_parse_changes_nothing():
    c = AllocatorConfig("max_split_size_mb:40")
    with pytest.raises(AllocatorConfigError):
        c.parse("expandable_segments:True,bogus:1")
    assert c.max_split_size == 40 * MiB and not c.expandable_segments


def test_reserve_values():
    c = AllocatorConfig("expandable_segments_reserve:0.5,expandable_segments_reserve_by_class:[a:40G,b:0.25]")
    assert c.expandable_segments_reserve == (True, 0.5)
    assert c.expandable_segments_reserve_by_class == {"a": (False, 40.0), "b": (True, 0.25)}
    with pytest.warns(UserWarning, match="Ignoring invalid expandable-segment reserve value"):
        AllocatorConfig("expandable_segments_reserve:-1")


def test_runtime_change_reaches_allocator():
    cfg = AllocatorConfig()
    alloc = CachingAllocator(SimulatedDevice(), cfg)
    a = alloc.malloc(30 * MiB)
    assert a.segment is None
    cfg.parse("expandable_segments:True")
    b = alloc.malloc(30 * MiB)
    assert b.segment is not None
    assert alloc.memory_stats()["max_split_size"] == -1
    cfg.parse("max_split_size_mb:64")
    assert alloc.memory_stats()["max_split_size"] == 64 * MiB
    alloc.free(a)
    alloc.free(b)


def test_per_process_memory_fraction_key():
    alloc = CachingAllocator(
        SimulatedDevice(capacity=100 * MiB), AllocatorConfig("per_process_memory_fraction:0.5")
    )
    assert alloc.get_memory_fraction() == 0.5


def _env_settings(env: dict) -> str:
    code = "from strided.memory import get_allocator_settings; print(get_allocator_settings())"
    base = {k: v for k, v in __import__("os").environ.items() if not k.endswith("ALLOC_CONF")}
    out = subprocess.run([sys.executable, "-c", code], env={**base, **env}, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_environment_precedence():
    assert _env_settings({"PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:64"}) == "max_split_size_mb:64"
    both = {
        "PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:64",
        "STRIDED_CUDA_ALLOC_CONF": "expandable_segments:True",
    }
    assert _env_settings(both) == "expandable_segments:True"


def test_runtime_setter():
    from strided.memory import allocator_config, get_allocator_settings, set_allocator_settings

    old = get_allocator_settings()
    try:
        set_allocator_settings("max_split_size_mb:100")
        assert allocator_config.max_split_size == 100 * MiB
        with pytest.raises(TypeError):
            set_allocator_settings(5)
    finally:
        allocator_config.parse(old)
