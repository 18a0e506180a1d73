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
    fits_in: int | None = None  # the least device memory the run needs under this setting (``fit=True``)

    @property
    def pytorch_option(self) -> bool:
        """Whether PyTorch itself takes this setting (strided's eager unmap is its own)."""
        return STRIDED_ONLY not in self.config


FIT_STEP = 32 << 20  # the answer of ``fits_in`` is within this of the least capacity that fits


# Note [Least capacity]
# Peak reserved memory is what a run reserves when memory is plentiful; on a smaller device the allocator
# frees its cached blocks when a request does not fit and retries (c10's OOM fallbacks), so a run may fit
# in less. ``fits_in`` finds the least capacity with no out-of-memory error by bisection between the peak
# allocated bytes (nothing fits below) and the peak reserved (the unconstrained run never asked for more,
# so it fits), replaying up to the first failure each time, to within FIT_STEP. Bisection takes more memory
# never to turn a run that fits into one that does not; the allocator's choices do not depend on the
# capacity until a request fails, so this holds but for ties in what the fallbacks free.
def fits_in(events, config: str, peak_allocated: int, peak_reserved: int) -> int:
    """The least simulated capacity (to within FIT_STEP, on 2 MiB pages) under which ``events`` replays under
    ``config`` without running out of memory (Note [Least capacity])."""
    from .replay import replay

    page = 2 << 20
    lo = max(peak_allocated // page * page - page, 0)  # does not fit (with the fallbacks, at best just)
    hi = -(-peak_reserved // page) * page  # fits
    while hi - lo > FIT_STEP:
        mid = (lo + hi) // 2 // page * page
        if replay(events, config, recorded_addresses=False, capacity=mid, timeline=False, stop_on_oom=True).ooms:
            lo = mid
        else:
            hi = mid
    return hi


def tune(events, configs: list[str] | None = None, capacity: int | None = None, progress=None,
         fit: bool = False) -> list[TuneRow]:
    """Replay ``events`` (:func:`~.replay.decode_trace`'s) under each config; rows best first: no OOM, then the
    lowest peak reserved (with ``fit``: the least capacity each fits in, Note [Least capacity]), then the fewest
    device allocations. ``progress(done, total)`` after each config."""
    from .replay import DEFAULT_CAPACITY, replay

    configs = GRID if configs is None else configs
    rows = []
    for i, conf in enumerate(configs):
        r = replay(events, conf, label=conf or "default", recorded_addresses=conf == "",
                   capacity=capacity or DEFAULT_CAPACITY, timeline=False)
        row = TuneRow(conf, r.peak_reserved, r.peak_allocated, r.num_device_alloc, r.ooms)
        if fit and not r.ooms:
            row.fits_in = fits_in(events, conf, r.peak_allocated, r.peak_reserved)
        rows.append(row)
        if progress is not None:
            progress(i + 1, len(configs))
    rows.sort(key=lambda row: (row.ooms > 0, row.fits_in if fit and row.fits_in is not None else row.peak_reserved,
                               row.device_allocs, row.config))
    return rows


def format_tune(name: str, rows: list[TuneRow], top: int | None = None) -> str:
    """The ranking as a table, then the recommendation in ``PYTORCH_CUDA_ALLOC_CONF`` form."""
    from .errors import format_size

    default = next((r for r in rows if r.config == ""), None)
    fit = any(r.fits_in is not None for r in rows)
    w = max(len(r.config or "default") for r in rows)
    head = f"{'PYTORCH_CUDA_ALLOC_CONF':<{w}} {'peak reserved':>13} {'vs default':>10} {'reserved/alloc':>14} " \
           f"{'dev allocs':>10} {'OOMs':>5}" + (f" {'fits in':>10}" if fit else "")
    order = "least memory each runs in" if fit else "lowest peak reserved memory"
    out = [f"{name}: {len(rows)} allocator settings, best first ({order})", head, "-" * len(head)]
    for r in rows[:top] if top else rows:
        delta = "" if default is None or r is default or default.ooms or r.ooms else \
            f"{(r.peak_reserved - default.peak_reserved) / max(default.peak_reserved, 1) * 100:+.1f}%"
        frag = r.peak_reserved / r.peak_allocated if r.peak_allocated else 1.0
        out.append(f"{(r.config or 'default') + ('' if r.pytorch_option else ' *'):<{w}} "
                   f"{format_size(r.peak_reserved):>13} {delta:>10} {frag:>14.4f} {r.device_allocs:>10} {r.ooms:>5}"
                   + (f" {format_size(r.fits_in) if r.fits_in is not None else '-':>10}" if fit else ""))
    if any(not r.pytorch_option for r in rows):
        out.append("* strided's own policy, not a PyTorch setting")
    best = next((r for r in rows if r.pytorch_option and not r.ooms), None)
    if best is None:
        out.append("\nEvery setting ran out of memory at this capacity.")
    elif default is not None and default.ooms:
        out.append(f"\nRecommended: PYTORCH_CUDA_ALLOC_CONF={best.config}  (peak reserved "
                   f"{format_size(best.peak_reserved)}; with PyTorch's defaults {default.ooms} allocations ran out "
                   "of memory at this capacity)")
    elif default is None or best.config == "" or best.peak_reserved >= default.peak_reserved and not fit:
        out.append("\nPyTorch's defaults are already the best of these settings for this trace.")
    elif fit and default.fits_in is not None and best.fits_in is not None:
        out.append(f"\nRecommended: PYTORCH_CUDA_ALLOC_CONF={best.config}  (runs in {format_size(best.fits_in)}; "
                   f"the defaults need {format_size(default.fits_in)})")
    else:
        saved = default.peak_reserved - best.peak_reserved
        out.append(f"\nRecommended: PYTORCH_CUDA_ALLOC_CONF={best.config}  (peak reserved "
                   f"{format_size(best.peak_reserved)}, {format_size(saved)} less than the defaults' "
                   f"{format_size(default.peak_reserved)}; {saved / default.peak_reserved * 100:.1f}%)")
    if fit:
        out.append(f"'fits in': the least device memory each setting ran the trace in without running out, to "
                   f"within {format_size(FIT_STEP)} (Note [Least capacity] in strided/memory/tune.py).")
    return "\n".join(out)
