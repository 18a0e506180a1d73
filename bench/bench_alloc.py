"""Allocation and pinned-copy costs: strided vs PyTorch, side by side in one process on one GPU.

Prints a table of ratios (strided time / torch time; for bandwidth strided / torch) and, with
``--append``, adds a dated section to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from datetime import date
from pathlib import Path

import strided as st
import strided.cuda as scuda


def _median_us(fns, n, repeats=9):
    """Median µs per call of each of ``fns``, their repeats interleaved (Note [Interleaved repeats])."""
    out = [[] for _ in fns]
    for _ in range(repeats):
        for fn, times in zip(fns, out):
            t = time.perf_counter()
            for _ in range(n):
                fn()
            times.append((time.perf_counter() - t) / n * 1e6)
    return [statistics.median(times) for times in out]


# Note [Interleaved repeats]
# The lent GPU hosts' CPU speed drifts between runs and within one (torch's own empty + free has
# measured 2.1 to 5.0 µs on the same kind of machine). Host-bound timings of the two libraries
# are therefore taken in alternating repeats, so both medians come from the same stretch of time.


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--append", action="store_true")
    args = ap.parse_args()
    import torch

    rows = []
    for label, nbytes in (("512 B", 512), ("1 MiB", 1 << 20), ("64 MiB", 64 << 20)):
        n = nbytes // 4
        st.empty(n, device="cuda")
        torch.empty(n, device="cuda")
        s, t = _median_us([lambda n=n: st.empty(n, device="cuda"), lambda n=n: torch.empty(n, device="cuda")],
                          2000)
        rows.append((f"empty+free {label}", s, t, s / t, "us"))
    s, t = _median_us([lambda: scuda.caching_allocator_delete(scuda.caching_allocator_alloc(1 << 20)),
                       lambda: torch.cuda.caching_allocator_delete(torch.cuda.caching_allocator_alloc(1 << 20))],
                      5000)
    rows.append(("caching_allocator_alloc/delete 1 MiB", s, t, s / t, "us"))
    nb = 256 << 20
    hs = st.empty(nb // 4, pin_memory=True)
    ds = st.empty(nb // 4, device="cuda")
    ht = torch.empty(nb // 4, pin_memory=True)
    dt_ = torch.empty(nb // 4, device="cuda")

    def rate(fn, sync):
        t0 = time.perf_counter()
        for _ in range(5):
            fn()
        sync()
        return nb * 5 / (time.perf_counter() - t0) / 1e9

    for label, f_s, f_t in (
        ("pinned H2D", lambda: ds.copy_(hs, non_blocking=True), lambda: dt_.copy_(ht, non_blocking=True)),
        ("pinned D2H", lambda: hs.copy_(ds, non_blocking=True), lambda: ht.copy_(dt_, non_blocking=True)),
    ):
        for f, sync in ((f_s, scuda.synchronize), (f_t, torch.cuda.synchronize)):
            f()
            sync()
        # alternating repeats, as the allocation rows: both medians come from the same stretch of time
        s_rates, t_rates = [], []
        for _ in range(7):
            s_rates.append(rate(f_s, scuda.synchronize))
            t_rates.append(rate(f_t, torch.cuda.synchronize))
        s, t = statistics.median(s_rates), statistics.median(t_rates)
        rows.append((f"{label} 256 MiB", s, t, s / t, "GB/s"))
    lines = ["| benchmark | strided | torch | ratio | unit |", "|---|---|---|---|---|"]
    lines += [f"| {r[0]} | {r[1]:.2f} | {r[2]:.2f} | {r[3]:.2f}x | {r[4]} |" for r in rows]
    table = "\n".join(lines)
    print(table)
    if args.append:
        import cuda.bindings

        from strided.backends.cuda.driver import driver_version

        dv = driver_version()
        head = (
            f"\n## {date.today().isoformat()} — bench_alloc (issue 4) — {scuda.get_device_name(0)}, CUDA driver "
            f"{dv // 1000}.{dv % 1000 // 10}, torch {torch.__version__}, "
            f"cuda-bindings {cuda.bindings.__version__}\n\n"
            "Allocation rows: time per round trip (lower is better, target ratio <= 1.5x). Bandwidth rows: "
            "GB/s (higher is better, target ratio >= 0.95x).\n\n"
        )
        path = Path(__file__).with_name("RESULTS.md")
        with path.open("a") as f:
            f.write(head + table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
