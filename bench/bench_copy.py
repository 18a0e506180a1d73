"""Transposed-copy bandwidth: strided vs PyTorch, side by side in one process on one GPU.

``x.t().contiguous()`` for a (2^14, 2^14) float32 (2^28 elements) and a (2^12, 2^12) bfloat16
(2^24 elements) matrix, a batched permute, and a plain contiguous device copy for reference.
Bandwidth counts bytes read plus bytes written; each figure is the median of CUDA-event timings
(warm-up first, two source buffers alternated so the L2 never holds the input; each timed group
of launches is queued behind a GPU-side sleep, so host overhead does not count).  Prints a table
of ratios (strided / torch); ``--append`` adds a dated section to bench/RESULTS.md in one write.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
from datetime import date
from pathlib import Path

import strided as st
import strided.cuda as scuda


def _median_ms(fn, start, end, sync, hold, reps=20, inner=5):
    for _ in range(3):
        fn(0)
    sync()
    times = []
    for r in range(reps):
        hold()  # a GPU-side wait, so the launches below queue up and run back to back
        start.record()
        for k in range(inner):
            fn(k + r)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / inner)
    return statistics.median(times)


def _case(label, shape, dtype_name, make, torch):
    tdt = getattr(torch, dtype_name)
    sdt = getattr(st, dtype_name)
    n = 1
    for s in shape:
        n *= s
    nbytes = 2 * n * sdt.itemsize  # read + write
    tsrc = [torch.randn(shape, device="cuda").to(tdt) for _ in range(2)]
    ssrc = [st.from_dlpack(t) for t in tsrc] if hasattr(st, "from_dlpack") else None
    tfn, sfn = make(tsrc), make(ssrc)
    def hold():  # both libraries launch on the legacy default stream of the primary context
        torch.cuda._sleep(4_000_000)

    t_ms = _median_ms(tfn, torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True),
                      torch.cuda.synchronize, hold)
    s_ms = _median_ms(sfn, scuda.Event(enable_timing=True), scuda.Event(enable_timing=True), scuda.synchronize,
                      hold)
    # correctness of the timed path, on the same data
    ok = torch.equal(torch.from_dlpack(sfn(0)), tfn(0))
    s_bw, t_bw = nbytes / (s_ms * 1e-3) / 1e9, nbytes / (t_ms * 1e-3) / 1e9
    return label, s_bw, t_bw, s_bw / t_bw, ok


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--append", action="store_true")
    args = ap.parse_args()
    import torch

    def transpose(srcs):
        return lambda k: srcs[k % 2].t().contiguous()

    def batched(srcs):
        return lambda k: srcs[k % 2].permute(0, 2, 1).contiguous()

    def plain(srcs):
        return lambda k: srcs[k % 2].clone()

    rows = [
        _case("x.t().contiguous() (2^14, 2^14) fp32", (1 << 14, 1 << 14), "float32", transpose, torch),
        _case("x.t().contiguous() (2^12, 2^12) bf16", (1 << 12, 1 << 12), "bfloat16", transpose, torch),
        _case("permute(0,2,1) (64, 2048, 2048) bf16", (64, 2048, 2048), "bfloat16", batched, torch),
        _case("contiguous D2D clone 2^28 fp32", (1 << 28,), "float32", plain, torch),
    ]
    gpu = scuda.get_device_name(0)
    from strided.backends.cuda import kernels

    head = (f"GPU: {gpu}; torch {torch.__version__}, python {platform.python_version()}; strided transposed "
            f"copy with {kernels._TR_BYTES}-byte accesses")
    lines = ["| case | strided GB/s | torch GB/s | strided / torch | same result |", "|---|---|---|---|---|"]
    for label, s, t, r, ok in rows:
        lines.append(f"| {label} | {s:.0f} | {t:.0f} | {r:.2f}x | {ok} |")
    print(head)
    print("\n".join(lines))
    if args.append:
        text = (f"\n## {date.today()} — bench_copy (issue 5): transposed copy bandwidth\n\n{head}. Bandwidth = bytes "
                "read + written over the CUDA-event median; strided and torch in one process.\n\n"
                + "\n".join(lines) + "\n")
        with open(Path(__file__).parent / "RESULTS.md", "a") as f:
            f.write(text)
    return 0 if all(ok for *_, ok in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
