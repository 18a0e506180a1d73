"""strided.linalg against torch.linalg, side by side in one process on one GPU.

strided runs its own CUDA kernels for the factorizations (blocked Cholesky / LU / triangular solve, Householder
QR, parallel Jacobi for eigh and SVD: Note [Linear-algebra kernels] and backends/cuda/kernels/linalg_*); torch
calls cuSOLVER / MAGMA. Each row times one call
(median over repeats of CUDA-event time, host overhead and the syncs of the plain forms included) and
reports the largest difference from torch's result, measured on a quantity both define uniquely
(reconstruction error for the decompositions whose factors are unique only up to signs).
``--append`` adds a dated table to bench/RESULTS.md in one write; ``--smoke`` runs tiny shapes on the CPU.
"""

from __future__ import annotations

import argparse
import platform
import sys
from datetime import date
from pathlib import Path

import numpy as np
from timing import median, timer

import strided as st
import strided.cuda  # noqa: F401 - st.cuda (events, device name)


def _cases(scale: int):
    """(name, shape builder, strided call, torch call, check) with sizes divided by ``scale``."""
    n, b = 512 // scale, 32 // scale

    def spd(lib, rng, shape):
        a = rng.standard_normal(shape)
        return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])

    def gen(lib, rng, shape):
        a = rng.standard_normal(shape)
        return a + 2 * np.eye(shape[-1]) if shape[-1] == shape[-2] else a

    recon_qr = ("norm(QR - A) / norm(A)", lambda lib, out, a: lib.linalg.norm(out[0] @ out[1] - a) / lib.linalg.norm(a))
    recon_svd = ("norm(U S Vh - A) / norm(A)",
                 lambda lib, out, a: lib.linalg.norm((out[0] * out[1].unsqueeze(-2)) @ out[2] - a) / lib.linalg.norm(a))
    recon_eigh = ("norm(V W V^T - A) / norm(A)",
                  lambda lib, out, a: lib.linalg.norm((out[1] * out[0].unsqueeze(-2)) @ out[1].mT - a)
                  / lib.linalg.norm(a))
    return [
        (f"cholesky {n}x{n}", spd, (n, n), lambda L, a: L.linalg.cholesky(a), None),
        (f"cholesky batch 256x{b}x{b}", spd, (256, b, b), lambda L, a: L.linalg.cholesky(a), None),
        (f"solve {n}x{n}, 16 rhs", gen, (n, n), lambda L, a: L.linalg.solve(a, a[:, :16]), None),
        (f"inv {n}x{n}", gen, (n, n), lambda L, a: L.linalg.inv(a), None),
        (f"lu_factor {n}x{n}", gen, (n, n), lambda L, a: L.linalg.lu_factor(a)[0], None),
        (f"solve batch 256x{b}x{b}", gen, (256, b, b), lambda L, a: L.linalg.solve(a, a[..., :1]), None),
        (f"slogdet batch 256x{b}x{b}", gen, (256, b, b), lambda L, a: L.linalg.slogdet(a)[1], None),
        (f"qr {n}x{n // 2}", gen, (n, n // 2), lambda L, a: L.linalg.qr(a), recon_qr),
        (f"qr {4 * n}x{4 * n}", gen, (4 * n, 4 * n), lambda L, a: L.linalg.qr(a), recon_qr),  # the blocked QR
        (f"qr {8 * n}x{2 * n}", gen, (8 * n, 2 * n), lambda L, a: L.linalg.qr(a), recon_qr),
        (f"eigh {n // 4}x{n // 4}", spd, (n // 4, n // 4), lambda L, a: L.linalg.eigh(a), recon_eigh),
        (f"eigh batch 64x{b // 2}x{b // 2}", spd, (64, b // 2, b // 2), lambda L, a: L.linalg.eigh(a), recon_eigh),
        (f"eigh {n // 2}x{n // 2}", spd, (n // 2, n // 2), lambda L, a: L.linalg.eigh(a), recon_eigh),
        (f"svd {n // 2}x{n // 4}", gen, (n // 2, n // 4), lambda L, a: L.linalg.svd(a, full_matrices=False), recon_svd),
        (f"svd batch 64x{b // 2}x{b // 2}", gen, (64, b // 2, b // 2),
         lambda L, a: L.linalg.svd(a, full_matrices=False), recon_svd),
        (f"matrix_exp {n // 8}x{n // 8}", gen, (n // 8, n // 8), lambda L, a: L.linalg.matrix_exp(a * 0.1), None),
    ]


def run(device="cuda", scale=1, dtype="float32", reps=5, n=3):
    import torch

    rows = []
    rng = np.random.default_rng(0)
    for name, make, shape, call, check in _cases(scale):
        a = make(None, rng, shape).astype(dtype)
        ta, sa = torch.tensor(a, device=device), st.tensor(a, device=device)
        s_out, t_out = call(st, sa), call(torch, ta)
        if check is None:
            ref = t_out.double().cpu().numpy()
            diff = float(np.abs(s_out.double().cpu().numpy() - ref).max() / max(np.abs(ref).max(), 1e-30))
            what = "rel. diff from torch"
        else:
            what, fn = check
            diff = float(fn(st, s_out, sa).item())
            diff = max(diff, float(fn(torch, t_out, ta).item()))  # the larger of the two libraries' errors
        s_ms = median(timer(st, device), lambda call=call, sa=sa: call(st, sa), n, reps, warmup=1)
        t_ms = median(timer(torch, device), lambda call=call, ta=ta: call(torch, ta), n, reps, warmup=1)
        rows.append((name, s_ms, t_ms, diff, what))
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
        rows, gpu = run("cpu", scale=16, reps=1, n=1), "cpu (smoke)"
    else:
        rows, gpu = run("cuda"), st.cuda.get_device_name(0)
    head = (f"GPU: {gpu}; torch {torch.__version__}, numpy {np.__version__}, python {platform.python_version()}; "
            "float32")
    lines = ["| | strided ms | torch ms | strided / torch | error | measured as |", "|---|---|---|---|---|---|"]
    for name, s, t, diff, what in rows:
        lines.append(f"| {name} | {s:.3f} | {t:.3f} | {s / t:.1f}x | {diff:.1e} | {what} |")
    print(head)
    print("\n".join(lines))
    if args.append and not args.smoke:
        text = (f"\n## {date.today()} — bench_linalg: strided.linalg against torch.linalg\n\n{head}. ms = median "
                "of CUDA-event times per call (host overhead and the plain forms' error-check syncs included). "
                "strided runs its own CUDA factorization kernels; torch calls cuSOLVER / MAGMA.\n\n"
                + "\n".join(lines) + "\n")
        with open(args.results, "a") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
