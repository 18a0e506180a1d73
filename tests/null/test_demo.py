"""The demo: the tiny GPT's loss falls on CPU in a few dozen steps, and the command line works."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

import strided as st
from strided import demo


def test_shipped_text_and_vocabulary():
    text = demo.load_text()
    assert 20_000 <= len(text.encode()) <= 60_000
    data = demo.CharData(text, st.device("cpu"), seed=0)
    x, y = data.batch("train", 4, 8)
    assert x.shape == (4, 8) and x.dtype is st.int64
    assert data.decode(x[0, 1:].tolist()) == data.decode(y[0, :-1].tolist())


def test_tiny_config_loss_falls_on_cpu():
    cfg = replace(demo.CONFIGS["tiny"], steps=60, warmup=5)
    threads = st.get_num_threads()
    st.set_num_threads(1)  # as the demo does for this size (Note [Demo threads])
    try:
        result = demo.train(cfg, st.device("cpu"), use_amp=False, seed=0, sample_tokens=20, log=lambda *a: None)
    finally:
        st.set_num_threads(threads)
    losses = result["losses"]
    start, end = sum(losses[:3]) / 3, sum(losses[-10:]) / 10
    vocab = math.log(len(set(demo.load_text())))
    assert abs(start - vocab) < 0.3  # a fresh model predicts about uniformly
    assert end < start - 0.6, (start, end)
    assert math.isfinite(result["val_loss"]) and len(result["sample"]) == 20
    assert result["op_stats"].total_calls > 0


def test_cli_help_and_bad_arguments(capsys):
    with pytest.raises(SystemExit) as e:
        demo.main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    for flag in ("--device", "--steps", "--config", "--seed", "--sample-tokens", "--amp", "--no-amp", "--profile",
                 "--trace", "--profile-memory"):
        assert flag in out
    with pytest.raises(SystemExit):
        demo.main(["--steps", "0", "--device", "cpu"])
    assert "--steps must be positive" in capsys.readouterr().err
    # refused before any training, each in one line naming the flag
    bad = [(["--device", "tpu"], "--device must be cpu or cuda, got tpu"),
           (["--threads", "0"], "--threads must be positive, got 0"),
           (["--sample-tokens", "-5"], "--sample-tokens must be non-negative, got -5"),
           (["--seed", "-1"], "--seed must be non-negative, got -1"),
           (["--trace", "/nonexistent_dir/t.json"], "cannot write there")]
    if not st.cuda.is_available():
        bad.append((["--device", "cuda"], "no usable CUDA GPU here"))
    else:
        bad.append((["--device", f"cuda:{st.cuda.device_count()}"], "CUDA device(s)"))
    for argv, words in bad:
        with pytest.raises(SystemExit):
            demo.main(["--device", "cpu", "--steps", "1", *argv])
        assert words in capsys.readouterr().err, argv


def test_checkpointed_training_takes_the_same_steps():
    """--checkpoint recomputes each block in backward: on CPU the same ops in the same order, so the
    same losses, bit for bit."""
    cfg = replace(demo.CONFIGS["tiny"], steps=8, warmup=2)
    runs = [demo.train(replace(cfg, checkpoint=c), st.device("cpu"), use_amp=False, seed=0, sample_tokens=0,
                       log=lambda *a: None)["losses"] for c in (False, True)]
    assert runs[0] == runs[1]


def test_cli_rejects_checkpoint_with_cuda_graph(capsys):
    with pytest.raises(SystemExit):
        demo.main(["--checkpoint", "--cuda-graph", "--device", "cuda"])  # refused before any CUDA work
    assert "--checkpoint and --cuda-graph cannot be combined" in capsys.readouterr().err


def test_cli_profile_prints_the_last_step_and_writes_its_trace(capsys, tmp_path):
    trace = tmp_path / "step.json"
    assert demo.main(["--device", "cpu", "--steps", "3", "--sample-tokens", "0", "--trace", str(trace)]) == 0
    out = capsys.readouterr().out
    table = out.split("the last training step, by strided.profiler:")[1]
    # which 15 rows lead depends on their times (under load a GC pause reorders them): the ops are checked in the
    # trace, which has every event
    assert "aten::" in table and "Self CPU time total:" in table and "dispatch:" not in out  # replaces the op count
    import json

    names = {e["name"] for e in json.loads(trace.read_text())["traceEvents"]}
    assert "aten::linear" in names and any(n.startswith("autograd::engine::evaluate_function: ") for n in names)
    assert "aten::_fused_adamw_" in names or "aten::_foreach_add_" in names or "aten::add_" in names
    assert any(n.startswith("Optimizer.step#") for n in names)  # torch's range around each optimizer step


def test_cli_profile_memory_prints_where_the_memory_goes(capsys):
    assert demo.main(["--device", "cpu", "--steps", "2", "--sample-tokens", "0", "--profile-memory"]) == 0
    out = capsys.readouterr().out
    table = out.split("where the step's memory goes")[1]
    head = table.splitlines()[2]
    assert "CPU Mem" in head and "Self CPU Mem" in head
    first = table.splitlines()[4]
    assert first.split()[-2].endswith("B") or "KB" in first or "MB" in first  # a memory cell
