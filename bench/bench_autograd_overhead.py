"""Host (Python) cost per operator of a GPT training step's forward and backward, strided vs torch.

Builds bench_train_step's GPT (the same model code for both libraries) with a small config on
``meta`` (shapes only: no compute, so the time is pure host overhead) or on the CPU, then times
``zero_grad + forward + cross_entropy`` and ``backward`` separately (median over repeats) and counts
the operator calls of each with ``strided.utils.profiler.count_ops`` (nested composite calls
included). Prints ms per phase and µs per operator call. ``--profile`` adds a cProfile of one
strided step (forward + backward), sorted by tottime; ``--no-torch`` skips the torch side.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_train_step import build  # noqa: E402

import strided as st  # noqa: E402


def _config(args) -> dict:
    return dict(n_layer=args.layers, n_head=args.heads, n_embd=args.embd, vocab=args.vocab,
                block=args.seq, batch=args.batch, seq=args.seq)


def _phases(lib, model, idx, tgt, reps: int, stat=statistics.median) -> tuple:
    """``stat`` (median, or min with --min) of the ms of (forward, backward) over ``reps`` steps."""
    fwd, bwd = [], []
    for _ in range(reps):
        for p in model.parameters():
            p.grad = None
        t0 = time.perf_counter()
        loss = model(idx, tgt)
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        del loss
        fwd.append((t1 - t0) * 1e3)
        bwd.append((t2 - t1) * 1e3)
    return stat(fwd), stat(bwd)


def _inputs(lib, cfg, device):
    g = lib.Generator(device="cpu") if lib is not st else None
    shape = (cfg["batch"], cfg["seq"])
    if g is not None:
        g.manual_seed(1)
        return (lib.randint(0, cfg["vocab"], shape, generator=g).to(device),
                lib.randint(0, cfg["vocab"], shape, generator=g).to(device))
    return (lib.randint(0, cfg["vocab"], shape, device=device),
            lib.randint(0, cfg["vocab"], shape, device=device))


def _op_counts(model, idx, tgt) -> tuple:
    from strided.utils.profiler import count_ops

    for p in model.parameters():
        p.grad = None
    with count_ops() as fwd:
        loss = model(idx, tgt)
    with count_ops() as bwd:
        loss.backward()
    return fwd, bwd


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="meta", choices=("meta", "cpu"))
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=2)
    ap.add_argument("--embd", type=int, default=32)
    ap.add_argument("--vocab", type=int, default=64)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--seq", type=int, default=16)
    ap.add_argument("--reps", type=int, default=21, help="steps timed (median)")
    ap.add_argument("--min", action="store_true", help="report the fastest step, not the median (noisy hosts)")
    ap.add_argument("--profile", action="store_true", help="cProfile one strided step, print the top functions")
    ap.add_argument("--top", type=int, default=30, help="rows of the cProfile table")
    ap.add_argument("--ops", action="store_true", help="print the per-op call table of forward and backward")
    ap.add_argument("--no-torch", action="store_true", help="time strided only")
    args = ap.parse_args(argv)
    cfg = _config(args)

    sides = [("strided", st)]
    if not args.no_torch:
        import torch

        torch.manual_seed(0)
        sides.append(("torch", torch))
    st.manual_seed(0)
    results = {}
    for name, lib in sides:
        model = build(lib, cfg, args.device)
        idx, tgt = _inputs(lib, cfg, args.device)
        _phases(lib, model, idx, tgt, 2)  # warm-up (kernel caches)
        results[name] = _phases(lib, model, idx, tgt, args.reps, min if args.min else statistics.median)
        if name == "strided":
            fwd_ops, bwd_ops = _op_counts(model, idx, tgt)
            smodel, sidx, stgt = model, idx, tgt
    nf, nb = fwd_ops.total_calls, bwd_ops.total_calls
    print(f"device {args.device}, config {cfg}; strided ops: forward {nf}, backward {nb} "
          "(dispatched calls, composite ones included)")
    print(f"{'':10} {'fwd ms':>8} {'bwd ms':>8} {'fwd us/op':>10} {'bwd us/op':>10}")
    for name, (f, b) in results.items():
        print(f"{name:10} {f:8.2f} {b:8.2f} {f * 1e3 / nf:10.1f} {b * 1e3 / nb:10.1f}")
    if "torch" in results:
        (sf, sb), (tf, tb) = results["strided"], results["torch"]
        print(f"{'ratio':10} {sf / tf:7.2f}x {sb / tb:7.2f}x  (us/op over strided's op count on both sides)")
    if args.ops:
        print("\nforward\n" + fwd_ops.table() + "\n\nbackward\n" + bwd_ops.table())
    if args.profile:
        prof = cProfile.Profile()
        for p in smodel.parameters():
            p.grad = None
        prof.enable()
        loss = smodel(sidx, stgt)
        loss.backward()
        prof.disable()
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(args.top)
        print(out.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
