"""`strided memory peak`: the live set at a trace's peak of allocated memory (Note [Peak breakdown])."""

from __future__ import annotations

import json

import pytest

from strided.cli import main
from strided.memory import dump_snapshot, load_snapshot
from strided.memory.peak import format_peak, peak_breakdown, site_of
from strided.memory.replay import replay

MiB = 1 << 20


def test_pytorch_trace_peak_is_pytorchs_and_live_blocks_add_up(data_dir):
    snap = load_snapshot(data_dir / "trace_gpt2_train.pkl.gz")
    ref = json.loads((data_dir / "pytorch_reference.json").read_text())["traces"]["trace_gpt2_train.pkl.gz"]
    report = peak_breakdown(snap)
    assert report.peak_allocated == ref["default_config"]["max_allocated"] == 7_722_708_480
    assert sum(a.block_size for a in report.live) == report.peak_allocated
    assert all(a.block_size >= a.requested for a in report.live)
    assert snap["device_traces"][0][report.entry]["action"] == "alloc"
    groups = report.groups()
    assert not report.has_frames and groups[0].key.startswith("size ")
    assert [g.bytes for g in groups] == sorted((g.bytes for g in groups), reverse=True)
    assert sum(g.count for g in groups) == len(report.live)
    # under other settings the live set is the same allocations, in other block sizes
    other = peak_breakdown(snap, "expandable_segments:True")
    assert other.peak_allocated == replay(snap, "expandable_segments:True").peak_allocated
    assert sum(a.block_size for a in other.live) == other.peak_allocated


def _big(alloc):
    return alloc.malloc(40 * MiB)


def _small(alloc):
    return alloc.malloc(3 * MiB)


def test_strided_trace_with_stacks_groups_by_source_line(make, tmp_path):
    alloc, _ = make()
    alloc.record_history(enabled="all", context="all", stacks="python")
    held = [_big(alloc), _big(alloc), _small(alloc)]
    temp = [_small(alloc) for _ in range(4)]
    for b in temp:  # the peak is here: 2 x 40 MiB + 5 x 3 MiB
        alloc.free(b)
    held.append(_small(alloc))  # below the peak: not counted twice
    path = tmp_path / "stacks.pickle.gz"
    dump_snapshot(alloc.snapshot(), path)
    report = peak_breakdown(load_snapshot(path))
    assert report.has_frames
    assert report.peak_allocated == 80 * MiB + 5 * 3 * MiB == alloc.memory_stats()["allocated_bytes.all.peak"]
    groups = {g.key.rsplit(" in ", 1)[1]: g for g in report.groups()}
    assert set(groups) == {"_big", "_small"}
    assert (groups["_big"].count, groups["_big"].bytes) == (2, 80 * MiB)
    assert (groups["_small"].count, groups["_small"].bytes) == (5, 15 * MiB)
    assert "test_memory_peak.py:" in groups["_big"].key
    text = format_peak(report, "stacks", top=1)
    assert "source line" in text and "_big" in text and "(1 more groups)" in text
    for b in held:
        alloc.free(b)


def test_site_skips_framework_frames():
    frames = [{"filename": "/x/site-packages/torch/nn/functional.py", "line": 1, "name": "linear"},
              {"filename": "/home/me/model.py", "line": 42, "name": "forward"}]
    assert site_of(frames) == "/home/me/model.py:42 in forward"
    only_lib = frames[:1]
    assert site_of(only_lib) == "/x/site-packages/torch/nn/functional.py:1 in linear"
    assert site_of([]) == "(no stack)"
    formula = {"filename": "derivatives.yaml:342:4", "line": 3, "name": "backward"}  # a compiled derivative
    import strided

    ours = {"filename": strided.memory.peak.__file__, "line": 1, "name": "x"}
    checkout = {"filename": "/home/me/strided/train.py", "line": 7, "name": "main"}  # a user's dir named strided
    assert site_of([ours, checkout]) == "/home/me/strided/train.py:7 in main"
    native = [{"filename": "/usr/include/c++/11/bits/unique_ptr.h", "line": 1, "name": "f"},  # stacks="all"
              {"filename": "??", "line": 0, "name": "g"},
              {"filename": "/usr/lib/libc.so.6", "line": 0, "name": "h"}]
    assert site_of(native + frames) == "/home/me/model.py:42 in forward"
    assert site_of([formula, frames[1]]) == "/home/me/model.py:42 in forward"


def test_memory_from_before_recording_is_named_as_left_out(make):
    alloc, _ = make()
    before = [alloc.malloc(5 * MiB), alloc.malloc(7 * MiB)]
    alloc.record_history(enabled="all", context="all", stacks="python")
    held = _big(alloc)
    alloc.free(before.pop())  # a free the trace has no alloc for
    report = peak_breakdown(alloc.snapshot())
    assert report.peak_allocated == 40 * MiB and report.untraced_bytes == 5 * MiB and report.skipped_frees == 1
    assert "before recording began is not in this breakdown: 5.00 MiB of it still allocated at the snapshot, " \
           "1 frees of it" in format_peak(report)
    alloc.free(held)
    alloc.free(before.pop())


def test_trace_without_allocations_has_no_peak(make):
    alloc, _ = make()
    snap = alloc.snapshot()
    snap["device_traces"] = [[{"action": "snapshot", "addr": 0, "size": 0, "stream": 0}]]
    report = peak_breakdown(snap)
    assert report.peak_allocated == 0 and report.live == [] and "0 live allocations" in format_peak(report)


def test_peak_command(data_dir, capsys):
    trace = str(data_dir / "trace_resnet_train.pkl.gz")
    assert main(["memory", "peak", trace, "--top", "2"]) == 0
    out = capsys.readouterr().out
    assert "5,854,787,584 bytes" in out and "grouped by size" in out and "more groups" in out
    assert main(["memory", "peak", trace, "--top", "3", "--json", "--config", "default"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["peak_allocated"] == 5_854_787_584 and len(data["groups"]) == 3
    assert data["grouped_by"] == "size"
    with pytest.raises(SystemExit, match="--top must be at least 1"):
        main(["memory", "peak", trace, "--top", "0"])
    with pytest.raises(SystemExit, match="bad --config"):
        main(["memory", "peak", trace, "--config", "no_such_key:1"])


def test_stats_lists_live_blocks_by_source_line_or_size(make, data_dir):
    from strided.memory.cli import summarize_snapshot

    alloc, _ = make()
    alloc.record_history(enabled="all", context="all", stacks="python")
    held = [_big(alloc), _big(alloc), _small(alloc)]
    text = summarize_snapshot(alloc.snapshot(), "mine")
    assert "live by source line (largest 2 of 2)" in text
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if "live by source line" in line)
    assert "80.00 MiB in     2" in lines[at + 1] and lines[at + 1].endswith("in _big")
    assert "3.00 MiB in     1" in lines[at + 2] and lines[at + 2].endswith("in _small")
    for b in held:
        alloc.free(b)
    text = summarize_snapshot(load_snapshot(data_dir / "trace_gpt2_train.pkl.gz"), "gpt2")
    assert "live by size (largest 2 of 2)" in text and "64.00 MiB in     2  size 32.00 MiB" in text


def test_bad_input_is_named(data_dir):
    snap = load_snapshot(data_dir / "trace_resnet_train.pkl.gz")
    with pytest.raises(ValueError, match="peak: the snapshot has no device_traces"):
        peak_breakdown({})
    with pytest.raises(ValueError, match="peak: no trace for device 3; the snapshot has 1"):
        peak_breakdown(snap, device=3)
    with pytest.raises(ValueError, match="format_peak: top must be an int of at least 1, got 0"):
        format_peak(peak_breakdown(snap), top=0)
    tiny = peak_breakdown(snap, capacity=64 * MiB)  # most allocations do not fit: said, not hidden
    assert tiny.ooms > 0 and f"({tiny.ooms} allocations did not fit the simulated device" in format_peak(tiny)
    with pytest.raises(SystemExit, match="strided memory peak: no trace for device 2"):
        main(["memory", "peak", str(data_dir / "trace_resnet_train.pkl.gz"), "--device", "2"])
