"""FFT time: strided's own CUDA kernels (Note [CUDA FFT]) vs torch.fft (cuFFT), side by side in one process on
one GPU.

Cases: complex64 c2c over the last dim for batches of short, medium and long power-of-two rows and one 2^24
row, a mixed-radix length (1000), a length with a large prime factor (1009: Bluestein), rfft of float32 rows,
a 2-D fft2 of 2048 x 2048, and complex128 rows. Times are medians of batches of launches timed with CUDA events,
each batch queued behind a ~2 ms ``torch.cuda._sleep`` kernel so that Python's launch overhead is not counted
(as bench_reductions). Both libraries get the same input (shared through DLPack). The table gives ms and the
ratio strided / torch (time: lower is better). ``--append [PATH]`` writes a dated section to PATH
(bench/RESULTS.md when PATH is left out).
"""

from __future__ import annotations

import argparse
import sys
from datetime import date
from pathlib import Path

import numpy as np
from bench_reductions import _median_ms  # bench/ is on the path when run as a script

import strided as st
import strided.cuda as scuda

BATCH, REPEATS = 5, 7


def _cases(torch):
    c64, c128 = torch.complex64, torch.complex128
    yield "c2c complex64 16384 x 256", (16384, 256), c64, lambda x: st.fft.fft(x), lambda t: torch.fft.fft(t)
    yield "c2c complex64 1024 x 4096", (1024, 4096), c64, lambda x: st.fft.fft(x), lambda t: torch.fft.fft(t)
    yield "c2c complex64 16 x 2^18", (16, 1 << 18), c64, lambda x: st.fft.fft(x), lambda t: torch.fft.fft(t)
    yield "c2c complex64 1 x 2^24", (1, 1 << 24), c64, lambda x: st.fft.fft(x), lambda t: torch.fft.fft(t)
    yield "c2c complex64 4096 x 1000", (4096, 1000), c64, lambda x: st.fft.fft(x), lambda t: torch.fft.fft(t)
    yield ("c2c complex64 4096 x 1009 (Bluestein)", (4096, 1009), c64, lambda x: st.fft.fft(x),
           lambda t: torch.fft.fft(t))
    yield "rfft float32 4096 x 4096", (4096, 4096), torch.float32, lambda x: st.fft.rfft(x), lambda t: torch.fft.rfft(t)
    yield ("irfft complex64 4096 x 2049", (4096, 2049), c64, lambda x: st.fft.irfft(x),
           lambda t: torch.fft.irfft(t))
    yield "fft2 complex64 2048 x 2048", (2048, 2048), c64, lambda x: st.fft.fft2(x), lambda t: torch.fft.fft2(t)
    yield "c2c complex128 1024 x 4096", (1024, 4096), c128, lambda x: st.fft.fft(x), lambda t: torch.fft.fft(t)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--append", metavar="PATH", nargs="?", const=str(Path(__file__).with_name("RESULTS.md")),
                    help="append a dated markdown section to PATH (default bench/RESULTS.md)")
    args = ap.parse_args()
    if not scuda.is_available():
        print("no CUDA GPU: nothing to measure")
        return 0
    import torch

    torch.manual_seed(0)
    s_start, s_end = scuda.Event(enable_timing=True), scuda.Event(enable_timing=True)
    t_start, t_end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    rows = []
    for name, shape, td, sfn, tfn in _cases(torch):
        t = torch.randn(shape, device="cuda", dtype=td)
        x = st.from_dlpack(t)
        torch.cuda.synchronize()
        want = tfn(t)
        diff = ((torch.from_dlpack(sfn(x)) - want).abs().max() / want.abs().max()).item()
        ms_s = _median_ms(sfn, x, s_start, s_end, scuda.synchronize, torch.cuda._sleep, BATCH, REPEATS)
        ms_t = _median_ms(tfn, t, t_start, t_end, torch.cuda.synchronize, torch.cuda._sleep, BATCH, REPEATS)
        rows.append((name, ms_s, ms_t, ms_s / ms_t, diff))
        print(f"{name:40s} strided {ms_s:8.3f} ms  torch {ms_t:8.3f} ms  ratio {ms_s / ms_t:5.2f}  "
              f"max rel diff {diff:.1e}", flush=True)
        del t, x, want
        torch.cuda.empty_cache()
    ratios = [r[3] for r in rows]
    geo = float(np.exp(np.mean(np.log(ratios))))
    print(f"geomean time ratio {geo:.2f} (strided / torch; lower is better)")
    if args.append:
        props = scuda.get_device_properties(0)
        lines = [f"\n## {date.today().isoformat()} — bench_fft: strided's CUDA FFT vs torch.fft (cuFFT)\n",
                 f"\nGPU: {props.name}; torch {torch.__version__}, numpy {np.__version__}. ms = median of {REPEATS} "
                 f"batches of {BATCH} launches (CUDA events, each batch queued behind a ~2 ms sleep kernel); same "
                 "input for both (DLPack); diff = max |strided - torch| / max |torch|.\n",
                 "\n| case | strided ms | torch ms | strided / torch | rel diff |\n|---|---|---|---|---|\n"]
        lines += [f"| {n} | {s:.3f} | {t:.3f} | {r:.2f}x | {d:.1e} |\n" for n, s, t, r, d in rows]
        lines.append(f"\nGeomean time ratio {geo:.2f}x (lower is better; no target in the issues).\n")
        with open(args.append, "a") as f:
            f.write("".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
