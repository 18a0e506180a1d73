from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from strided.cli import main
from strided.utils.progress import Progress


def test_top_level_help_lists_memory(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    assert "memory" in capsys.readouterr().out


def test_memory_group_without_command_prints_help(capsys):
    assert main(["memory"]) == 2
    out = capsys.readouterr().out
    assert "replay" in out and "plot" in out and "stats" in out


def test_replay_table_with_reference(data_dir, capsys):
    assert main(["memory", "replay", str(data_dir / "trace_resnet_train.pkl.gz")]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    default = next(line for line in lines if line.startswith("PyTorch default"))
    assert "7,029,653,504" in default and "exact" in default
    assert any(line.startswith("strided eager unmap") for line in lines)
    assert any(line.startswith("PyTorch measured") for line in lines)


def test_replay_json_and_custom_config(data_dir, capsys):
    trace = str(data_dir / "trace_resnet_train.pkl.gz")
    assert (
        main(["memory", "replay", trace, "--config", "default", "--config", "max_split_size_mb:64", "--json"])
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert [r["config"] for r in doc["results"]] == ["", "max_split_size_mb:64"]
    assert doc["results"][0]["peak_reserved"] == 7029653504


def test_bad_config_is_reported(data_dir):
    with pytest.raises(SystemExit, match="bad --config 'bogus:1'"):
        main(["memory", "replay", str(data_dir / "trace_resnet_train.pkl.gz"), "--config", "bogus:1"])


def test_plot_html_and_png(data_dir, tmp_path):
    page = tmp_path / "t.html"
    png = tmp_path / "t.png"
    trace = str(data_dir / "trace_resnet_train.pkl.gz")
    assert main(["memory", "plot", trace, "--config", "default", "--html", str(page), "-o", str(png)]) == 0
    text = page.read_text()
    assert (
        text.startswith("<!DOCTYPE html>")
        and "<svg" in text
        and "<script" not in text
        and "http" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")
    )
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["memory", "plot", trace]) == 2


def test_plot_refuses_an_unwritable_output_before_replaying(data_dir, tmp_path, capsys):
    trace = str(data_dir / "trace_resnet_train.pkl.gz")
    missing = tmp_path / "no_such_dir" / "t.png"
    assert main(["memory", "plot", trace, "-o", str(missing)]) == 2
    assert f"cannot write '{missing}': no directory" in capsys.readouterr().err
    assert main(["memory", "plot", trace, "--html", str(tmp_path)]) == 2
    assert "it is a directory" in capsys.readouterr().err


def test_stats_command(data_dir, capsys):
    assert main(["memory", "stats", str(data_dir / "trace_gpt2_train.pkl.gz")]) == 0
    out = capsys.readouterr().out
    assert "segments         137" in out and "alloc 6179" in out


def test_module_entry_point():
    out = subprocess.run(
        [sys.executable, "-m", "strided.cli", "memory", "--help"], capture_output=True, text=True
    )
    assert out.returncode == 0 and "replay" in out.stdout


def test_progress_bar():
    buf = io.StringIO()
    with Progress(total=10, desc="x", stream=buf, force=True) as bar:
        for _ in range(10):
            bar.update()
    assert "[##############################] 10/10" in buf.getvalue() and buf.getvalue().endswith("\n")
    quiet = io.StringIO()
    with Progress(total=5, stream=quiet) as bar:
        bar.update(5)
    assert quiet.getvalue() == ""  # not a terminal, not forced
    assert "ETA" in Progress(total=3, stream=quiet).line()
    with pytest.raises(ValueError):
        Progress(total=-1)


def test_tune_ranks_settings_and_recommends_the_best_pytorch_one(data_dir, capsys):
    trace = str(data_dir / "trace_resnet_train.pkl.gz")
    assert main(["memory", "tune", trace, "--json"]) == 0
    ranking = json.loads(capsys.readouterr().out)["ranking"]
    from strided.memory.tune import GRID

    assert sorted(r["config"] for r in ranking) == sorted(GRID)
    peaks = [r["peak_reserved"] for r in ranking]
    assert peaks == sorted(peaks)  # nothing ran out of memory at 141 GiB: ranked by peak reserved alone
    default = next(r for r in ranking if r["config"] == "")
    assert default["peak_reserved"] == 7029653504  # the recorded run's, as `replay` reproduces it
    assert not next(r for r in ranking if "strided_eager_unmap" in r["config"])["pytorch_option"]
    assert main(["memory", "tune", trace]) == 0
    out = capsys.readouterr().out
    best = next(r for r in ranking if r["pytorch_option"])
    assert best["config"] == "expandable_segments:True" and best["peak_reserved"] < default["peak_reserved"]
    assert "Recommended: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" in out
    assert "* strided's own policy, not a PyTorch setting" in out


def test_tune_ranks_settings_that_run_out_of_memory_last(data_dir, capsys):
    trace = str(data_dir / "trace_resnet_train.pkl.gz")
    assert main(["memory", "tune", trace, "--capacity-gb", "5.6", "--config", "default",
                 "--config", "expandable_segments:True", "--json"]) == 0
    ranking = json.loads(capsys.readouterr().out)["ranking"]
    assert [r["config"] for r in ranking] == ["expandable_segments:True", ""]
    assert ranking[0]["ooms"] == 0 and ranking[1]["ooms"] > 0
    assert main(["memory", "tune", trace, "--capacity-gb", "5.6", "--config", "default",
                 "--config", "expandable_segments:True"]) == 0
    assert "allocations ran out of memory at this capacity" in capsys.readouterr().out


def test_tune_bad_arguments(data_dir):
    trace = str(data_dir / "trace_resnet_train.pkl.gz")
    with pytest.raises(SystemExit, match="--top must be at least 1"):
        main(["memory", "tune", trace, "--top", "0"])
    with pytest.raises(SystemExit, match="bad --config"):
        main(["memory", "tune", trace, "--config", "bogus:1"])


def test_capacity_must_be_a_positive_finite_number_for_every_command(data_dir, capsys):
    trace = str(data_dir / "trace_resnet_train.pkl.gz")
    for command, value in (("tune", "-1"), ("replay", "nan"), ("peak", "inf"), ("plot", "0"), ("replay", "x")):
        with pytest.raises(SystemExit):
            main(["memory", command, trace, "--capacity-gb", value, *(["--html", "t.html"] * (command == "plot"))])
        err = capsys.readouterr().err
        assert "argument --capacity-gb:" in err and ("positive, finite" in err or "expected a number" in err), err


def test_tune_fit_finds_the_least_capacity_each_setting_runs_in(data_dir, capsys):
    from strided.memory.replay import decode_trace, replay
    from strided.memory.snapshot import load_snapshot
    from strided.memory.tune import FIT_STEP

    trace = str(data_dir / "trace_resnet_train.pkl.gz")
    assert main(["memory", "tune", trace, "--fit", "--config", "default", "--config", "expandable_segments:True",
                 "--json"]) == 0
    ranking = json.loads(capsys.readouterr().out)["ranking"]
    events = decode_trace(load_snapshot(trace))
    for r in ranking:
        assert r["peak_allocated"] <= r["fits_in"] <= r["peak_reserved"] + (2 << 20)
        fits = replay(events, r["config"], recorded_addresses=False, capacity=r["fits_in"], timeline=False)
        short = replay(events, r["config"], recorded_addresses=False, capacity=r["fits_in"] - FIT_STEP,
                       timeline=False, stop_on_oom=True)
        assert fits.ooms == 0 and short.ooms == 1
    default = next(r for r in ranking if r["config"] == "")
    assert default["fits_in"] < default["peak_reserved"] - (512 << 20)  # the OOM fallbacks free cached blocks
    assert main(["memory", "tune", trace, "--fit", "--config", "default"]) == 0
    assert "'fits in': the least device memory" in capsys.readouterr().out


def _write_inputs(tmp_path):
    import gzip
    import pickle

    files = {
        "missing": (tmp_path / "missing.pkl", None),
        "text": (tmp_path / "notes.pkl", b"# not a pickle\n"),
        "truncated gzip": (tmp_path / "cut.pkl.gz", gzip.compress(pickle.dumps({"segments": []}))[:-10]),
        "truncated pickle": (tmp_path / "cut.pkl", pickle.dumps({"device_traces": [[{"action": "alloc"}] * 9]})[:-5]),
        "entry without addr": (tmp_path / "noaddr.pkl", pickle.dumps({"device_traces": [[{"action": "alloc"}]]})),
        "segments of ints": (tmp_path / "ints.pkl", pickle.dumps([1, 2, 3])),
        "code in the pickle": (tmp_path / "code.pkl", pickle.dumps({"f": Progress})),
    }
    for path, data in files.values():
        if data is not None:
            path.write_bytes(data)
    return {k: str(p) for k, (p, _) in files.items()}


@pytest.mark.parametrize("command", ["replay", "plot", "peak", "tune", "stats"])
def test_a_bad_input_file_is_one_line_naming_the_file_and_the_problem(tmp_path, command, capsys):
    want = {
        "missing": "cannot read {p!r}: No such file or directory",
        "text": "{p!r} is not a memory snapshot: not a pickle, or a truncated one (UnpicklingError",
        "truncated gzip": "{p!r} is not a memory snapshot: a truncated or corrupt gzip file",
        "truncated pickle": "{p!r} is not a memory snapshot: not a pickle, or a truncated one",
        "entry without addr": "entry 0 of device 0's trace is malformed (KeyError: 'addr')",
        "segments of ints": "the snapshot has no device_traces",
        "code in the pickle": "only plain builtins are allowed in a memory snapshot",
    }
    if command == "stats":
        want["entry without addr"] = None  # stats reads only the actions of trace entries
        want["segments of ints"] = "{p!r} is not a well-formed memory snapshot (TypeError"
    for case, path in _write_inputs(tmp_path).items():
        argv = ["memory", command, path] + (["-o", str(tmp_path / "out.png")] if command == "plot" else [])
        if want[case] is None:
            assert main(argv) == 0
            continue
        with pytest.raises(SystemExit) as info:
            main(argv)
        message = str(info.value.code)
        assert message.startswith(f"strided memory {command}: "), (case, message)
        assert want[case].format(p=path) in message, (case, message)
        assert "\n" not in message
