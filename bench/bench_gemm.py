"""GEMM TFLOP/s and the fused linear + bias + gelu: strided (cuBLASLt) vs torch in one process.

(b) mm at 8192³, 4096³, 1024³, 16384x4096x1024, 128x4096x4096, 8x4096x4096 (M x N x K) in bf16,
fp16 and tf32 (fp32 inputs, ``allow_tf32`` on both sides), strided untuned and tuned
(``strided.cuda.tunable``) against torch; (c) bf16 ``_addmm_activation(bias, x, W.t(),
use_gelu=True)`` against torch's ``F.gelu(F.linear(x, W, bias), approximate="tanh")`` at
8192x4096x4096.

Note [GEMM timing]
Random normal data (never zeros: zeros make tensor cores draw less power and run faster). Each
figure is the median over 7 repeats of CUDA-event time per call for a batch of calls sized to about
10 ms; the variants of one problem (strided untuned, torch, strided tuned) take turns batch by batch
so that all see the same clocks and temperature. Before each batch a ``torch.cuda._sleep`` spin
kernel holds the stream long enough for the host to queue the whole batch, so the events time the
GPU work only — the same for both libraries; host-side eager overhead is benchmark (d)'s subject and
is reported here only as an extra column ("eager", per-call time with no pre-queued work) for the
small shapes.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
from datetime import date
from pathlib import Path

import strided as st
import strided.cuda as scuda
import strided.cuda.tunable as tunable

SHAPES = ((8192, 8192, 8192), (4096, 4096, 4096), (1024, 1024, 1024), (16384, 4096, 1024),
          (128, 4096, 4096), (8, 4096, 4096))
DTYPES = ("bf16", "fp16", "tf32")
REPEATS = 7


def _timer(torch):
    """``measure({name: (fn, setup)})`` -> {name: median ms per call}, the variants interleaved."""
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    cycles_per_us = 1500  # a lower bound for H100/H200 clocks: the spin lasts at least this long

    def batch(fn, n: int, queue_us: float) -> float:
        if queue_us:
            torch.cuda._sleep(int(queue_us * cycles_per_us))
        e0.record()
        for _ in range(n):
            fn()
        e1.record()
        e1.synchronize()
        return e0.elapsed_time(e1) / n

    def measure(variants: dict, *, eager=False) -> dict:
        plan = {}
        for name, (fn, setup) in variants.items():
            setup()
            for _ in range(3):
                fn()
            torch.cuda.synchronize()
            est = batch(fn, 3, 0 if eager else 2000)
            n = max(5, min(200, int(10.0 / max(est, 1e-3))))
            plan[name] = (fn, setup, n, 0 if eager else n * 80 + 1000)
        times = {name: [] for name in variants}
        for _ in range(REPEATS):  # interleaved: every variant sees the same clocks and temperature
            for name, (fn, setup, n, queue) in plan.items():
                setup()
                times[name].append(batch(fn, n, queue))
        return {name: statistics.median(t) for name, t in times.items()}

    return measure


def _tuning(on: bool):
    return lambda: tunable.enable(on)


def _nothing():
    return None


def _pair(torch, dtype_name, m, n, k):
    sd = {"bf16": st.bfloat16, "fp16": st.float16, "tf32": st.float32}[dtype_name]
    td = {"bf16": torch.bfloat16, "fp16": torch.float16, "tf32": torch.float32}[dtype_name]
    a, b = st.randn(m, k, device="cuda", dtype=sd), st.randn(k, n, device="cuda", dtype=sd)
    ta, tb = torch.randn(m, k, device="cuda", dtype=td), torch.randn(k, n, device="cuda", dtype=td)
    return a, b, ta, tb


def gemm_rows(torch, measure):
    rows = []
    for dname in DTYPES:
        st.backends.cuda.matmul.allow_tf32 = dname == "tf32"
        torch.backends.cuda.matmul.allow_tf32 = dname == "tf32"
        for m, n, k in SHAPES:
            a, b, ta, tb = _pair(torch, dname, m, n, k)
            flop = 2 * m * n * k
            tunable.enable(True)
            st.mm(a, b)  # tunes this problem (kept only while tunable is enabled)
            r = measure({"s": (lambda a=a, b=b: st.mm(a, b), _tuning(False)),
                         "t": (lambda ta=ta, tb=tb: torch.mm(ta, tb), _nothing),
                         "s_tuned": (lambda a=a, b=b: st.mm(a, b), _tuning(True))})
            s_ms, t_ms, s_tuned = r["s"], r["t"], r["s_tuned"]
            tunable.enable(False)
            eager = ""
            if m * n * k <= 128 * 4096 * 4096:
                r = measure({"s": (lambda a=a, b=b: st.mm(a, b), _nothing),
                             "t": (lambda ta=ta, tb=tb: torch.mm(ta, tb), _nothing)}, eager=True)
                eager = f"{r['s'] * 1e3:.0f} / {r['t'] * 1e3:.0f} µs"
            rows.append((dname, f"{m}x{n}x{k}", flop / s_ms / 1e9, flop / s_tuned / 1e9, flop / t_ms / 1e9, eager))
            print(rows[-1], flush=True)
            del a, b, ta, tb
    st.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    return rows


def fused_rows(torch, measure):
    import torch.nn.functional as F  # noqa: N812

    m, n, k = 8192, 4096, 4096
    x, w, bias = (st.randn(*s, device="cuda", dtype=st.bfloat16) for s in ((m, k), (n, k), (n,)))
    tx, tw, tbias = (torch.randn(*s, device="cuda", dtype=torch.bfloat16) for s in ((m, k), (n, k), (n,)))
    fused = st.ops.aten._addmm_activation

    def s_fn():
        return fused(bias, x, w.t(), use_gelu=True)

    def t_fn():
        return F.gelu(F.linear(tx, tw, tbias), approximate="tanh")

    tunable.enable(True)
    s_fn()  # tunes the fused problem
    r = measure({"s": (s_fn, _tuning(False)), "t": (t_fn, _nothing),
                 "t_fused": (lambda: torch._addmm_activation(tbias, tx, tw.t(), use_gelu=True), _nothing),
                 "s_tuned": (s_fn, _tuning(True))})
    tunable.enable(False)
    s_ms, s_tuned, t_ms, t_fused = r["s"], r["s_tuned"], r["t"], r["t_fused"]
    return s_ms, s_tuned, t_ms, t_fused


def _geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--append", action="store_true")
    args = ap.parse_args()
    import torch

    tunable.set_filename(str(Path(tempfile.mkdtemp()) / "bench_gemm_tunable.csv"))
    tunable.write_file_on_exit(False)
    tunable.set_max_tuning_duration(30)
    measure = _timer(torch)
    rows = gemm_rows(torch, measure)
    untuned = [r[2] / r[4] for r in rows]
    tuned = [r[3] / r[4] for r in rows]
    lines = ["| dtype | M x N x K | strided TFLOP/s | strided tuned | torch TFLOP/s | ratio | tuned ratio | "
             "eager µs/call strided / torch |", "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {d} | {s} | {u:.1f} | {tu:.1f} | {t:.1f} | {u / t:.3f} | {tu / t:.3f} | {e} |"
              for d, s, u, tu, t, e in rows]
    lines.append(f"\nGeomean strided / torch: untuned {_geomean(untuned):.3f}, tuned {_geomean(tuned):.3f}; "
                 f"lowest untuned {min(untuned):.3f}, lowest tuned {min(tuned):.3f}.")
    s_ms, s_tuned, t_ms, t_fused = fused_rows(torch, measure)
    lines += ["", "| bf16 linear + bias + gelu(tanh), 8192x4096x4096 | ms | torch unfused / this |",
              "|---|---|---|",
              f"| strided `_addmm_activation` (GELU_BIAS epilogue) | {s_ms:.3f} | {t_ms / s_ms:.3f}x |",
              f"| strided, tuned | {s_tuned:.3f} | {t_ms / s_tuned:.3f}x |",
              f"| torch `F.gelu(F.linear(x, W, b), approximate='tanh')` | {t_ms:.3f} | 1.000x |",
              f"| torch `_addmm_activation` (for reference) | {t_fused:.3f} | {t_ms / t_fused:.3f}x |"]
    table = "\n".join(lines)
    print(table)
    if args.append:
        import cuda.bindings
        import nvmath

        from strided.backends.cuda import blas
        from strided.backends.cuda.driver import driver_version

        dv = driver_version()
        head = (f"\n## {date.today()} — bench_gemm (issue 5 b, c) — {scuda.get_device_name(0)}, CUDA driver "
                f"{dv // 1000}.{dv % 1000 // 10}, torch {torch.__version__}, cuBLASLt {blas.version()}, "
                f"nvmath-python {nvmath.__version__}, cuda-bindings {cuda.bindings.__version__}, strided "
                f"{st.__version__}\n\nTFLOP/s = 2MNK / GPU time per call (median of {REPEATS}; launch queue "
                "pre-filled so host overhead is excluded, see Note [GEMM timing] in bench/bench_gemm.py). "
                "Targets: geomean >= 0.98 untuned, >= 1.0 tuned, no shape below 0.9; fused >= 1.1x.\n\n")
        with Path(__file__).with_name("RESULTS.md").open("a") as f:
            f.write(head + table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
