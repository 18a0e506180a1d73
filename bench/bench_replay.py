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
from datetime import date
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
DATE = date.today().isoformat()


def bench_replay(repeats: int) -> list[tuple]:
    """Best replay time per (trace, config); repeats go round-robin over all cells, so a burst
    of other load on a shared machine spoils one repeat of each cell rather than all of one."""
    decoded = {}
    for name in TRACES:
        t = time.perf_counter()
        decoded[name] = decode_trace(load_snapshot(ROOT / "tests" / "data" / name))
        decoded[name] = (decoded[name], time.perf_counter() - t)
    best: dict[tuple[str, str], list[float]] = {}
    for _ in range(repeats):
        for name in TRACES:
            for label, conf in CONFIGS:
                events = decoded[name][0]
                plain = replay(events, conf, timeline=False).seconds
                with_tl = replay(events, conf).seconds
                cell = best.setdefault((name, label), [plain, with_tl])
                cell[0] = min(cell[0], plain)
                cell[1] = min(cell[1], with_tl)
    return [
        (name, label, decoded[name][0].num_entries, decoded[name][1], *best[(name, label)])
        for name in TRACES
        for label, _ in CONFIGS
    ]


def bench_round_trip(n: int, repeats: int) -> list[tuple[int, float, float]]:
    alloc = CachingAllocator(SimulatedDevice(), AllocatorConfig())
    malloc, free = alloc.malloc, alloc.free
    sizes = (512, 1 << 20, 64 << 20)
    runs: dict[int, list[float]] = {size: [] for size in sizes}
    for size in sizes:
        free(malloc(size, 0))  # warm: the segment is cached
    for _ in range(repeats):
        for size in sizes:
            t = time.perf_counter()
            for _ in range(n):
                free(malloc(size, 0))
            runs[size].append((time.perf_counter() - t) / n * 1e6)
    return [(size, min(runs[size]), statistics.median(runs[size])) for size in sizes]


def _cpu() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _load() -> str:
    try:
        return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    except OSError:  # pragma: no cover
        return "unknown"


def _fmt_size(n: int) -> str:
    return f"{n} B" if n < 1 << 20 else f"{n >> 20} MiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--n", type=int, default=20_000, help="round trips per repeat")
    parser.add_argument("--append", action="store_true", help="append the tables to bench/RESULTS.md")
    args = parser.parse_args()

    replay_rows = bench_replay(args.repeats)
    rt_rows = bench_round_trip(args.n, 2 * args.repeats)
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
        f"on `SimulatedDevice`. Load average at the end of the run: {_load()}; the machine is shared "
        "and its two vCPUs slow each other down (timings are bimodal, about 1.7x apart), so the "
        "best of repeats is the uncontended figure.",
        "",
        "Trace replay (best of repeats; entries = every trace entry; decode = gzip + restricted unpickle + decode):",
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
