"""``python -m strided.demo``: run a small MLP forward pass and show what the runtime did.

On the best available device (CUDA when usable, else CPU) it builds a two-layer MLP from
factories, runs the forward pass through the dispatcher (linear -> addmm, relu, log_softmax,
cross_entropy), checks it on the Meta device (shapes only, no memory), and prints the shapes,
the per-op dispatch counts and the time per forward pass.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import strided as st
from strided.utils.profiler import count_ops


def best_device() -> str:
    try:
        from strided import cuda

        return "cuda" if cuda.is_available() else "cpu"
    except ImportError:
        return "cpu"


def make_mlp(sizes, device, generator):
    """Weights for Linear layers ``sizes[i] -> sizes[i+1]`` (torch's default uniform init)."""
    layers = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        bound = 1.0 / fan_in ** 0.5
        w = st.empty(fan_out, fan_in, device=device).uniform_(-bound, bound, generator=generator)
        b = st.empty(fan_out, device=device).uniform_(-bound, bound, generator=generator)
        layers.append((w, b))
    return layers


def forward(layers, x):
    for i, (w, b) in enumerate(layers):
        x = st.linear(x, w, b)
        if i < len(layers) - 1:
            x = st.relu(x)
    return x


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m strided.demo", description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None, help="cpu, cuda or meta (default: best available)")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--sizes", default="784,256,128,10", help="layer widths, comma-separated")
    parser.add_argument("--repeats", type=int, default=20, help="timed forward passes")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    if len(sizes) < 2 or min(sizes) < 1 or args.batch < 1 or args.repeats < 1:
        parser.error("--sizes needs at least two positive widths; --batch and --repeats must be positive")
    device = args.device or best_device()

    gen = st.Generator(device if device != "meta" else "cpu").manual_seed(0)
    layers = make_mlp(sizes, device, gen if device != "meta" else None)
    x = st.randn(args.batch, sizes[0], device=device, generator=gen if device != "meta" else None)
    target = st.randint(0, sizes[-1], (args.batch,), device=device)

    print(f"strided {st.__version__}: MLP {' -> '.join(map(str, sizes))}, batch {args.batch}, device {device}")
    with count_ops() as stats:
        logits = forward(layers, x)
        loss = st.ops.aten.cross_entropy_loss(logits, target)
    print(f"input {list(x.shape)} -> logits {list(logits.shape)} {logits.dtype}; loss shape {list(loss.shape)}")
    if device != "meta":
        print(f"loss = {loss.item():.4f} (random init: about ln({sizes[-1]}) = "
              f"{__import__('math').log(sizes[-1]):.4f})")

    meta_layers = [(st.empty_like(w, device="meta"), st.empty_like(b, device="meta")) for w, b in layers]
    meta_logits = forward(meta_layers, st.empty(args.batch, sizes[0], device="meta"))
    assert meta_logits.shape == logits.shape and meta_logits.dtype is logits.dtype
    print(f"meta device: same output metadata {list(meta_logits.shape)} with no data memory")

    print("\nper-op dispatch (one forward + loss):")
    print(stats.table())

    times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        out = forward(layers, x)
        if device == "cuda":
            st.cuda.synchronize()
        else:
            out.numel()
        times.append(time.perf_counter() - t0)
    med = statistics.median(times)
    flops = 2 * args.batch * sum(a * b for a, b in zip(sizes[:-1], sizes[1:]))
    print(f"\nforward: median {med * 1e3:.3f} ms over {args.repeats} runs ({flops / med / 1e9:.2f} GFLOP/s)")
    if device == "cuda":
        print(f"cuda memory: allocated {st.cuda.memory_allocated() / 2**20:.1f} MiB, "
              f"reserved {st.cuda.memory_reserved() / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
