"""Golden replays of the PyTorch traces in tests/data (recorded on an H200 with PyTorch 2.11)."""

from __future__ import annotations

import json

import pytest

from strided.memory import load_snapshot
from strided.memory.replay import decode_trace, replay

TRACES = ["trace_gpt2_train.pkl.gz", "trace_resnet_train.pkl.gz"]
OURS = "expandable_segments:True,strided_eager_unmap:True"


@pytest.fixture(scope="module")
def decoded():
    from pathlib import Path

    data = Path(__file__).resolve().parents[2] / "data"
    ref = json.loads((data / "pytorch_reference.json").read_text())["traces"]
    return {name: (decode_trace(load_snapshot(data / name)), ref[name]) for name in TRACES}


@pytest.mark.parametrize("name", TRACES)
def test_default_config_reproduces_pytorch_exactly(decoded, name):
    events, ref = decoded[name]
    r = replay(events, "")
    assert r.address_mismatches == 0 and r.exact_addresses and r.skipped_frees == 0 and r.ooms == 0
    assert r.peak_allocated == ref["default_config"]["max_allocated"]
    assert r.peak_reserved == ref["default_config"]["max_reserved"]
    assert r.num_device_alloc == ref["default_config"]["num_device_alloc"]


@pytest.mark.parametrize("name", TRACES)
def test_expandable_matches_pytorch_expandable_run(decoded, name):
    events, ref = decoded[name]
    r = replay(events, "expandable_segments:True")
    exp = ref["expandable_segments_True_separate_run"]
    assert (r.peak_allocated, r.peak_reserved, r.num_device_alloc) == (
        exp["max_allocated"],
        exp["max_reserved"],
        exp["num_device_alloc"],
    )


@pytest.mark.parametrize("name", TRACES)
def test_our_policy_beats_both_pytorch_figures(decoded, name):
    events, ref = decoded[name]
    r = replay(events, OURS)
    assert r.peak_reserved < ref["default_config"]["max_reserved"]
    assert r.peak_reserved < ref["expandable_segments_True_separate_run"]["max_reserved"]
    assert r.peak_reserved <= 1.02 * r.peak_allocated
    acted = sum(1 for op in events.ops if op[0] != 3)  # allocs and frees, not completions
    assert len(r.reserved_timeline) == len(r.allocated_timeline) == acted
    assert max(r.reserved_timeline) == r.peak_reserved and max(r.allocated_timeline) == r.peak_allocated


def test_truncated_trace_skips_unknown_frees(decoded):
    events, _ = decoded["trace_resnet_train.pkl.gz"]
    snap = load_snapshot(__import__("pathlib").Path(__file__).resolve().parents[2] / "data" / TRACES[1])
    trace = snap["device_traces"][0]
    cut = {"device_traces": [trace[len(trace) // 2 :]], "segments": []}
    r = replay(cut, "")
    assert r.skipped_frees > 0 and r.ooms == 0


def test_deferred_free_completes_at_recorded_point():
    trace = [
        {"action": "segment_alloc", "addr": 1 << 40, "size": 2 << 20, "stream": 0},
        {"action": "alloc", "addr": 1 << 40, "size": 1000, "stream": 0},
        {"action": "free_requested", "addr": 1 << 40, "size": 1000, "stream": 0},
        {"action": "alloc", "addr": (1 << 40) + 1024, "size": 1000, "stream": 0},
        {"action": "free_completed", "addr": 1 << 40, "size": 1000, "stream": 0},
        {"action": "alloc", "addr": 1 << 40, "size": 1000, "stream": 0},
    ]
    r = replay({"device_traces": [trace]}, "")
    assert r.address_mismatches == 0 and r.peak_allocated == 2048


def test_replay_rejects_snapshots_without_traces():
    with pytest.raises(ValueError, match="no device_traces"):
        replay({"segments": []}, "")


def test_strided_snapshot_replays_exactly(make, tmp_path):
    import random

    from strided.memory import dump_snapshot

    alloc, _ = make()
    alloc.record_history(enabled="all", context=None)
    rnd = random.Random(7)
    live = []
    for _ in range(400):
        if live and rnd.random() < 0.45:
            alloc.free(live.pop(rnd.randrange(len(live))))
        else:
            live.append(alloc.malloc(rnd.choice([700, 5000, 300_000, 3 << 20, 12 << 20, 40 << 20])))
    path = tmp_path / "mine.pickle.gz"
    dump_snapshot(alloc.snapshot(), path)
    r = replay(load_snapshot(path), "")
    assert r.exact_addresses and r.address_mismatches == 0
    stats = alloc.memory_stats()
    assert r.peak_allocated == stats["allocated_bytes.all.peak"]
    assert r.peak_reserved == stats["reserved_bytes.all.peak"]
    assert r.num_device_alloc == stats["num_device_alloc"]
    for b in live:
        alloc.free(b)
