"""One training step of a small GPT: strided vs PyTorch eager, side by side in one process on one GPU.

The same model code builds both (``lib`` is ``torch`` or ``strided``): GPT-2 small's shapes
(12 layers, 12 heads, 768 wide, vocab 50257, 1024 positions, lm_head tied to wte), fp32, tanh
GELU, attention written out as in nanoGPT (q k^T, causal masked_fill, softmax, @ v) on both sides,
so both run the same math; strided's weights are copied from torch's. A step is zero_grad, forward,
cross-entropy, backward and a fused AdamW step. Reported: median CUDA-event ms per step over
back-to-back steps, and the peak of each library's own allocator (``max_memory_allocated``) during
one step after warm-up. On a GPU the same step (forward, cross-entropy, backward, fused AdamW with
``capturable=True``) is then also captured into a CUDA graph by each library and timed as replays,
reported beside torch's graphed and eager steps. ``--append`` adds a dated table to bench/RESULTS.md in one write;
``--smoke`` runs a tiny model on the CPU to check the script.
"""

from __future__ import annotations

import argparse
import gc
import math
import platform
import statistics
import sys
from datetime import date
from pathlib import Path

from timing import timer

import strided as st
import strided.cuda  # noqa: F401 - st.cuda (events, memory stats)

GPT2 = dict(n_layer=12, n_head=12, n_embd=768, vocab=50257, block=1024, batch=4, seq=256)
SMOKE = dict(n_layer=2, n_head=2, n_embd=16, vocab=50, block=16, batch=2, seq=8)


def build(lib, cfg, device):
    """The GPT of ``cfg`` in ``lib`` (torch or strided), on ``device``."""
    nn = lib.nn
    F = lib.nn.functional
    C, H = cfg["n_embd"], cfg["n_head"]

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(C, 3 * C, device=device)
            self.c_proj = nn.Linear(C, C, device=device)
            mask = lib.ones(cfg["block"], cfg["block"], dtype=lib.bool, device=device).triu(1)
            self.register_buffer("mask", mask, persistent=False)

        def forward(self, x):
            B, T, _ = x.shape
            D = C // H
            q, k, v = self.c_attn(x).split(C, dim=2)
            q = q.view(B, T, H, D).transpose(1, 2)
            k = k.view(B, T, H, D).transpose(1, 2)
            v = v.view(B, T, H, D).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(D))
            att = att.masked_fill(self.mask[:T, :T], float("-inf"))
            att = F.softmax(att, dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
            return self.c_proj(y)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(C, device=device)
            self.attn = Attention()
            self.ln_2 = nn.LayerNorm(C, device=device)
            self.c_fc = nn.Linear(C, 4 * C, device=device)
            self.c_proj = nn.Linear(4 * C, C, device=device)

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.c_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(cfg["vocab"], C, device=device)
            self.wpe = nn.Embedding(cfg["block"], C, device=device)
            self.h = nn.ModuleList([Block() for _ in range(cfg["n_layer"])])
            self.ln_f = nn.LayerNorm(C, device=device)
            self.register_buffer("pos", lib.arange(cfg["block"], device=device), persistent=False)

        def forward(self, idx, targets):
            B, T = idx.shape
            x = self.wte(idx) + self.wpe(self.pos[:T])
            for block in self.h:
                x = block(x)
            logits = F.linear(self.ln_f(x), self.wte.weight)
            return F.cross_entropy(logits.view(B * T, -1), targets.view(B * T))

    return GPT()


# Note [Keeping losses]
# Each library keeps its losses detached, as a training loop that logs them should. Appending the
# loss itself keeps every step's whole autograd graph alive; in strided those nodes are Python
# objects, so the collector's full (generation 2) passes come every ~25 steps and scan them with
# everything else in the process: measured on an H200 host with torch imported (192k tracked
# objects), one such pass took 130-137 ms: 5 ms a step on average, 27 ms a step in the 5-step window
# it falls in. (The run that still kept the graphs reported 61.3 ms a step; a separate process keeping
# detached losses, 39.3 ms.) torch's nodes are C++ objects the collector never sees.
def _side(lib, model, idx, targets, device, n, reps):
    opt = lib.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    losses = []

    def step():
        opt.zero_grad(set_to_none=True)
        loss = model(idx, targets)
        loss.backward()
        opt.step()
        losses.append(loss.detach())  # Note [Keeping losses]

    step()
    step()
    peak = 0
    if device == "cuda":
        lib.cuda.synchronize()
        lib.cuda.reset_peak_memory_stats()
        step()
        lib.cuda.synchronize()
        peak = lib.cuda.max_memory_allocated()
    full = _FullCollections()
    ms = statistics.median(timer(lib, device)(step, n) for _ in range(reps))
    full.stop()
    gc.collect()
    gc.freeze()  # Note [Collector cost]: the same steps with the process's objects out of the collector's scans
    frozen = statistics.median(timer(lib, device)(step, n) for _ in range(reps))
    gc.unfreeze()
    first = [float(x.item()) for x in losses[:3]]
    phases = _phases(lib, device, model, opt, idx, targets)
    phases["full collections in the timed steps"] = full.count
    phases["frozen"] = frozen
    return ms, peak, first, phases


# Note [Collector cost]
# Python's cyclic collector runs a full (generation 2) pass once enough objects have survived two
# younger passes; a pass scans every tracked object in the process (about 190k with torch imported:
# 130 ms on an H200 host). A strided step's activations, saved tensors and graph nodes are Python
# objects that live from forward to backward, so each step promotes thousands of them and a full
# pass comes every 10-25 steps; torch's are C++ objects. The table reports how many full passes
# fell in the timed steps, and the step time again after ``gc.freeze()`` (objects made before the
# steps are left out of the scans, which then cost little): the gap between the two rows is the
# collector's, not strided's dispatch.
class _FullCollections:
    def __init__(self):
        self.count = 0
        gc.callbacks.append(self._cb)

    def _cb(self, phase, info):
        if phase == "start" and info["generation"] == 2:
            self.count += 1

    def stop(self):
        gc.callbacks.remove(self._cb)


def _phases(lib, device, model, opt, idx, targets):
    """ms of forward, backward and optimizer step, each synchronized (a breakdown, not the total)."""
    out = {}
    box = {}

    def fwd():
        opt.zero_grad(set_to_none=True)
        box["loss"] = model(idx, targets)

    for name, fn in (("forward", fwd), ("backward", lambda: box["loss"].backward()), ("optimizer", opt.step)):
        if device == "cuda":
            lib.cuda.synchronize()
        out[name] = timer(lib, device)(fn, 1)
    return out


def _graphed(lib, model, idx, targets, n, reps):
    """ms per step when the same step (forward, cross-entropy, backward, fused AdamW) is captured
    once in a CUDA graph and replayed, and the loss after the replays."""
    kw = dict(lr=1e-4, fused=True, capturable=True)
    opt = lib.optim.AdamW(model.parameters(), **kw)
    side = lib.cuda.Stream()
    side.wait_stream(lib.cuda.current_stream())
    with lib.cuda.stream(side):  # warm-up off the default stream: optimizer state, handles, kernels
        for _ in range(2):
            opt.zero_grad(set_to_none=True)
            model(idx, targets).backward()
            opt.step()
    lib.cuda.current_stream().wait_stream(side)
    g = lib.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with lib.cuda.graph(g):
        loss = model(idx, targets)
        loss.backward()
        opt.step()
    ms = statistics.median(timer(lib, "cuda")(g.replay, n) for _ in range(reps))
    return ms, float(loss.item())


def run(device, cfg, n=5, reps=5):
    import torch

    torch.manual_seed(0)
    tmodel = build(torch, cfg, device)
    smodel = build(st, cfg, device)
    tparams = dict(tmodel.named_parameters())
    with st.no_grad():
        for name, p in smodel.named_parameters():
            p.copy_(st.from_dlpack(tparams[name].detach().clone()))
    g = torch.Generator(device=device).manual_seed(1)
    shape = (cfg["batch"], cfg["seq"])
    tidx = torch.randint(0, cfg["vocab"], shape, device=device, generator=g)
    ttgt = torch.randint(0, cfg["vocab"], shape, device=device, generator=g)
    sidx, stgt = st.from_dlpack(tidx.clone()), st.from_dlpack(ttgt.clone())
    t = _side(torch, tmodel, tidx, ttgt, device, n, reps)
    s = _side(st, smodel, sidx, stgt, device, n, reps)
    grads = [p.grad for p in smodel.parameters() if p.grad is not None]
    print(f"strided: {sum(not g.is_contiguous() for g in grads)} of {len(grads)} grads non-contiguous", flush=True)
    graphed = None
    if device == "cuda":
        graphed = (_graphed(st, smodel, sidx, stgt, n, reps), _graphed(torch, tmodel, tidx, ttgt, n, reps))
    return s, t, sum(p.numel() for p in tmodel.parameters()), graphed


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--append", action="store_true")
    ap.add_argument("--smoke", action="store_true", help="a tiny model on the CPU (checks the script)")
    ap.add_argument("--results", default=str(Path(__file__).parent / "RESULTS.md"),
                    help="the file --append writes to")
    args = ap.parse_args()
    import torch

    cfg = SMOKE if args.smoke else GPT2
    device = "cpu" if args.smoke else "cuda"
    if device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
        st.set_float32_matmul_precision("highest")
    (s_ms, s_peak, s_loss, s_ph), (t_ms, t_peak, t_loss, t_ph), nparams, graphed = run(device, cfg)
    gpu = st.cuda.get_device_name(0) if device == "cuda" else "cpu (smoke)"
    head = (f"GPU: {gpu}; torch {torch.__version__}, python {platform.python_version()}; GPT ({cfg['n_layer']} layers, "
            f"{cfg['n_head']} heads, {cfg['n_embd']} wide, vocab {cfg['vocab']}, {nparams:,} params), fp32, batch "
            f"{cfg['batch']} x {cfg['seq']} tokens; step = zero_grad + forward + cross_entropy + backward + fused "
            "AdamW")
    lines = ["| | strided | torch eager | strided / torch |", "|---|---|---|---|",
             f"| ms per step | {s_ms:.2f} | {t_ms:.2f} | {s_ms / t_ms:.2f}x |",
             f"| peak memory (MiB) | {s_peak / 2**20:.0f} | {t_peak / 2**20:.0f} | "
             f"{(s_peak / t_peak if t_peak else float('nan')):.3f}x |",
             f"| loss, steps 1-3 | {', '.join(f'{x:.4f}' for x in s_loss)} | "
             f"{', '.join(f'{x:.4f}' for x in t_loss)} | |"]
    s_frozen, t_frozen = s_ph.pop("frozen"), t_ph.pop("frozen")
    s_full, t_full = s_ph.pop("full collections in the timed steps"), t_ph.pop("full collections in the timed steps")
    lines += [f"| ms per step after gc.freeze() (Note [Collector cost]) | {s_frozen:.2f} | {t_frozen:.2f} | "
              f"{s_frozen / t_frozen:.2f}x |",
              f"| full gc passes during the timed steps | {s_full} | {t_full} | |"]
    lines += [f"| {k} ms (synchronized, one step) | {s_ph[k]:.2f} | {t_ph[k]:.2f} | {s_ph[k] / t_ph[k]:.2f}x |"
              for k in s_ph]
    if graphed is not None:
        (sg_ms, sg_loss), (tg_ms, tg_loss) = graphed
        lines += [f"| ms per step, CUDA graph replay | {sg_ms:.2f} | {tg_ms:.2f} (graphed) | {sg_ms / tg_ms:.2f}x |",
                  f"| strided graphed vs torch eager | {sg_ms:.2f} | {t_ms:.2f} (eager) | {sg_ms / t_ms:.2f}x |",
                  f"| loss after the graphed steps | {sg_loss:.4f} | {tg_loss:.4f} | |"]
    print(head)
    print("\n".join(lines))
    if args.append and not args.smoke:
        text = (f"\n## {date.today()} — bench_train_step (issue 6): one GPT training step\n\n{head}. ms = median of "
                "CUDA-event times over back-to-back steps; peak = each library's max_memory_allocated over one "
                "step after warm-up.\n\n" + "\n".join(lines) + "\n")
        with open(args.results, "a") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
