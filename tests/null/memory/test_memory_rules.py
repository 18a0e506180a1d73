"""One test per allocator rule (c10 CUDACachingAllocator behaviour)."""

from __future__ import annotations

import threading

import pytest

from strided.memory import OutOfMemoryError, get_allocation_size, register_free_memory_callback, round_size
from strided.memory.blocks import roundup_power2_next_division
from strided.memory.caching import FREE_MEMORY_CALLBACKS
from strided.memory.invariants import check_invariants

MiB = 1 << 20


def test_round_size_512_multiples():
    assert round_size(1) == 512
    assert round_size(512) == 512
    assert round_size(513) == 1024
    assert round_size(1000 * 1000) == 1000448


def test_roundup_power2_divisions():
    assert roundup_power2_next_division(1200, 4) == 1280  # c10's own example
    assert roundup_power2_next_division(1024, 4) == 1024
    assert round_size(3 * MiB, divisions=4) == 3 * MiB
    assert round_size(3 * MiB + 1, divisions=4) == 3 * MiB + 512 * 1024
    # sizes not above 512 * divisions keep 512-rounding
    assert round_size(1500, divisions=4) == 1536


def test_config_divisions_apply(make):
    alloc, _ = make("roundup_power2_divisions:4")
    b = alloc.malloc(5 * MiB + 1)
    assert b.size == 6 * MiB  # 4 divisions of [4 MiB, 8 MiB)
    alloc.free(b)
    alloc2, _ = make("roundup_power2_divisions:[1:4,>:8]")  # '>' sets 2 MiB and up to 8
    c = alloc2.malloc(5 * MiB + 1)
    assert c.size == 5 * MiB + 512 * 1024
    alloc2.free(c)


def test_get_allocation_size():
    assert get_allocation_size(512) == 2 * MiB
    assert get_allocation_size(MiB) == 2 * MiB
    assert get_allocation_size(MiB + 512) == 20 * MiB
    assert get_allocation_size(10 * MiB - 512) == 20 * MiB
    assert get_allocation_size(10 * MiB) == 10 * MiB
    assert get_allocation_size(11 * MiB + 1) == 12 * MiB


def test_small_and_large_pools(make):
    alloc, dev = make()
    a = alloc.malloc(MiB)  # <= 1 MiB: small pool, 2 MiB segment
    b = alloc.malloc(MiB + 1)  # large pool, 20 MiB segment
    s = alloc.memory_stats()
    assert s["segment.small_pool.current"] == 1 and s["segment.large_pool.current"] == 1
    assert s["reserved_bytes.all.current"] == 22 * MiB
    alloc.free(a)
    alloc.free(b)


def test_best_fit_same_stream_ties_by_address(make):
    alloc, _ = make()
    blocks = [alloc.malloc(4096) for _ in range(6)]
    # free two equal-size holes; the lower address wins
    alloc.free(blocks[3])
    alloc.free(blocks[1])
    again = alloc.malloc(4096)
    assert again.ptr == blocks[1].ptr
    # a bigger hole is not chosen over an exact one
    other = alloc.malloc(4096, stream=5)
    assert other.ptr != blocks[3].ptr  # never reuse another stream's block
    for b in [again, other, blocks[0], blocks[2], blocks[4], blocks[5]]:
        alloc.free(b)


def test_should_split_small_pool(make):
    alloc, _ = make()
    b = alloc.malloc(1024)
    assert b.size == 1024  # small pool: split whenever >= 512 bytes remain
    s = alloc.memory_stats()
    assert s["inactive_split.small_pool.current"] == 1
    assert s["inactive_split_bytes.small_pool.current"] == 2 * MiB - 1024
    alloc.free(b)
    assert alloc.memory_stats()["inactive_split.all.current"] == 0


def test_should_split_large_pool_needs_more_than_1mib_rest(make):
    alloc, _ = make()
    a = alloc.malloc(19 * MiB)  # 20 MiB segment, 1 MiB rest: not split
    assert a.size == 20 * MiB
    assert alloc.memory_stats()["allocated_bytes.all.current"] == 20 * MiB
    b = alloc.malloc(18 * MiB)  # new segment, 2 MiB rest: split
    assert b.size == 18 * MiB
    alloc.free(a)
    alloc.free(b)


def test_max_split_size_rules(make):
    alloc, _ = make("max_split_size_mb:40")
    big = alloc.malloc(60 * MiB)
    alloc.free(big)
    small = alloc.malloc(30 * MiB)  # < max_split: must not take the oversize block
    assert small.ptr != big.ptr
    near = alloc.malloc(50 * MiB)  # >= max_split and 60 < 50 + 20: reuses the oversize block whole
    assert near.ptr == big.ptr and near.size == 60 * MiB
    s = alloc.memory_stats()
    assert s["oversize_allocations.current"] == 1 and s["oversize_segments.current"] == 1
    assert s["max_split_size"] == 40 * MiB
    alloc.free(near)
    far = alloc.malloc(40 * MiB)  # 60 >= 40 + 20: too wasteful, new segment
    assert far.ptr != big.ptr
    alloc.free(far)
    alloc.free(small)


def test_max_non_split_rounding(make):
    alloc, _ = make("max_split_size_mb:40,max_non_split_rounding_mb:30")
    big = alloc.malloc(64 * MiB)
    alloc.free(big)
    b = alloc.malloc(40 * MiB)  # 64 < 40 + 30: allowed
    assert b.ptr == big.ptr
    alloc.free(b)


def test_free_memory_callbacks(make):
    alloc, _ = make(capacity=64 * MiB)
    held = [alloc.malloc(30 * MiB), alloc.malloc(30 * MiB)]
    calls = []

    def release() -> bool:
        calls.append(1)
        if held:
            alloc.free(held.pop())
            return True
        return False

    register_free_memory_callback(release)
    try:
        b = alloc.malloc(30 * MiB)  # miss -> callback frees one -> retry finds it
        assert calls and b.size == 30 * MiB
        alloc.free(b)
    finally:
        FREE_MEMORY_CALLBACKS.remove(release)
    for x in held:
        alloc.free(x)
    with pytest.raises(TypeError):
        register_free_memory_callback(3)


def test_garbage_collection_threshold_with_fraction(make):
    alloc, dev = make("garbage_collection_threshold:0.5", capacity=1000 * MiB)
    alloc.set_memory_fraction(0.5)  # 500 MiB allowed; GC when reserved exceeds 250 MiB
    a = alloc.malloc(300 * MiB)
    alloc.free(a)
    c = alloc.malloc(400 * MiB)  # cache miss with 300 > 250 reserved: GC frees the old block first
    assert alloc.memory_reserved() == 400 * MiB
    assert alloc.stats.num_device_free == 1 and alloc.stats.num_alloc_retries == 0
    alloc.free(c)


def test_release_available_cached_blocks_then_retry(make):
    alloc, dev = make("max_split_size_mb:20", capacity=80 * MiB)
    a = alloc.malloc(60 * MiB)
    alloc.free(a)
    b = alloc.malloc(30 * MiB)  # 60 >= 30 + 20: not reused; device full; the oversize block is freed
    assert alloc.stats.num_device_free == 1 and alloc.stats.num_alloc_retries == 0
    alloc.free(b)


def test_release_cached_blocks_and_one_retry(make):
    alloc, dev = make(capacity=60 * MiB)
    a = alloc.malloc(30 * MiB)
    alloc.free(a)
    b = alloc.malloc(40 * MiB)  # cached 30 MiB is too small; device full -> empty cache, retry
    s = alloc.memory_stats()
    assert s["num_alloc_retries"] == 1 and s["num_sync_all_streams"] == 1
    assert s["num_device_free"] == 1 and alloc.memory_reserved() == 40 * MiB
    alloc.free(b)


def test_oom_message_and_numbers(make):
    alloc, dev = make(capacity=100 * MiB)
    keep = alloc.malloc(60 * MiB)
    with pytest.raises(OutOfMemoryError) as info:
        alloc.malloc(50 * MiB)
    err = info.value
    assert isinstance(err, RuntimeError)
    assert str(err) == (
        "CUDA out of memory. Tried to allocate 50.00 MiB. GPU 0 has a total capacity of 100.00 MiB of "
        "which 40.00 MiB is free. Of the allocated memory 60.00 MiB is allocated by PyTorch, and 0 bytes "
        "is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for "
        "Memory Management  (https://docs.pytorch.org/docs/stable/notes/cuda.html"
        "#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)"
    )
    assert (err.requested, err.alloc_size, err.total, err.free) == (50 * MiB, 50 * MiB, 100 * MiB, 40 * MiB)
    assert (err.allocated, err.reserved, err.device, err.allowed) == (60 * MiB, 60 * MiB, 0, None)
    assert alloc.memory_stats()["num_ooms"] == 1
    check_invariants(alloc)
    alloc.free(keep)
    alloc.free(alloc.malloc(50 * MiB))  # fully usable after the OOM


def test_oom_with_fraction_reports_allowed(make):
    alloc, _ = make(capacity=100 * MiB)
    alloc.set_memory_fraction(0.25)
    with pytest.raises(OutOfMemoryError, match=r"25\.00 MiB allowed; Of the allocated") as info:
        alloc.malloc(30 * MiB)
    assert info.value.allowed == 25 * MiB
    assert alloc.get_memory_fraction() == 0.25


def test_oom_more_than_1eb(make):
    alloc, _ = make()
    with pytest.raises(OutOfMemoryError, match="more than 1EB"):
        alloc.malloc(1 << 61)


def test_set_memory_fraction_validation(make):
    alloc, _ = make()
    with pytest.raises(TypeError):
        alloc.set_memory_fraction(1)
    with pytest.raises(ValueError):
        alloc.set_memory_fraction(1.5)


def test_record_stream_waits_for_events(make):
    alloc, dev = make()
    b = alloc.malloc(4 * MiB, stream=0)
    alloc.record_stream(b, 7)
    alloc.record_stream(b, 0)  # the allocation stream itself is ignored
    alloc.free(b)
    s = alloc.memory_stats()
    assert s["active.all.current"] == 1 and s["allocation.all.current"] == 0
    assert s["active_bytes.all.current"] == 4 * MiB
    c = alloc.malloc(4 * MiB)  # event pending: the block is not reused
    assert c.ptr != b.ptr
    dev.complete_stream(7)
    d = alloc.malloc(4 * MiB)  # events processed at malloc: reused now
    assert d.ptr == b.ptr
    assert alloc.memory_stats()["active.all.peak"] == 2
    alloc.free(c)
    alloc.free(d)


def test_empty_cache_syncs_events_and_frees_unsplit(make):
    alloc, dev = make()
    a = alloc.malloc(30 * MiB)
    keep = alloc.malloc(1024)
    b = alloc.malloc(2048)
    alloc.record_stream(a, 3)
    alloc.free(a)
    alloc.free(b)
    alloc.empty_cache()
    s = alloc.memory_stats()
    assert s["num_sync_all_streams"] == 1
    assert alloc.memory_reserved() == 2 * MiB  # the small segment holds a live block
    assert dev.used == 2 * MiB
    alloc.free(keep)
    alloc.empty_cache()
    assert alloc.memory_reserved() == 0 and dev.used == 0


def test_bad_input_errors(make):
    alloc, _ = make()
    other, _ = make()
    with pytest.raises(ValueError, match="malloc: size must be non-negative, got -1"):
        alloc.malloc(-1)
    with pytest.raises(TypeError, match="malloc: size must be an int"):
        alloc.malloc(1.5)
    assert alloc.malloc(0) is None
    alloc.free(None)
    b = alloc.malloc(100)
    with pytest.raises(ValueError, match="belongs to another allocator"):
        other.free(b)
    alloc.free(b)
    with pytest.raises(ValueError, match="double free"):
        alloc.free(b)
    with pytest.raises(ValueError, match="no allocation starts at"):
        alloc.get_block(12345)
    with pytest.raises(TypeError):
        alloc.free("nonsense")


def test_double_free_after_reuse_is_caught(make):
    alloc, _ = make()
    a = alloc.malloc(30 * MiB)
    alloc.free(a)
    b = alloc.malloc(30 * MiB)  # same memory, new Block object
    assert b.ptr == a.ptr and b is not a
    with pytest.raises(ValueError, match="double free"):
        alloc.free(a)
    alloc.free(b)


def test_raw_alloc_and_delete(make):
    alloc, _ = make()
    ptr = alloc.raw_alloc(1000, stream=2)
    assert alloc.get_block(ptr).stream == 2
    alloc.raw_delete(ptr)
    assert alloc.raw_alloc(0) == 0


def test_thread_safety(make):
    alloc, _ = make()
    errors = []

    def work(stream: int) -> None:
        try:
            for k in range(300):
                blocks = [alloc.malloc(512 * (1 + (k + j) % 50), stream) for j in range(5)]
                for b in blocks:
                    alloc.free(b)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s % 2,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    check_invariants(alloc)
    assert alloc.memory_allocated() == 0


def test_release_lock_on_cudamalloc(make):
    alloc, _ = make("release_lock_on_cudamalloc:True")
    b = alloc.malloc(30 * MiB)
    alloc.free(b)
    assert alloc.memory_reserved() == 30 * MiB


def test_unsupported_expandable_warns_and_stays_off(make):
    with pytest.warns(UserWarning, match="expandable_segments not supported on this platform"):
        alloc, _ = make("expandable_segments:True", supports_expandable=False)
    b = alloc.malloc(30 * MiB)
    assert b.segment is None
    alloc.free(b)
