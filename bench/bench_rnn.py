"""Recurrent layers: strided's nn.LSTM / nn.GRU against PyTorch's, side by side in one process on one GPU.

One training step (forward, a weighted-sum loss, backward) and one inference forward of a 2-layer
layer (input 256, hidden 512) over a (T=64, N=32) fp32 batch. torch runs twice: with cuDNN (its default,
one library call per layer) and with cuDNN disabled (its native path: a GEMM plus a fused cell kernel per
step, the design strided follows, Note [Fused cells]). Both libraries start from the same weights (torch's
state dict) and input; times are medians over repeats of CUDA-event time per call, host overhead included.
``--append`` adds a dated table to bench/RESULTS.md in one write; ``--smoke`` runs tiny shapes on the CPU.
"""

from __future__ import annotations

import argparse
import contextlib
import platform
import sys
from datetime import date
from pathlib import Path

import numpy as np
from timing import median, timer

import strided as st
import strided.cuda  # noqa: F401 - st.cuda (events, device name)


def _steps(lib, module, x, up):
    def train():
        module.zero_grad(set_to_none=True)
        out, _ = module(x)
        (out * up).sum().backward()

    def infer():
        with lib.no_grad():
            module(x)
    return train, infer


def run(device="cuda", T=64, N=32, F=256, H=512, layers=2, reps=5, n=5):
    import torch

    rows = []
    for name in ("LSTM", "GRU"):
        torch.manual_seed(0)
        tm = getattr(torch.nn, name)(F, H, num_layers=layers).to(device)
        sm = getattr(st.nn, name)(F, H, num_layers=layers).to(device)
        sm.load_state_dict({k: st.from_dlpack(v.detach().clone()) for k, v in tm.state_dict().items()})
        x = torch.randn(T, N, F, device=device)
        up = torch.randn(T, N, H, device=device)
        sx, sup = st.from_dlpack(x.clone()), st.from_dlpack(up.clone())
        with torch.no_grad():
            diff = float((tm(x)[0] - torch.from_dlpack(sm(sx)[0].detach())).abs().max())
        s_train, s_infer = _steps(st, sm, sx, sup)
        t_train, t_infer = _steps(torch, tm, x, up)
        times = {}
        for cudnn in (True, False):
            flags = torch.backends.cudnn.flags(enabled=False) if not cudnn else contextlib.nullcontext()
            with flags:
                times[cudnn] = (median(timer(torch, device), t_train, n, reps),
                                median(timer(torch, device), t_infer, n, reps))
        s_times = (median(timer(st, device), s_train, n, reps), median(timer(st, device), s_infer, n, reps))
        for k, what in enumerate(("train step", "inference forward")):
            rows.append((f"{name} {what}", s_times[k], times[True][k], times[False][k], diff))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--append", action="store_true")
    ap.add_argument("--smoke", action="store_true", help="tiny shapes on the CPU (checks the script)")
    ap.add_argument("--results", default=str(Path(__file__).parent / "RESULTS.md"),
                    help="the file --append writes to")
    args = ap.parse_args()
    import torch

    if args.smoke:
        rows, gpu, shape = run("cpu", T=4, N=2, F=8, H=16, reps=2, n=2), "cpu (smoke)", "T=4, N=2, 8 -> 16"
    else:
        rows, gpu, shape = run("cuda"), st.cuda.get_device_name(0), "T=64, N=32, input 256, hidden 512"
    head = (f"GPU: {gpu}; torch {torch.__version__}, numpy {np.__version__}, python {platform.python_version()}; "
            f"2-layer layers, {shape}, fp32")
    lines = ["| | strided ms | torch cuDNN ms | torch native ms | strided / cuDNN | strided / native "
             "| max abs diff of the output |", "|---|---|---|---|---|---|---|"]
    for what, s, tc, tn, diff in rows:
        lines.append(f"| {what} | {s:.2f} | {tc:.2f} | {tn:.2f} | {s / tc:.2f}x | {s / tn:.2f}x | {diff:.1e} |")
    print(head)
    print("\n".join(lines))
    if args.append and not args.smoke:
        text = (f"\n## {date.today()} — bench_rnn: nn.LSTM and nn.GRU\n\n{head}. ms = median of CUDA-event times "
                "over back-to-back calls (host overhead included); torch native = cuDNN disabled.\n\n"
                + "\n".join(lines) + "\n")
        with open(args.results, "a") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
