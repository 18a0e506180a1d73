"""Python-side overhead of a small CPU op: strided vs NumPy vs torch (CPU, where installed).

Times ``a + b`` on 1k-element float32 tensors, launch after launch, and reports µs per op as the
median of repeats, with ratios to NumPy and torch. Also times the dispatcher alone (a no-op custom
op) so the cost of each layer is visible. ``--append`` adds the table to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import timeit

import numpy as np

import strided as st


def per_call_us(fn, number=2000, repeats=15) -> float:
    fn()
    runs = timeit.repeat(fn, number=number, repeat=repeats)
    return statistics.median(runs) / number * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--append", action="store_true", help="append the table to bench/RESULTS.md")
    args = parser.parse_args()

    rows = []
    a, b = st.rand(args.n), st.rand(args.n)
    na, nb = a.numpy(), b.numpy()
    rows.append(("numpy a + b", per_call_us(lambda: na + nb)))
    rows.append(("strided a + b (operator)", per_call_us(lambda: a + b)))
    rows.append(("strided ops.aten.add.Tensor", per_call_us(lambda: st.ops.aten.add.Tensor(a, b))))

    lib = st.library.Library("bench_dispatch", "DEF")
    noop = lib.define("noop(Tensor self) -> Tensor")
    st.library.impl("bench_dispatch::noop", "CPU")(lambda self: self)
    rows.append(("strided dispatch only (no-op op)", per_call_us(lambda: noop(a))))
    rows.append(("strided empty(1000)", per_call_us(lambda: st.empty(args.n))))
    try:
        import torch

        ta, tb = torch.rand(args.n), torch.rand(args.n)
        rows.append(("torch a + b (CPU)", per_call_us(lambda: ta + tb)))
        torch_version = torch.__version__
    except ImportError:
        torch_version = "not installed"

    times = dict(rows)
    ours = times["strided a + b (operator)"]
    lines = [
        f"### bench_dispatch — {datetime.date.today().isoformat()}",
        "",
        f"Host CPU (no GPU), Python {platform.python_version()}, NumPy {np.__version__}, torch {torch_version}, "
        f"{os.cpu_count()} cores. Median of 15 repeats x 2000 calls; `a + b` on {args.n} float32 elements.",
        "",
        "| case | µs per call | strided / this |",
        "|---|---:|---:|",
    ]
    for name, us in rows:
        lines.append(f"| {name} | {us:.2f} | {ours / us:.2f} |")
    table = "\n".join(lines)
    print(table)
    if args.append:
        path = os.path.join(os.path.dirname(__file__), "RESULTS.md")
        with open(path, "a", encoding="utf-8") as f:
            f.write("\n" + table + "\n")


if __name__ == "__main__":
    main()
