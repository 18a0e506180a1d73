from __future__ import annotations

import pytest

from strided.memory import new_pool_id

MiB = 1 << 20


def test_routing_by_stream_filter(make):
    alloc, _ = make()
    pool = alloc.create_pool()
    alloc.begin_allocate_to_pool(pool, lambda s: s == 3)
    inside = alloc.malloc(4 * MiB, stream=3)
    outside = alloc.malloc(4 * MiB, stream=4)
    alloc.end_allocate_to_pool(pool)
    segs = {s["address"]: s["segment_pool_id"] for s in alloc.segments()}
    assert segs[inside.ptr] == pool and segs[outside.ptr] == (0, 0)
    alloc.free(inside)
    after = alloc.malloc(4 * MiB, stream=3)  # no routing now: the private block is not reused
    assert after.ptr != inside.ptr
    stats = alloc.memory_stats()
    key = f"reserved_bytes_by_private_pools.{pool[0]}_{pool[1]}.all.current"
    assert stats[key] == 20 * MiB
    for b in (outside, after):
        alloc.free(b)
    alloc.release_pool(pool)  # pool done: its memory goes back at the next empty_cache
    alloc.release_pool(pool)  # create_pool + begin_allocate_to_pool = two uses
    alloc.empty_cache()
    assert alloc.memory_reserved() == 0 and pool not in alloc._graph_pools


def test_live_block_keeps_released_pool_memory(make):
    alloc, _ = make()
    pool = new_pool_id(graph=True)
    assert pool[1] == 0 and pool[0] > 0
    alloc.begin_allocate_to_pool(pool, lambda s: True)
    b = alloc.malloc(1000)
    alloc.end_allocate_to_pool(pool)
    alloc.release_pool(pool)
    alloc.empty_cache()
    assert alloc.memory_reserved() == 2 * MiB and pool in alloc._graph_pools
    alloc.free(b)
    alloc.empty_cache()
    assert alloc.memory_reserved() == 0 and pool not in alloc._graph_pools


def test_private_free_bytes_in_oom_message(make):
    alloc, _ = make(capacity=40 * MiB)
    pool = alloc.create_pool()
    alloc.begin_allocate_to_pool(pool, lambda s: True)
    alloc.free(alloc.malloc(5 * MiB))  # a 20 MiB segment, cached in the pool
    alloc.end_allocate_to_pool(pool)
    with pytest.raises(
        Exception, match=r"with 20\.00 MiB allocated in private pools \(e\.g\., CUDA Graphs\), "
    ):
        alloc.malloc(30 * MiB)
    alloc.release_pool(pool)


def test_capture_defers_cross_stream_frees_and_refuses_empty_cache(make):
    alloc, dev = make()
    b = alloc.malloc(4 * MiB)
    alloc.record_stream(b, 2)
    pool = alloc.create_pool()
    alloc.begin_allocate_to_pool(pool, lambda s: s == 9)
    alloc.free(b)
    assert dev.pending_events == []  # no event recorded during a capture
    with pytest.raises(RuntimeError, match="empty_cache"):
        alloc.empty_cache()
    alloc.end_allocate_to_pool(pool)
    alloc.free(alloc.malloc(512))  # first malloc after the capture records the events
    assert len(dev.pending_events) == 1
    dev.complete_all()
    alloc.free(alloc.malloc(512))
    assert alloc.memory_stats()["active_bytes.all.current"] == 0
    alloc.release_pool(pool)


def test_pool_errors(make):
    alloc, _ = make()
    pool = alloc.create_pool()
    alloc.begin_allocate_to_pool(pool, lambda s: True)
    with pytest.raises(RuntimeError, match="already recording"):
        alloc.begin_allocate_to_pool(pool, lambda s: True)
    alloc.end_allocate_to_pool(pool)
    with pytest.raises(RuntimeError, match="not currently recording"):
        alloc.end_allocate_to_pool(pool)
    with pytest.raises(ValueError):
        alloc.create_pool((0, 0))
    with pytest.raises(ValueError):
        alloc.release_pool((5, 5))
    with pytest.raises(TypeError):
        alloc.begin_allocate_to_pool(pool, "s")
    assert alloc.pool_use_count(pool) == 2
