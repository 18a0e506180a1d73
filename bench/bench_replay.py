"""Speed of the caching allocator engine (pure Python, simulated device, no GPU).

* Trace replay: trace entries per second replaying the PyTorch traces in tests/data under
  PyTorch's default policy, expandable segments, and strided's eager page recycling (best of
  repeats; decoding the pickle is timed separately).
* malloc + free round trip on the simulated provider with a warm cache, for 512 B, 1 MiB and
  64 MiB: the allocator's own cost, which the CUDA tensor path pays on every allocation.

``--append`` adds a dated section to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from strided.memory import AllocatorConfig, CachingAllocator, SimulatedDevice, load_snapshot  # noqa: E402
from strided.memory.replay import decode_trace, replay  # noqa: E402

TRACES = ["trace_gpt2_train.pkl.gz", "trace_resnet_train.pkl.gz"]
CONFIGS = [
    ("PyTorch default", ""),
    ("expandable_segments", "expandable_segments:True"),
    ("strided eager unmap", "expandable_segments:True,strided_eager_unmap:True"),
]
DATE = "2026-11-22"


def bench_replay(repeats: int) -> list[tuple]:
    rows = []
    for name in TRACES:
        path = ROOT / "tests" / "data" / name
        t = time.perf_counter()
        events = decode_trace(load_snapshot(path))
        decode_s = time.perf_counter() - t
        for label, conf in CONFIGS:
            best = min(replay(events, conf, timeline=False).seconds for _ in range(repeats))
            with_tl = min(replay(events, conf).seconds for _ in range(repeats))
            rows.append((name, label, events.num_entries, decode_s, best, with_tl))
    return rows


def bench_round_trip(n: int, repeats: int) -> list[tuple[int, float, float]]:
    alloc = CachingAllocator(SimulatedDevice(), AllocatorConfig())
    malloc, free = alloc.malloc, alloc.free
    rows = []
    for size in (512, 1 << 20, 64 << 20):
        free(malloc(size, 0))  # warm: the segment is cached
        runs = []
        for _ in range(repeats):
            t = time.perf_counter()
            for _ in range(n):
                free(malloc(size, 0))
            runs.append((time.perf_counter() - t) / n * 1e6)
        rows.append((size, min(runs), statistics.median(runs)))
    return rows


def _cpu() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _fmt_size(n: int) -> str:
    return f"{n} B" if n < 1 << 20 else f"{n >> 20} MiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--n", type=int, default=100_000, help="round trips per repeat")
    parser.add_argument("--append", action="store_true", help="append the tables to bench/RESULTS.md")
    args = parser.parse_args()

    replay_rows = bench_replay(args.repeats)
    rt_rows = bench_round_trip(args.n, args.repeats)
    try:
        import numpy

        np_version = numpy.__version__
    except ImportError:  # pragma: no cover
        np_version = "not installed"
    lines = [
        f"## {DATE} — bench_replay (issue 3): allocator engine on the simulated device, no GPU",
        "",
        f"Machine: {_cpu()}, {os.cpu_count()} cores, one core used; Python {platform.python_version()}, "
        f"numpy {np_version}. This machine has no GPU: everything below is the pure-Python allocator "
        "on `SimulatedDevice`.",
        "",
        "Trace replay (best of repeats; entries = every trace entry; decode = gzip + restricted "
        "unpickle + decode):",
        "",
        "| trace | config | entries | decode s | replay s | entries/s | with timeline s | entries/s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, label, entries, dec, best, tl in replay_rows:
        lines.append(
            f"| {name} | {label} | {entries} | {dec:.3f} | {best:.3f} | {entries / best:,.0f} | {tl:.3f} "
            f"| {entries / tl:,.0f} |"
        )
    lines += [
        "",
        "malloc + free round trip, warm cache, stream 0 (µs; best and median of repeats):",
        "",
        "| size | best µs | median µs |",
        "|---|---|---|",
    ]
    for size, best, med in rt_rows:
        lines.append(f"| {_fmt_size(size)} | {best:.2f} | {med:.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.append:
        path = ROOT / "bench" / "RESULTS.md"
        with open(path, "a") as f:
            f.write("\n" + text)
        print(f"appended to {path}")


if __name__ == "__main__":
    main()
