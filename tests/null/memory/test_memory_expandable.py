from __future__ import annotations

from strided.memory.invariants import check_invariants

MiB = 1 << 20


def test_segment_grows_by_pages_per_stream_and_pool(make):
    alloc, dev = make("expandable_segments:True")
    a = alloc.malloc(30 * MiB)  # large pool: 20 MiB pages -> 2 pages
    assert alloc.memory_reserved() == 40 * MiB and dev.num_map == 2
    b = alloc.malloc(5 * MiB)  # fits in the mapped rest
    assert b.ptr == a.ptr + 30 * MiB and alloc.memory_reserved() == 40 * MiB
    c = alloc.malloc(10 * MiB)  # grows the same segment by one page
    assert c.ptr == b.ptr + 5 * MiB and alloc.memory_reserved() == 60 * MiB
    s = alloc.malloc(1000)  # small pool: 2 MiB pages in a separate segment
    assert alloc.memory_reserved() == 62 * MiB
    other = alloc.malloc(1 * MiB + 1, stream=9)  # another stream gets its own segment
    assert abs(other.ptr - a.ptr) >= dev.total_memory
    stats = alloc.memory_stats()
    assert stats["segment.all.current"] == 0  # maps are not counted as segments
    assert stats["num_device_alloc"] == 4 and dev.num_map == 5  # one per mapped range; pages
    for blk in (a, b, c, s, other):
        alloc.free(blk)
    check_invariants(alloc)
    alloc.empty_cache()  # unmaps every fully free page and releases the segments
    assert alloc.memory_reserved() == 0 and dev.used == 0 and not dev.reservations


def test_snapshot_reports_mapped_ranges(make):
    alloc, _ = make("expandable_segments:True")
    alloc.record_history(enabled="all")
    a = alloc.malloc(30 * MiB)
    snap = alloc.snapshot()
    (seg,) = snap["segments"]
    assert seg["is_expandable"] and seg["total_size"] == 40 * MiB
    actions = [e["action"] for e in snap["device_traces"][0]]
    assert actions == ["segment_map", "alloc", "snapshot"]
    alloc.free(a)
    alloc.empty_cache()
    actions = [e["action"] for e in alloc.snapshot()["device_traces"][0]]
    assert actions[-3:] == ["free_completed", "segment_unmap", "snapshot"]


def test_unmap_syncs_stream_and_maps_lowest_hole(make):
    alloc, dev = make("expandable_segments:True")
    a = alloc.malloc(20 * MiB)
    b = alloc.malloc(20 * MiB)
    alloc.free(a)
    alloc.empty_cache()  # page 0 unmapped, page 1 still holds b
    assert alloc.memory_reserved() == 20 * MiB and dev.num_stream_syncs >= 1
    c = alloc.malloc(20 * MiB)  # remapped at the lowest address
    assert c.ptr == a.ptr
    alloc.free(b)
    alloc.free(c)


def test_oom_mid_map_leaves_nothing_mapped(make):
    alloc, dev = make("expandable_segments:True", capacity=50 * MiB)
    a = alloc.malloc(30 * MiB)
    try:
        alloc.malloc(30 * MiB)
    except Exception as e:
        assert type(e).__name__ == "OutOfMemoryError"
    assert alloc.memory_reserved() == dev.used
    check_invariants(alloc)
    alloc.free(a)


def test_expandable_switched_off_skips_expandable_blocks(make):
    alloc, _ = make("expandable_segments:True")
    a = alloc.malloc(30 * MiB)
    alloc.free(a)
    alloc.config.parse("expandable_segments:False")
    b = alloc.malloc(4 * MiB)
    assert b.segment is None
    alloc.free(b)


def test_eager_unmap_returns_pages_after_stream_work(make):
    alloc, dev = make("expandable_segments:True,strided_eager_unmap:True")
    a = alloc.malloc(40 * MiB)
    keep = alloc.malloc(20 * MiB)
    alloc.free(a)
    assert alloc.memory_reserved() == 60 * MiB  # the stream may still use the pages
    alloc.free(alloc.malloc(512))  # polled at malloc, event not complete yet
    assert alloc.memory_reserved() == 60 * MiB + 2 * MiB
    dev.complete_stream(0)
    small = alloc.malloc(512)
    assert alloc.memory_reserved() == 20 * MiB + 2 * MiB  # two free pages unmapped, no sync
    assert dev.num_stream_syncs == 0
    again = alloc.malloc(40 * MiB)  # maps back into the hole at the lowest address
    assert again.ptr == a.ptr
    for blk in (keep, small, again):
        alloc.free(blk)


def test_large_page_size_key(make):
    alloc, dev = make("expandable_segments:True,strided_large_page_mb:2")
    a = alloc.malloc(3 * MiB)
    assert alloc.memory_reserved() == 4 * MiB and dev.num_map == 2
    alloc.free(a)


def test_eager_unmap_min_size(make):
    alloc, dev = make("expandable_segments:True,strided_eager_unmap:True,strided_eager_unmap_min_mb:60")
    a = alloc.malloc(40 * MiB)
    keep = alloc.malloc(20 * MiB)
    alloc.free(a)  # 40 MiB of whole free pages < 60: stays mapped
    dev.complete_stream(0)
    small = alloc.malloc(512)
    assert alloc.memory_reserved() == 60 * MiB + 2 * MiB
    for blk in (keep, small):
        alloc.free(blk)
