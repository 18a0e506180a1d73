"""Elementwise kernels: bandwidth and eager overhead, strided vs PyTorch in one process on one GPU.

Bandwidth: ``a + b``, ``a * b`` and ``exp(a)`` at 2^28 float32 and 2^24 bfloat16 elements; bytes =
inputs read + output written, over the median of CUDA-event timings (warm-up first, two input sets
alternated, each timed group queued behind a GPU-side sleep so host overhead does not count).
Eager overhead: µs per ``a + b`` on 1k float32 elements launch after launch (host wall time of a
loop of calls, synchronized at the end), and the in-place ``a.add_(b)``. Prints ratios
(strided / torch); ``--append`` adds a dated section to bench/RESULTS.md in one write.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from datetime import date
from pathlib import Path

import strided as st
import strided.cuda as scuda


def _median_ms(fn, start, end, sync, hold, reps=15, inner=5):
    for k in range(3):
        fn(k)
    sync()
    times = []
    for r in range(reps):
        hold()
        start.record()
        for k in range(inner):
            fn(k + r)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / inner)
    return statistics.median(times)


def _bandwidth(label, n, dtype_name, op, n_in, torch):
    tdt = getattr(torch, dtype_name)
    ta = [torch.randn(n, device="cuda").to(tdt) for _ in range(2)]
    tb = [torch.randn(n, device="cuda").to(tdt) for _ in range(2)]
    sa = [st.from_dlpack(t) for t in ta]
    sb = [st.from_dlpack(t) for t in tb]
    nbytes = (n_in + 1) * n * ta[0].element_size()

    def make(lib, a, b):
        if op == "add":
            return lambda k: a[k % 2] + b[k % 2]
        if op == "mul":
            return lambda k: a[k % 2] * b[k % 2]
        return lambda k: lib.exp(a[k % 2])

    tfn, sfn = make(torch, ta, tb), make(st, sa, sb)

    def hold():  # both libraries launch on the legacy default stream of the primary context
        torch.cuda._sleep(4_000_000)

    t_ms = _median_ms(tfn, torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True),
                      torch.cuda.synchronize, hold)
    s_ms = _median_ms(sfn, scuda.Event(enable_timing=True), scuda.Event(enable_timing=True), scuda.synchronize,
                      hold)
    got, want = torch.from_dlpack(sfn(0)).float(), tfn(0).float()
    ok = bool(torch.allclose(got, want, rtol=1e-2 if dtype_name == "bfloat16" else 1e-6, atol=0))
    s_bw, t_bw = nbytes / (s_ms * 1e-3) / 1e9, nbytes / (t_ms * 1e-3) / 1e9
    del ta, tb, sa, sb
    return label, s_bw, t_bw, s_bw / t_bw, ok


def _eager_us(pairs, number=3000, repeats=9):
    """Median µs per call of each ``(fn, sync)``, launch after launch, repeats interleaved: the
    host's speed drifts, so both libraries are timed in alternating repeats of the same stretch."""
    for fn, sync in pairs:
        for _ in range(200):
            fn()
        sync()
    runs = [[] for _ in pairs]
    for _ in range(repeats):
        for (fn, sync), out in zip(pairs, runs):
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            sync()
            out.append((time.perf_counter() - t0) / number * 1e6)
    return [statistics.median(out) for out in runs]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--append", action="store_true")
    args = ap.parse_args()
    import torch

    rows = []
    for op, n_in in (("add", 2), ("mul", 2), ("exp", 1)):
        rows.append(_bandwidth(f"{op} 2^28 fp32", 1 << 28, "float32", op, n_in, torch))
        rows.append(_bandwidth(f"{op} 2^24 bf16", 1 << 24, "bfloat16", op, n_in, torch))
        torch.cuda.empty_cache()
        scuda.empty_cache()

    ta, tb = torch.rand(1000, device="cuda"), torch.rand(1000, device="cuda")
    sa, sb = st.rand(1000).cuda(), st.rand(1000).cuda()
    ssync, tsync = scuda.synchronize, torch.cuda.synchronize
    eager = [
        ("a + b, 1k fp32", *_eager_us([(lambda: sa + sb, ssync), (lambda: ta + tb, tsync)])),
        ("a.add_(b), 1k fp32", *_eager_us([(lambda: sa.add_(sb), ssync), (lambda: ta.add_(tb), tsync)])),
        ("empty(1000) (allocation only)", *_eager_us([(lambda: st.empty(1000, device="cuda"), ssync),
                                                      (lambda: torch.empty(1000, device="cuda"), tsync)])),
    ]

    gpu = scuda.get_device_name(0)
    from strided.backends.cuda.driver import driver_version

    head = (f"GPU: {gpu}; driver CUDA {driver_version()}; torch {torch.__version__}; "
            f"python {platform.python_version()}")
    lines = ["| case | strided GB/s | torch GB/s | strided / torch | same result |", "|---|---|---|---|---|"]
    for label, s, t, r, ok in rows:
        lines.append(f"| {label} | {s:.0f} | {t:.0f} | {r:.2f}x | {ok} |")
    lines += ["", "| eager, launch after launch | strided µs | torch µs | strided / torch |", "|---|---|---|---|"]
    for label, s, t in eager:
        lines.append(f"| {label} | {s:.2f} | {t:.2f} | {s / t:.2f}x |")
    print(head)
    print("\n".join(lines))
    if args.append:
        text = (f"\n## {date.today()} — bench_elementwise (issue 5): pointwise bandwidth and eager overhead\n\n{head}. "
                "Bandwidth = bytes read + written over the CUDA-event median (targets >= 0.95x); eager rows: "
                "host µs per call, median of repeats (target <= 2.0x torch for `a + b`).\n\n"
                + "\n".join(lines) + "\n")
        with open(Path(__file__).parent / "RESULTS.md", "a") as f:
            f.write(text)
    return 0 if all(ok for *_, ok in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
