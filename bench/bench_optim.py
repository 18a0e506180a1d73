"""AdamW on GPT-2-small's parameter shapes: strided vs PyTorch, side by side in one process on one GPU.

124,439,808 fp32 params in 148 tensors (wte, wpe, 12 blocks, ln_f). For each implementation
(for-loop, foreach, fused) both libraries start from the same params and grads (strided imports
torch's tensors zero-copy through DLPack, then clones them) and run back-to-back steps; the figure
is the median over repeats of CUDA-event time per step, host overhead included (no GPU-side
sleep: a step that cannot keep the GPU busy pays for it), timed from an idle GPU and in steady
state (Note [From idle and steady state]). Bandwidth counts the fused kernel's
traffic, 28 bytes per element (param, grad, exp_avg, exp_avg_sq read; param and states written),
for every implementation. ``--append`` adds a dated table to bench/RESULTS.md in one write;
``--smoke`` runs tiny shapes on the CPU to check the script.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
from datetime import date
from pathlib import Path

from timing import median, timer

import strided as st
import strided.cuda  # noqa: F401 - st.cuda (events, device name)

IMPLS = {"for-loop": dict(foreach=False), "foreach": dict(foreach=True), "fused": dict(fused=True)}


def gpt2_shapes(n_layer=12, n_embd=768, vocab=50257, block=1024):
    """The 148 parameter shapes of GPT-2 small (nanoGPT order, lm_head tied to wte)."""
    shapes = [(vocab, n_embd), (block, n_embd)]
    for _ in range(n_layer):
        shapes += [(n_embd,), (n_embd,), (n_embd, 3 * n_embd), (3 * n_embd,), (n_embd, n_embd), (n_embd,),
                   (n_embd,), (n_embd,), (n_embd, 4 * n_embd), (4 * n_embd,), (4 * n_embd, n_embd), (n_embd,)]
    return shapes + [(n_embd,), (n_embd,)]


# Note [From idle and steady state]
# "From idle" times n steps between two events with the GPU idle at the first: the first step's
# host time (everything before its first launch) is GPU idle inside the window, so a library with
# more host work per step pays a share of it (1/n) even when its steps keep the GPU busy. "Steady
# state" starts the window after one step has been queued: the GPU is busy at the start event, and
# idles inside the window only if a step's host time exceeds its GPU time (a host-bound step still
# pays in full). In training the step follows a backward pass that keeps the GPU busy, which the
# steady-state figure models; both are printed.
def run(device="cuda", shapes=None, reps=5):
    import torch

    shapes = shapes or gpt2_shapes()
    numel = sum(int(torch.tensor(s).prod()) if s else 1 for s in shapes)
    gen = torch.Generator(device=device).manual_seed(0)
    t_params0 = [torch.randn(s, device=device, generator=gen) * 0.02 for s in shapes]
    t_grads0 = [torch.randn(s, device=device, generator=gen) * 1e-3 for s in shapes]
    rows = []
    for name, flags in IMPLS.items():
        n = 3 if name == "for-loop" else 10
        # torch
        tp = [p.clone() for p in t_params0]
        for p, g in zip(tp, t_grads0):
            p.grad = g.clone()
        topt = torch.optim.AdamW(tp, lr=1e-3, weight_decay=0.01, **flags)
        # strided, from identical data
        sp = [st.from_dlpack(p.clone()) for p in t_params0]
        for p, g in zip(sp, t_grads0):
            p.grad = st.from_dlpack(g.clone())
        sopt = st.optim.AdamW(sp, lr=1e-3, weight_decay=0.01, **flags)
        # Note [From idle and steady state]; repeats alternate between the libraries
        t_ms, s_ms, t_steady, s_steady = (statistics.median(v) for v in zip(*(
            (median(timer(torch, device), topt.step, n, 1), median(timer(st, device), sopt.step, n, 1),
             median(timer(torch, device, True), topt.step, n, 1), median(timer(st, device, True), sopt.step, n, 1))
            for _ in range(reps))))
        # three steps on both sides from the same start, then compare the params
        tp2 = [p.clone() for p in t_params0]
        sp2 = [st.from_dlpack(p.clone()) for p in t_params0]
        for p, g in zip(tp2, t_grads0):
            p.grad = g.clone()
        for p, g in zip(sp2, t_grads0):
            p.grad = st.from_dlpack(g.clone())
        o1 = torch.optim.AdamW(tp2, lr=1e-3, weight_decay=0.01, **flags)
        o2 = st.optim.AdamW(sp2, lr=1e-3, weight_decay=0.01, **flags)
        for _ in range(3):
            o1.step()
            o2.step()
        err = max(float((torch.from_dlpack(b) - a).abs().max()) for a, b in zip(tp2, sp2))
        nbytes = 28 * numel
        rows.append((name, s_ms, t_ms, nbytes / (s_ms * 1e-3) / 1e9, nbytes / (t_ms * 1e-3) / 1e9, err, s_steady,
                     t_steady))
        del tp, sp, topt, sopt, tp2, sp2, o1, o2
        if device == "cuda":
            torch.cuda.empty_cache()
    return rows, numel, len(shapes)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--append", action="store_true")
    ap.add_argument("--smoke", action="store_true", help="tiny shapes on the CPU (checks the script)")
    ap.add_argument("--results", default=str(Path(__file__).parent / "RESULTS.md"),
                    help="the file --append writes to")
    args = ap.parse_args()
    import torch

    if args.smoke:
        rows, numel, ntensors = run("cpu", gpt2_shapes(2, 16, 50, 8), reps=2)
        gpu = "cpu (smoke)"
    else:
        rows, numel, ntensors = run("cuda")
        gpu = st.cuda.get_device_name(0)
    head = (f"GPU: {gpu}; torch {torch.__version__}, python {platform.python_version()}; AdamW (lr 1e-3, "
            f"weight_decay 0.01) on {ntensors} tensors, {numel:,} fp32 params")
    lines = ["| implementation | strided ms/step | torch ms/step | strided / torch | strided GB/s | torch GB/s "
             "| max abs diff after 3 steps | steady strided ms | steady torch ms | steady strided / torch |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name, s, t, sbw, tbw, err, ss, ts in rows:
        lines.append(f"| {name} | {s:.3f} | {t:.3f} | {s / t:.2f}x | {sbw:.0f} | {tbw:.0f} | {err:.1e} | {ss:.3f} "
                     f"| {ts:.3f} | {ss / ts:.2f}x |")
    print(head)
    print("\n".join(lines))
    if args.append and not args.smoke:
        text = (f"\n## {date.today()} — bench_optim (issue 6): AdamW on GPT-2-small's parameters\n\n{head}. Time per "
                "step = median of CUDA-event times over back-to-back steps from an idle GPU (host overhead included); "
                "steady = the same with one step queued before the first event (Note [From idle and steady state] "
                "in bench_optim.py); GB/s = 28 bytes per param (the fused kernel's reads + writes) over the "
                "first.\n\n" + "\n".join(lines) + "\n")
        with open(args.results, "a") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
