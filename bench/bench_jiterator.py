"""Jiterator kernels: strided.cuda.jiterator against torch.cuda.jiterator, the same code strings, one process, one GPU.

Bandwidth of a two-input function with an extra argument (``-x + alpha * y``) at 2^28 float32 and 2^24 bfloat16
elements, of a four-input one, of a transposed input (the strided kernel) and of a three-output one; bytes = inputs
read + outputs written over the CUDA-event median (bench_elementwise's method: warm-up, alternated inputs, each group
queued behind a GPU-side sleep). Eager: host µs per call on 1k float32 elements, launch after launch. Prints ratios
(strided / torch); ``--append`` adds a dated section to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import platform
import sys
from datetime import date
from pathlib import Path

from bench_elementwise import _eager_us, _median_ms

import strided as st
import strided.cuda as scuda

AXPY = "template <typename T> T axpy(T x, T y, T alpha) { return -x + alpha * y; }"
FOUR = "template <typename T> T four(T a, T b, T c, T d) { return a * b + c * d; }"
SPLIT = "template <typename T> void split(T x, T y, T& s, T& d, T& p) { s = x + y; d = x - y; p = x * y; }"


def _case(label, n, dtype_name, code, n_in, n_out, torch, transposed=False):
    tdt = getattr(torch, dtype_name)
    shape = (n // 4096, 4096)
    ts = [[torch.randn(shape, device="cuda").to(tdt) for _ in range(n_in)] for _ in range(2)]
    if transposed:
        ts = [[t.t().contiguous().t() if i == 0 else t for i, t in enumerate(group)] for group in ts]
    ss = [[st.from_dlpack(t) for t in group] for group in ts]
    if n_out == 1:
        kw = {"alpha": 0.5} if "alpha" in code else {}
        sfn, tfn = st.cuda.jiterator._create_jit_fn(code, **kw), torch.cuda.jiterator._create_jit_fn(code, **kw)
    else:
        sfn = st.cuda.jiterator._create_multi_output_jit_fn(code, n_out)
        tfn = torch.cuda.jiterator._create_multi_output_jit_fn(code, n_out)
    nbytes = (n_in + n_out) * n * ts[0][0].element_size()

    def hold():
        torch.cuda._sleep(4_000_000)

    t_ms = _median_ms(lambda k: tfn(*ts[k % 2]), torch.cuda.Event(enable_timing=True),
                      torch.cuda.Event(enable_timing=True), torch.cuda.synchronize, hold)
    s_ms = _median_ms(lambda k: sfn(*ss[k % 2]), scuda.Event(enable_timing=True), scuda.Event(enable_timing=True),
                      scuda.synchronize, hold)
    got, want = sfn(*ss[0]), tfn(*ts[0])
    got, want = (got, want) if n_out == 1 else (got[-1], want[-1])
    ok = bool(torch.equal(torch.from_dlpack(got), want)) and tuple(got.stride()) == want.stride()
    s_bw, t_bw = nbytes / (s_ms * 1e-3) / 1e9, nbytes / (t_ms * 1e-3) / 1e9
    return label, s_bw, t_bw, s_bw / t_bw, ok


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--append", action="store_true")
    args = ap.parse_args()
    import torch

    rows = []
    for dtype, n in (("float32", 1 << 28), ("bfloat16", 1 << 24)):
        tag = f"2^{n.bit_length() - 1} {'fp32' if dtype == 'float32' else 'bf16'}"
        rows.append(_case(f"axpy (2 in, alpha), {tag}", n, dtype, AXPY, 2, 1, torch))
        rows.append(_case(f"four inputs, {tag}", n, dtype, FOUR, 4, 1, torch))
        rows.append(_case(f"axpy, first input transposed, {tag}", n, dtype, AXPY, 2, 1, torch, transposed=True))
        rows.append(_case(f"three outputs, {tag}", n, dtype, SPLIT, 2, 3, torch))
        torch.cuda.empty_cache()
        scuda.empty_cache()

    sfn = st.cuda.jiterator._create_jit_fn(AXPY, alpha=0.5)
    tfn = torch.cuda.jiterator._create_jit_fn(AXPY, alpha=0.5)
    sa, sb = st.rand(1000).cuda(), st.rand(1000).cuda()
    ta, tb = torch.from_dlpack(sa), torch.from_dlpack(sb)
    eager = [("axpy, 1k fp32", *_eager_us([(lambda: sfn(sa, sb), scuda.synchronize),
                                           (lambda: tfn(ta, tb), torch.cuda.synchronize)]))]

    from strided.backends.cuda.driver import driver_version

    head = (f"GPU: {scuda.get_device_name(0)}; driver CUDA {driver_version()}; torch {torch.__version__}; "
            f"python {platform.python_version()}")
    lines = ["| case | strided GB/s | torch GB/s | strided / torch | same result |", "|---|---|---|---|---|"]
    lines += [f"| {label} | {s:.0f} | {t:.0f} | {r:.2f}x | {ok} |" for label, s, t, r, ok in rows]
    lines += ["", "| eager, launch after launch | strided µs | torch µs | strided / torch |", "|---|---|---|---|"]
    lines += [f"| {label} | {s:.2f} | {t:.2f} | {s / t:.2f}x |" for label, s, t in eager]
    print(head)
    print("\n".join(lines))
    if args.append:
        text = (f"\n## {date.today()} — bench_jiterator: strided.cuda.jiterator against torch.cuda.jiterator\n\n"
                f"{head}. Bandwidth = bytes read + written over the CUDA-event median; the eager row is host µs per "
                "call, median of alternated repeats.\n\n" + "\n".join(lines) + "\n")
        with open(Path(__file__).parent / "RESULTS.md", "a") as f:
            f.write(text)
    return 0 if all(ok for *_, ok in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
