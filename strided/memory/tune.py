"""``strided memory tune``: replay one trace under a grid of allocator settings and rank them by peak reserved
memory -- which ``PYTORCH_CUDA_ALLOC_CONF`` would have made this run fit in the least device memory.

Note [Tuning grid]
The grid holds the settings that change how the c10 allocator packs memory, one family at a time and in the
combinations people use: ``expandable_segments`` (segments that grow in place, so freed tails are reused
instead of stranded), ``max_split_size_mb`` (large cached blocks are not split for smaller requests, so
big ones stay whole), ``roundup_power2_divisions`` (sizes rounded up to fewer distinct values, so freed
blocks fit later requests more often, at some padding), and strided's own ``strided_eager_unmap`` (pages of
an expandable segment unmapped as soon as they are free; not a PyTorch option). ``garbage_collection_threshold``
is left out: it acts only under a memory fraction. Each replay runs the same allocation sequence through
the allocator on a simulated device, so the peaks are what PyTorch's allocator would reach under each
setting (addresses move: only the default reproduces the recorded ones).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GRID", "TuneRow", "tune", "format_tune"]

STRIDED_ONLY = "strided_eager_unmap"

GRID: list[str] = [
    "",
    "expandable_segments:True",
    *(f"max_split_size_mb:{mb}" for mb in (32, 64, 128, 256, 512)),
    *(f"roundup_power2_divisions:{n}" for n in (2, 4, 8, 16)),
    "max_split_size_mb:128,roundup_power2_divisions:4",
    "max_split_size_mb:256,roundup_power2_divisions:8",
    "expandable_segments:True,roundup_power2_divisions:4",
    "expandable_segments:True,roundup_power2_divisions:8",
    "expandable_segments:True,strided_eager_unmap:True",
]


@dataclass
class TuneRow:
    config: str
    peak_reserved: int
    peak_allocated: int
    device_allocs: int
    ooms: int

    @property
    def pytorch_option(self) -> bool:
        """Whether PyTorch itself takes this setting (strided's eager unmap is its own)."""
        return STRIDED_ONLY not in self.config


def tune(events, configs: list[str] | None = None, capacity: int | None = None, progress=None) -> list[TuneRow]:
    """Replay ``events`` (:func:`~.replay.decode_trace`'s) under each config; rows best first: no OOM, then the
    lowest peak reserved, then the fewest device allocations. ``progress(done, total)`` after each replay."""
    from .replay import DEFAULT_CAPACITY, replay

    configs = GRID if configs is None else configs
    rows = []
    for i, conf in enumerate(configs):
        r = replay(events, conf, label=conf or "default", recorded_addresses=conf == "",
                   capacity=capacity or DEFAULT_CAPACITY, timeline=False)
        rows.append(TuneRow(conf, r.peak_reserved, r.peak_allocated, r.num_device_alloc, r.ooms))
        if progress is not None:
            progress(i + 1, len(configs))
    rows.sort(key=lambda row: (row.ooms > 0, row.peak_reserved, row.device_allocs, row.config))
    return rows


def format_tune(name: str, rows: list[TuneRow], top: int | None = None) -> str:
    """The ranking as a table, then the recommendation in ``PYTORCH_CUDA_ALLOC_CONF`` form."""
    from .errors import format_size

    default = next((r for r in rows if r.config == ""), None)
    w = max(len(r.config or "default") for r in rows)
    head = f"{'PYTORCH_CUDA_ALLOC_CONF':<{w}} {'peak reserved':>13} {'vs default':>10} {'reserved/alloc':>14} " \
           f"{'dev allocs':>10} {'OOMs':>5}"
    out = [f"{name}: {len(rows)} allocator settings, best first (lowest peak reserved memory)", head, "-" * len(head)]
    for r in rows[:top] if top else rows:
        delta = "" if default is None or r is default or default.ooms or r.ooms else \
            f"{(r.peak_reserved - default.peak_reserved) / max(default.peak_reserved, 1) * 100:+.1f}%"
        frag = r.peak_reserved / r.peak_allocated if r.peak_allocated else 1.0
        out.append(f"{(r.config or 'default') + ('' if r.pytorch_option else ' *'):<{w}} "
                   f"{format_size(r.peak_reserved):>13} {delta:>10} {frag:>14.4f} {r.device_allocs:>10} {r.ooms:>5}")
    if any(not r.pytorch_option for r in rows):
        out.append("* strided's own policy, not a PyTorch setting")
    best = next((r for r in rows if r.pytorch_option and not r.ooms), None)
    if best is None:
        out.append("\nEvery setting ran out of memory at this capacity.")
    elif default is not None and default.ooms:
        out.append(f"\nRecommended: PYTORCH_CUDA_ALLOC_CONF={best.config}  (peak reserved "
                   f"{format_size(best.peak_reserved)}; with PyTorch's defaults {default.ooms} allocations ran out "
                   "of memory at this capacity)")
    elif default is None or best.config == "" or best.peak_reserved >= default.peak_reserved:
        out.append("\nPyTorch's defaults are already the best of these settings for this trace.")
    else:
        saved = default.peak_reserved - best.peak_reserved
        out.append(f"\nRecommended: PYTORCH_CUDA_ALLOC_CONF={best.config}  (peak reserved "
                   f"{format_size(best.peak_reserved)}, {format_size(saved)} less than the defaults' "
                   f"{format_size(default.peak_reserved)}; {saved / default.peak_reserved * 100:.1f}%)")
    return "\n".join(out)
