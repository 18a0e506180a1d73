"""``python -m strided.demo``: train a small character-level GPT on Shakespeare, then sample from it.

On the best available device (CUDA when usable, else CPU) it builds a GPT (token and position
embeddings, pre-LayerNorm blocks of causal self-attention and a GELU MLP) from ``strided.nn``,
trains it with AdamW on the text the package ships (``strided/data/shakespeare.txt``), showing
the loss, tokens/s and memory as it goes, then prints a sample. On CUDA it trains under autocast
(bfloat16) with the fused AdamW; the tiny configuration trains on a laptop CPU in under a minute.
``--cuda-graph`` captures forward and backward once and replays them (Note [Demo graph]);
``--checkpoint`` keeps only each block's input and recomputes the block in backward
(``strided.utils.checkpoint``): the memory figures on the progress bar drop.

Note [Demo graph]
With ``--cuda-graph`` the first steps run eagerly on a side stream (optimizer state, kernels,
cuBLASLt handles), then one step's forward and backward are captured into a CUDA graph with the
batch in static tensors. Every later step copies its batch into them, replays the graph (which
writes fresh gradients into the same .grad tensors, so no zero_grad) and runs the fused AdamW
step eagerly, so the learning-rate schedule still applies. Dropout draws fresh masks on every
replay (Note [Random ops under capture]).
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
import time
from dataclasses import replace

import numpy as np

import strided as st
from strided.demo_model import CONFIGS, GPT, Block, CharData, Config, load_text  # noqa: F401
from strided.utils.profiler import count_ops
from strided.utils.progress import Progress


# ------------------------------------------------------------------------------------- training
def best_device() -> str:
    try:
        from strided import cuda

        return "cuda" if cuda.is_available() else "cpu"
    except ImportError:
        return "cpu"


def memory_text(device) -> str:
    if device.type == "cuda":
        return (f"mem {st.cuda.memory_allocated() / 2**20:.0f}/{st.cuda.memory_reserved() / 2**20:.0f} MiB "
                "alloc/reserved")
    try:
        import resource

        return f"host rss {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB"
    except ImportError:  # not on POSIX
        return ""


class TrainBar(Progress):
    """The shared progress bar with the training figures appended."""

    postfix = ""

    def line(self, now=None) -> str:
        return f"{super().line(now)} | {self.postfix}"


def lr_at(step: int, cfg: Config, steps: int) -> float:
    """Linear warmup, then cosine decay to a tenth of the peak."""
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    frac = (step - cfg.warmup) / max(1, steps - cfg.warmup)
    return cfg.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac)))


def make_optimizer(model: GPT, cfg: Config, device):
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}]
    return st.optim.AdamW(groups, lr=cfg.lr, betas=(0.9, 0.99), fused=True)


def evaluate(model: GPT, data: CharData, cfg: Config, amp_ctx, batches: int = 4) -> float:
    model.eval()
    losses = []
    with st.no_grad():
        for _ in range(batches):
            x, y = data.batch("val", cfg.batch_size, cfg.block_size)
            with amp_ctx():
                losses.append(model(x, y)[1].item())
    model.train()
    return sum(losses) / len(losses)


class GraphedStep:
    """Forward + backward of one batch as a CUDA graph (Note [Demo graph])."""

    WARMUP = 3  # eager steps on the side stream before the capture

    def __init__(self, model, opt, amp_ctx):
        self.model, self.opt, self.amp_ctx = model, opt, amp_ctx
        self.side = st.cuda.Stream()
        self.graph = None
        self.x = self.y = self.loss = None
        self.steps = 0

    def __call__(self, x, y):
        """Loss of (x, y) with .grad filled; the first WARMUP calls run eagerly."""
        if self.steps < self.WARMUP:
            self.steps += 1
            self.side.wait_stream(st.cuda.current_stream())
            with st.cuda.stream(self.side):
                with self.amp_ctx():
                    _, loss = self.model(x, y)
                self.opt.zero_grad(set_to_none=True)
                loss.backward()
            st.cuda.current_stream().wait_stream(self.side)
            return loss
        if self.graph is None:
            self.x, self.y = x.clone(), y.clone()
            self.opt.zero_grad(set_to_none=True)  # the captured backward allocates the static grads
            self.graph = st.cuda.CUDAGraph()
            with st.cuda.graph(self.graph, stream=self.side):
                with self.amp_ctx():
                    _, self.loss = self.model(self.x, self.y)
                self.loss.backward()
        self.x.copy_(x)
        self.y.copy_(y)
        self.graph.replay()
        return self.loss.detach().clone()  # the static loss is overwritten by the next replay


def train(cfg: Config, device, use_amp: bool, seed: int, sample_tokens: int, log=print,
          cuda_graph: bool = False, profile_last: bool = False, profile_memory: bool = False) -> dict:
    """Train ``cfg`` on ``device``; returns the losses and timings (the CLI prints them). The last step's op
    calls are counted, or with ``profile_last`` recorded by ``strided.profiler`` (``result["profile"]``)."""
    st.manual_seed(seed)
    data = CharData(load_text(), device, seed)
    model = GPT(cfg, data.vocab_size, device)
    opt = make_optimizer(model, cfg, device)
    n_params = sum(p.numel() for p in model.parameters())
    amp_dtype = st.bfloat16

    def amp_ctx():
        return st.autocast(device.type, dtype=amp_dtype, enabled=use_amp)

    if cuda_graph and device.type != "cuda":
        raise ValueError(f"cuda_graph=True needs a CUDA device, got {device}")
    graphed = GraphedStep(model, opt, amp_ctx) if cuda_graph else None
    log(f"strided {st.__version__}: GPT {cfg.n_layer} layers x {cfg.n_embd} wide, {cfg.n_head} heads, "
        f"context {cfg.block_size}, {n_params / 1e6:.2f}M parameters, vocab {data.vocab_size}; "
        f"device {device}, autocast {'bfloat16' if use_amp else 'off'}, fused AdamW"
        f"{', forward + backward as a CUDA graph' if cuda_graph else ''}"
        f"{', activation checkpointing' if cfg.checkpoint else ''}; {len(data.train):,} training characters")
    history = []  # detached 0-dim losses, read back once at the end
    shown, last_read = float("nan"), 0.0
    tokens_per_step = cfg.batch_size * cfg.block_size
    interactive = sys.stderr.isatty()
    log_every = max(1, cfg.steps // 10)
    t_start = time.perf_counter()
    stats = None
    with TrainBar(total=cfg.steps, desc="train") as bar:
        for step in range(cfg.steps):
            for group in opt.param_groups:
                group["lr"] = lr_at(step, cfg, cfg.steps)
            x, y = data.batch("train", cfg.batch_size, cfg.block_size)
            profile = step == cfg.steps - 1
            if not profile:
                ctx = contextlib.nullcontext()
            elif profile_last:
                ctx = st.profiler.profile(activities=st.profiler.supported_activities() if device.type == "cuda"
                                          else [st.profiler.ProfilerActivity.CPU], profile_memory=profile_memory)
            else:
                ctx = count_ops()
            with ctx as counted:
                if graphed is not None:
                    loss = graphed(x, y)
                else:
                    with amp_ctx():
                        _, loss = model(x, y)
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                opt.step()
            if profile:
                stats = counted
            history.append(loss.detach())
            now = time.perf_counter()
            tok_s = (step + 1) * tokens_per_step / (now - t_start)
            should_log = not interactive and ((step + 1) % log_every == 0 or step == 0)
            # Note [Demo syncs]: reading the loss waits for the device; read it only when it is shown
            if should_log or (interactive and now - last_read >= bar.min_interval) or step == cfg.steps - 1:
                shown, last_read = loss.item(), now
                bar.postfix = f"loss {shown:.3f} | {tok_s:,.0f} tok/s | {memory_text(device)}"
            bar.update()
            if should_log:
                log(f"step {step + 1:>5}/{cfg.steps}  loss {shown:.4f}  {tok_s:,.0f} tok/s  {memory_text(device)}")
    seconds = time.perf_counter() - t_start
    losses = st.stack(history).float().cpu().tolist()
    val = evaluate(model, data, cfg, amp_ctx)
    result = {"losses": losses, "seconds": seconds, "val_loss": val, "params": n_params,
              "tokens_per_s": cfg.steps * tokens_per_step / seconds,
              "op_stats": None if profile_last else stats, "profile": stats if profile_last else None}
    if sample_tokens > 0:
        model.eval()
        rng = np.random.default_rng(seed)
        prompt = st.tensor([[data.stoi["\n"]]], device=device)
        result["sample"] = data.decode(model.generate(prompt, sample_tokens, rng)[1:])
    return result


def summarize_ops(stats, top: int = 6) -> str:
    """One line: op calls in one training step and the most frequent ops."""
    per_op: dict[str, int] = {}
    for (name, _key), n in stats.calls.items():
        short = name.removeprefix("aten::")
        per_op[short] = per_op.get(short, 0) + n
    common = sorted(per_op.items(), key=lambda kv: -kv[1])[:top]
    return (f"dispatch: {stats.total_calls} op calls in one training step; most frequent: "
            + ", ".join(f"{name} {n}" for name, n in common))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m strided.demo",
        description="Train a small character-level GPT on Shakespeare, then sample from it.")
    parser.add_argument("--device", default=None, help="cpu or cuda (default: cuda when usable, else cpu)")
    parser.add_argument("--config", choices=sorted(CONFIGS), default=None,
                        help="model size (default: small on cuda, tiny on cpu)")
    parser.add_argument("--steps", type=int, default=None, help="training steps (default: the config's)")
    parser.add_argument("--seed", type=int, default=1337, help="seed for init, batches and sampling")
    parser.add_argument("--sample-tokens", type=int, default=300,
                        help="characters to sample after training (0: none)")
    parser.add_argument("--amp", action=argparse.BooleanOptionalAction, default=None,
                        help="autocast to bfloat16 (default: on for cuda, off for cpu)")
    parser.add_argument("--cuda-graph", action="store_true",
                        help="capture forward + backward as a CUDA graph after 3 eager steps and replay it "
                             "(cuda only; the optimizer step stays eager)")
    parser.add_argument("--checkpoint", action="store_true",
                        help="keep only each block's input and recompute its activations in backward (less "
                             "memory, more compute); not with --cuda-graph")
    parser.add_argument("--profile", action="store_true",
                        help="record the last training step with strided.profiler and print its table: op "
                             "calls, backward nodes and, on cuda, GPU kernel times")
    parser.add_argument("--trace", metavar="FILE", default=None,
                        help="write the profiled last step as a Chrome trace to FILE (implies --profile; open "
                             "it in https://ui.perfetto.dev)")
    parser.add_argument("--profile-memory", action="store_true",
                        help="with the profile, charge each allocation and free to its op and print the ops that "
                             "allocate the most memory (implies --profile)")
    parser.add_argument("--threads", type=int, default=None,
                        help="CPU BLAS threads (default: 1 for the tiny config, whose matrices are too "
                             "small to gain from more; else the library default)")
    args = parser.parse_args(argv)
    if args.checkpoint and args.cuda_graph:  # a combination refused on any machine, before asking for a GPU
        parser.error("--checkpoint and --cuda-graph cannot be combined")
    try:
        device = st.device(args.device or best_device())
    except (RuntimeError, ValueError, TypeError):
        device = None
    if device is None or device.type not in ("cpu", "cuda"):
        parser.error(f"--device must be cpu or cuda, got {args.device}")
    if device.type == "cuda" and not st.cuda.is_available():
        parser.error("--device cuda: no usable CUDA GPU here (strided.cuda.is_available() is False)")
    if device.type == "cuda" and device.index is not None and device.index >= st.cuda.device_count():
        parser.error(f"--device {args.device}: this machine has {st.cuda.device_count()} CUDA device(s)")
    for name, value, least in (("--seed", args.seed, 0), ("--sample-tokens", args.sample_tokens, 0),
                               ("--threads", args.threads, 1)):
        if value is not None and value < least:
            parser.error(f"{name} must be {'positive' if least else 'non-negative'}, got {value}")
    if args.trace is not None:
        folder = os.path.dirname(os.path.abspath(args.trace))
        if os.path.isdir(args.trace) or not os.path.isdir(folder) or not os.access(folder, os.W_OK):
            parser.error(f"--trace {args.trace}: cannot write there (checked before training, not after)")
    cfg = CONFIGS[args.config or ("small" if device.type == "cuda" else "tiny")]
    if args.steps is not None:
        if args.steps < 1:
            parser.error("--steps must be positive")
        cfg = replace(cfg, steps=args.steps, warmup=min(cfg.warmup, max(1, args.steps // 10)))
    use_amp = device.type == "cuda" if args.amp is None else args.amp
    if args.cuda_graph and device.type != "cuda":
        parser.error("--cuda-graph needs --device cuda")
    if args.checkpoint:
        cfg = replace(cfg, checkpoint=True)
    if args.threads is not None or (device.type == "cpu" and cfg.n_embd <= 64):
        # Note [Demo threads]: GEMMs of a few MFLOP lose to BLAS threads' start-up and, on a
        # busy machine, to their spin-waiting (measured 4x slower per step with 2 threads on 2 cores).
        st.set_num_threads(args.threads or 1)

    profile_last = args.profile or args.trace is not None or args.profile_memory
    result = train(cfg, device, use_amp, args.seed, args.sample_tokens, cuda_graph=args.cuda_graph,
                   profile_last=profile_last, profile_memory=args.profile_memory)
    losses = result["losses"]
    tail = losses[-min(10, len(losses)):]
    print(f"\nloss {losses[0]:.3f} (step 1; ln(vocab) = {math.log(len(set(load_text()))):.3f}) -> "
          f"{sum(tail) / len(tail):.3f} (mean of the last {len(tail)} steps); validation {result['val_loss']:.3f}")
    print(f"{len(losses)} steps in {result['seconds']:.1f} s, {result['tokens_per_s']:,.0f} tokens/s")
    if result["op_stats"] is not None:
        print(summarize_ops(result["op_stats"]))
    if result["profile"] is not None:
        prof = result["profile"]
        key = "cuda_time_total" if device.type == "cuda" else "cpu_time_total"
        print("\nthe last training step, by strided.profiler:")
        print(prof.key_averages().table(sort_by=key, row_limit=15))
        if args.profile_memory:
            mem = "self_cuda_memory_usage" if device.type == "cuda" else "self_cpu_memory_usage"
            print("\nwhere the step's memory goes (allocated minus freed inside each op; [memory]: outside any op):")
            print(prof.key_averages().table(sort_by=mem, row_limit=10))
        if args.trace is not None:
            prof.export_chrome_trace(args.trace)
            print(f"Chrome trace of the step written to {args.trace} (open it in https://ui.perfetto.dev)")
    if "sample" in result:
        print("\n--- sample ---\n" + result["sample"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
