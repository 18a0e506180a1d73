"""Reduction and normalization bandwidth: strided vs PyTorch, side by side in one process on one GPU.

Cases (issue 5, point 8a): sum over the inner (contiguous) dim and over the outer dim, softmax over
the last dim and layer_norm over the last dim (with weight and bias), at 2^28 float32 elements
(16384 x 16384) and 2^24 bfloat16 elements (4096 x 4096). Bandwidth counts the bytes the op must
read and write (input + output; layer_norm's parameters are negligible) over the median time of
batches of launches timed with CUDA events. Before each batch a ``torch.cuda._sleep`` kernel holds
the (shared, legacy default) stream for ~2 ms, so the whole batch is queued before the GPU reaches
it: the time is the kernels' alone, not Python's launch overhead (measured separately, issue 5
point 8d). Both libraries get the same input (shared through DLPack). Prints a table of ratios
(strided / torch, higher is better) and, with ``--append PATH``, writes one dated markdown section
to PATH (bench/RESULTS.md when PATH is left out).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from datetime import date
from pathlib import Path

import numpy as np

import strided as st
import strided.cuda as scuda

BATCH, REPEATS = 10, 9
SLEEP_CYCLES = 4_000_000  # ~2 ms at H100/H200 clocks: longer than queuing a batch


def _median_ms(fn, arg, start, end, sync, sleep, batch=BATCH, repeats=REPEATS):
    """Median ms per ``fn(arg)`` over ``repeats`` batches of ``batch`` calls, each batch timed with the events
    ``start`` / ``end`` and queued behind a ``sleep`` kernel (bench_fft uses it too)."""
    fn(arg)
    sync()
    times = []
    for _ in range(repeats):
        sleep(SLEEP_CYCLES)
        start.record()
        for _ in range(batch):
            fn(arg)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / batch)
    return statistics.median(times)


def _cases(torch, F):
    for (rows, cols), sd, td, label in (((1 << 14, 1 << 14), st.float32, torch.float32, "fp32 2^28"),
                                        ((1 << 12, 1 << 12), st.bfloat16, torch.bfloat16, "bf16 2^24")):
        n, item = rows * cols, sd.itemsize
        w = torch.randn(cols, device="cuda", dtype=td)
        b = torch.randn(cols, device="cuda", dtype=td)
        yield (f"sum inner dim, {label}", (rows, cols), td, (n + rows) * item,
               lambda x: st.sum(x, 1), lambda t: t.sum(1))
        yield (f"sum outer dim, {label}", (rows, cols), td, (n + cols) * item,
               lambda x: st.sum(x, 0), lambda t: t.sum(0))
        yield (f"softmax last dim, {label}", (rows, cols), td, 2 * n * item,
               lambda x: st.softmax(x, 1), lambda t: torch.softmax(t, 1))
        sw, sb = st.from_dlpack(w), st.from_dlpack(b)
        yield (f"layer_norm last dim, {label}", (rows, cols), td, 2 * n * item,
               lambda x, sw=sw, sb=sb, c=cols: st.layer_norm(x, [c], sw, sb),
               lambda t, w=w, b=b, c=cols: F.layer_norm(t, [c], w, b))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--append", metavar="PATH", nargs="?", const=str(Path(__file__).with_name("RESULTS.md")),
                    help="append a dated markdown section to PATH (default bench/RESULTS.md)")
    args = ap.parse_args()
    if not scuda.is_available():
        print("no CUDA GPU: nothing to measure")
        return 0
    import torch
    import torch.nn.functional as F

    torch.manual_seed(0)
    s_start, s_end = scuda.Event(enable_timing=True), scuda.Event(enable_timing=True)
    t_start, t_end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    rows_out = []
    for name, shape, td, nbytes, sfn, tfn in _cases(torch, F):
        t = torch.randn(shape, device="cuda", dtype=torch.float32).to(td)
        x = st.from_dlpack(t)
        torch.cuda.synchronize()
        diff = (torch.from_dlpack(sfn(x)).double() - tfn(t).double()).abs().max().item()
        ms_s = _median_ms(sfn, x, s_start, s_end, scuda.synchronize, torch.cuda._sleep)
        ms_t = _median_ms(tfn, t, t_start, t_end, torch.cuda.synchronize, torch.cuda._sleep)
        gs, gt = nbytes / ms_s / 1e6, nbytes / ms_t / 1e6
        rows_out.append((name, gs, gt, gs / gt, diff))
        print(f"{name:32s} strided {gs:8.1f} GB/s  torch {gt:8.1f} GB/s  ratio {gs / gt:5.2f}  "
              f"max|diff| {diff:.2e}", flush=True)
        del t, x
        torch.cuda.empty_cache()
    ratios = [r[3] for r in rows_out]
    geo = float(np.exp(np.mean(np.log(ratios))))
    print(f"geomean ratio {geo:.3f}; min {min(ratios):.3f} (target >= 0.95)")
    if args.append:
        props = scuda.get_device_properties(0)
        lines = [f"\n## {date.today().isoformat()} — bench_reductions (issue 5): reduction and "
                 "normalization bandwidth\n",
                 f"\nGPU: {props.name}; strided {getattr(st, '__version__', 'dev')}, torch {torch.__version__}, "
                 f"numpy {np.__version__}. Bandwidth = (bytes read + written) / median time of batches of "
                 f"{BATCH} launches (CUDA events, {REPEATS} batches, each queued behind a ~2 ms sleep kernel so "
                 "that Python launch overhead is not counted); same input for both (DLPack).\n",
                 "\n| case | strided GB/s | torch GB/s | strided / torch | max abs diff |\n|---|---|---|---|---|\n"]
        lines += [f"| {n} | {gs:.0f} | {gt:.0f} | {r:.2f} | {d:.1e} |\n" for n, gs, gt, r, d in rows_out]
        lines.append(f"\nGeomean ratio {geo:.2f}, lowest {min(ratios):.2f} (target >= 0.95 each).\n")
        with open(args.append, "a") as f:
            f.write("".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
