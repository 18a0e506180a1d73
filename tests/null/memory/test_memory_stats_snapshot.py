from __future__ import annotations

import gzip
import pickle
import pickletools

import pytest

from strided.memory import OutOfMemoryError, dump_snapshot, format_size, load_snapshot
from strided.memory.snapshot import loads_snapshot
from strided.memory.stats import STAT_NAMES, TYPE_NAMES

MiB = 1 << 20


def test_memory_stats_keys(make):
    alloc, _ = make()
    stats = alloc.memory_stats()
    expected = {
        f"{s}.{t}.{f}"
        for s in STAT_NAMES
        for t in TYPE_NAMES
        for f in ("current", "peak", "allocated", "freed")
    }
    expected |= {
        f"{s}.{f}"
        for s in ("oversize_allocations", "oversize_segments")
        for f in ("current", "peak", "allocated", "freed")
    }
    expected |= {
        "num_alloc_retries",
        "num_ooms",
        "max_split_size",
        "num_sync_all_streams",
        "num_device_alloc",
        "num_device_free",
        "num_oom_rejections",
    }
    assert set(stats) == expected and len(expected) == 108 + 8 + 7
    assert list(stats) == sorted(stats)


def test_peak_and_accumulated_resets(make):
    alloc, _ = make()
    a = alloc.malloc(10 * MiB)
    b = alloc.malloc(10 * MiB)
    alloc.free(a)
    s = alloc.memory_stats()
    assert s["allocated_bytes.all.peak"] == 20 * MiB and s["allocated_bytes.all.current"] == 10 * MiB
    assert (
        s["allocated_bytes.large_pool.allocated"] == 20 * MiB and s["allocated_bytes.all.freed"] == 10 * MiB
    )
    alloc.reset_peak_memory_stats()
    assert alloc.memory_stats()["allocated_bytes.all.peak"] == 10 * MiB
    alloc.reset_accumulated_memory_stats()
    s = alloc.memory_stats()
    assert s["allocated_bytes.all.allocated"] == 0 and s["allocated_bytes.all.freed"] == 0
    assert s["active.all.freed"] == 0 and s["num_device_alloc"] == 0
    alloc.free(b)
    s = alloc.memory_stats()
    assert s["allocated_bytes.all.freed"] == 10 * MiB and s["active_bytes.all.freed"] == 10 * MiB


def test_summary_table(make):
    alloc, _ = make()
    b = alloc.malloc(3 * MiB)
    text = alloc.memory_summary()
    assert "PyTorch CUDA memory summary, device ID 0" in text
    assert "| Allocated memory      |   3072 KiB |   3072 KiB |   3072 KiB |      0 B   |" in text
    assert all(len(line) == 77 for line in text.splitlines())
    assert "from small pool" not in alloc.memory_summary(abbreviated=True)
    alloc.free(b)


def test_format_size():
    assert format_size(1024) == "1024 bytes"
    assert format_size(1025) == "1.00 KiB"
    assert format_size(MiB) == "1024.00 KiB"
    assert format_size(3 << 30) == "3.00 GiB"


def test_snapshot_format(make):
    alloc, _ = make()
    alloc.record_history(enabled="all", context="all")
    a = alloc.malloc(1000)
    b = alloc.malloc(3000)
    alloc.record_stream(b, 4)
    alloc.free(b)
    snap = alloc.snapshot()
    assert set(snap) == {"segments", "device_traces", "allocator_settings", "external_annotations"}
    (seg,) = snap["segments"]
    assert seg["segment_type"] == "small" and seg["segment_pool_id"] == (0, 0) and seg["stream"] == 0
    assert sum(blk["size"] for blk in seg["blocks"]) == seg["total_size"] == 2 * MiB
    states = [blk["state"] for blk in seg["blocks"]]
    assert states == ["active_allocated", "active_pending_free", "inactive"]
    assert seg["allocated_size"] == 1024 and seg["active_size"] == 1024 + 3072
    assert seg["blocks"][0]["frames"][0]["name"] == "test_snapshot_format"
    trace = snap["device_traces"][0]
    assert [e["action"] for e in trace] == ["segment_alloc", "alloc", "alloc", "free_requested", "snapshot"]
    assert trace[1]["addr"] == a.ptr and trace[1]["size"] == 1000 and "frames" in trace[1]
    assert set(trace[0]) >= {
        "action",
        "addr",
        "size",
        "stream",
        "time_us",
        "compile_context",
        "user_metadata",
    }
    assert snap["allocator_settings"]["roundup_power2_divisions"]["32768"] == 0
    alloc.free(a)


def test_history_ring_buffer_and_off(make):
    alloc, _ = make()
    alloc.record_history(enabled="all", context=None, max_entries=4)
    for _ in range(5):
        alloc.free(alloc.malloc(100))
    trace = alloc.snapshot()["device_traces"][0]
    assert len(trace) == 4 and trace[-1]["action"] == "snapshot"
    assert [e["action"] for e in trace[:3]] == ["alloc", "free_requested", "free_completed"]
    alloc.record_history(enabled=None)
    alloc.free(alloc.malloc(100))
    assert alloc.snapshot()["device_traces"][0] == []
    alloc.record_history(enabled="all", skip_actions=["free_requested"])
    alloc.free(alloc.malloc(100))
    assert [e["action"] for e in alloc.trace_entries()] == ["alloc", "free_completed"]
    with pytest.raises(ValueError):
        alloc.record_history(enabled="sometimes")
    with pytest.raises(ValueError):
        alloc.record_history(skip_actions=["nope"])


def test_oom_trace_entry(make):
    alloc, _ = make(capacity=30 * MiB)
    alloc.record_history()
    with pytest.raises(OutOfMemoryError):
        alloc.malloc(40 * MiB)
    oom = [e for e in alloc.trace_entries() if e["action"] == "oom"][0]
    assert oom["device_free"] == 30 * MiB and oom["size"] == 40 * MiB and "addr" not in oom


def test_dump_is_protocol_4_and_loads_back(make, tmp_path):
    alloc, _ = make()
    alloc.record_history()
    alloc.free(alloc.malloc(5000))
    snap = alloc.snapshot()
    for name in ("s.pickle", "s.pickle.gz"):
        path = tmp_path / name
        dump_snapshot(snap, path)
        raw = path.read_bytes()
        if name.endswith(".gz"):
            raw = gzip.decompress(raw)
        assert raw[:2] == b"\x80\x04"
        ops = {op.name for op, _, _ in pickletools.genops(raw)}
        assert not ops & {"GLOBAL", "STACK_GLOBAL", "REDUCE", "BUILD", "INST", "OBJ", "NEWOBJ"}
        assert load_snapshot(path) == snap


class Evil:
    def __reduce__(self):
        return (print, ("pwned",))


def test_restricted_unpickler_refuses_globals():
    data = pickle.dumps({"segments": [Evil()]}, protocol=4)
    with pytest.raises(pickle.UnpicklingError, match="only plain builtins"):
        loads_snapshot(data)
    assert loads_snapshot(pickle.dumps([{"address": 1}])) == {
        "segments": [{"address": 1}],
        "device_traces": [],
    }
    with pytest.raises(ValueError):
        loads_snapshot(pickle.dumps(3))


def test_pytorch_traces_load_with_restricted_unpickler(data_dir):
    snap = load_snapshot(data_dir / "trace_resnet_train.pkl.gz")
    assert len(snap["device_traces"][0]) == 9789
