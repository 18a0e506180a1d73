"""A snapshot written by strided must load in torch.cuda._memory_viz (skipped without torch)."""

from __future__ import annotations

import pickle

import pytest

torch_viz = pytest.importorskip(
    "torch.cuda._memory_viz", reason="torch is not installed; a CPU build is enough"
)

MiB = 1 << 20


def _strided_snapshot(make, tmp_path):
    from strided.memory import dump_snapshot

    alloc, _ = make()
    alloc.record_history(enabled="all", context="all")
    keep = [alloc.malloc(n) for n in (1000, 3 * MiB, 25 * MiB)]
    tmp = alloc.malloc(700)
    alloc.record_stream(tmp, 3)
    alloc.free(tmp)
    alloc.free(keep.pop())
    alloc.empty_cache()
    path = tmp_path / "snap.pickle"
    dump_snapshot(alloc.snapshot(), path)
    for b in keep:
        alloc.free(b)
    with open(path, "rb") as f:
        return pickle.load(f)  # exactly what torch's tools do with the file


def test_memory_viz_reads_strided_snapshot(make, tmp_path):
    snap = _strided_snapshot(make, tmp_path)
    summary = torch_viz.segsum(snap)  # asserts block sizes add up to each segment
    assert "segments: 2" in summary
    text = torch_viz.trace(snap)
    assert "cudaMalloc" in text and "cudaFree" in text
    assert "MemoryViz.js" in torch_viz.trace_plot(snap)
    assert "MemoryViz.js" in torch_viz.segment_plot(snap)
    flame = torch_viz.segments(snap, format_flamegraph=lambda lines: lines)
    assert "_strided_snapshot" in flame  # the Python frames we recorded
    assert torch_viz.memory(snap, format_flamegraph=lambda lines: lines) is not None
    assert (
        torch_viz.compare(snap["segments"], snap["segments"], format_flamegraph=lambda lines: lines)
        is not None
    )


def test_memory_summary_matches_torch_table(make, monkeypatch):
    import torch.cuda.memory as tmem

    alloc, _ = make()
    blocks = [alloc.malloc(n) for n in (1000, 3 * MiB, 25 * MiB, 700)]
    alloc.free(blocks.pop())
    stats = alloc.memory_stats()
    monkeypatch.setattr(tmem, "memory_stats", lambda device=None: stats)
    for abbreviated in (False, True):
        assert alloc.memory_summary(abbreviated) == tmem.memory_summary(0, abbreviated)
    for b in blocks:
        alloc.free(b)
