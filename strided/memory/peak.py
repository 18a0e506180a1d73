"""What was live at the peak: the allocations that made a trace's ``peak allocated``, by source line.

Note [Peak breakdown]
~~~~~~~~~~~~~~~~~~~~~
An out-of-memory hunt starts from the question "what held the memory at the worst moment?".
The moment is the allocation after which ``allocated_bytes`` was highest. It depends on the
allocator only through block sizes (rounding and unsplit remainders), so the trace is replayed
once under the chosen settings, keeping the block size each allocation got; walking the trace up
to the peak then gives the live blocks, which add up exactly to the replay's ``peak allocated``
(PyTorch's ``max_memory_allocated`` for an exact replay). Each live allocation is attributed to a source line
taken from the stack the trace recorded with it (``_record_memory_history(stacks="python")``): the
innermost Python frame outside torch and strided (C++ frames skipped), i.e. the user's line that
asked for the tensor. A trace recorded without stacks is grouped by allocation size instead.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from .errors import format_size
from .replay import _ALLOC, _FREE, _FREE_DEFERRED, DEFAULT_CAPACITY, TraceEvents, decode_trace, replay

__all__ = ["LiveAllocation", "PeakReport", "peak_breakdown", "group_live", "site_of", "format_peak"]

# frames from these paths are the framework's, not the line that asked for the memory: this strided
# package, an installed strided or torch, Python internals ("derivatives.yaml:<line>" names strided's
# compiled derivative formulas). A checkout merely *named* strided does not count (its scripts are
# the user's).
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_LIBRARY_MARKERS = (_PACKAGE_DIR, "/torch/", "\\torch\\", "/site-packages/strided/", "\\site-packages\\strided\\",
                    "<frozen ", "<built-in>", "derivatives.yaml:")


@dataclass
class LiveAllocation:
    """One allocation live at the peak."""

    addr: int
    requested: int  # bytes the program asked for (the trace's size)
    block_size: int  # bytes the allocator's block holds (counted by allocated_bytes)
    stream: int
    frames: list[dict] = field(default_factory=list, repr=False)


@dataclass
class PeakGroup:
    """Live allocations sharing a source line (or a size, for traces without stacks)."""

    key: str
    count: int
    bytes: int
    sizes: list[int]


@dataclass
class PeakReport:
    """The live set at a trace's peak of allocated memory."""

    device: int
    config: str
    peak_allocated: int
    entry: int  # index in the device trace of the alloc that reached the peak
    entries: int
    seconds_in: float | None  # time from the trace's first entry to the peak (None: no timestamps)
    live: list[LiveAllocation]
    has_frames: bool
    skipped_frees: int = 0  # frees of addresses the trace never allocated (made before recording began)
    untraced_bytes: int = 0  # allocated at the snapshot with no alloc in the trace (made before recording)
    ooms: int = 0  # allocations that did not fit the simulated capacity

    def groups(self) -> list[PeakGroup]:
        """Live allocations grouped by source line (by size without stacks), largest first."""
        return group_live(self.live)


def group_live(live: list[LiveAllocation]) -> list[PeakGroup]:
    """``live`` grouped by source line when any has a stack, else by requested size; largest first."""
    by_line = any(a.frames for a in live)
    by: dict[str, PeakGroup] = {}
    for a in live:
        key = site_of(a.frames) if by_line else f"size {format_size(a.requested)}"
        g = by.get(key)
        if g is None:
            g = by[key] = PeakGroup(key, 0, 0, [])
        g.count += 1
        g.bytes += a.block_size
        g.sizes.append(a.requested)
    return sorted(by.values(), key=lambda g: (-g.bytes, g.key))


# native frames (PyTorch's stacks="all" records C++ frames, innermost first) are never the user's line
_NATIVE_SUFFIXES = (".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".cu", ".cuh", ".so")


def site_of(frames: list[dict]) -> str:
    """``file:line in function`` of the innermost Python frame outside torch/strided (else the innermost)."""
    if not frames:
        return "(no stack)"
    pick = frames[0]
    for f in frames:
        name = str(f.get("filename", ""))
        if (name not in ("", "??") and not name.endswith(_NATIVE_SUFFIXES) and ".so." not in name
                and not any(m in name for m in _LIBRARY_MARKERS)):
            pick = f
            break
    return f"{pick.get('filename', '?')}:{pick.get('line', '?')} in {pick.get('name', '?')}"


def peak_breakdown(
    snapshot: dict,
    config: str = "",
    *,
    device: int | None = None,
    capacity: int = DEFAULT_CAPACITY,
    progress: Callable[[int], None] | None = None,
    events: TraceEvents | None = None,
) -> PeakReport:
    """The allocations live when a trace's allocated memory peaked (Note [Peak breakdown]).

    Parameters
    ----------
    snapshot : dict
        A snapshot with ``device_traces`` (PyTorch's or strided's).
    config : str
        Allocator settings to replay under (``""`` = PyTorch's defaults).
    device : int, optional
        Which device's trace; by default the one with the most entries.
    capacity : int
        Simulated device memory in bytes.
    progress : callable, optional
        Called with the number of trace operations replayed.
    events : TraceEvents, optional
        ``snapshot``'s trace already decoded (``decode_trace``); ``device`` is then ignored.
    """
    if events is None:
        events = decode_trace(snapshot, device, op="peak")
    result = replay(events, config, capacity=capacity, timeline=False, progress=progress, block_sizes=True)
    k = result.peak_allocated_op
    trace = snapshot["device_traces"][events.device]
    if k < 0:
        return PeakReport(events.device, result.config, 0, -1, events.num_entries, None, [], False,
                          ooms=result.ooms)
    # live at the peak: allocated up to it (with a block) and not freed since, as replay's own map
    sizes = result.block_sizes
    live_at: dict[int, tuple[int, int]] = {}  # address -> (trace entry, block size)
    for i, ((op, addr, _size, _stream), e) in enumerate(zip(events.ops[: k + 1], events.entry_index)):
        if op == _ALLOC:
            if sizes[i]:
                live_at[addr] = (e, sizes[i])
        elif op in (_FREE, _FREE_DEFERRED):
            live_at.pop(addr, None)
    live = []
    for addr, (e, block_size) in live_at.items():
        entry = trace[e]
        live.append(LiveAllocation(addr, entry["size"], block_size, entry.get("stream", 0), entry.get("frames") or []))
    entry = events.entry_index[k]
    t0, tp = trace[0].get("time_us"), trace[entry].get("time_us")
    seconds_in = (tp - t0) / 1e6 if isinstance(t0, (int, float)) and isinstance(tp, (int, float)) else None
    return PeakReport(
        device=events.device,
        config=result.config,
        peak_allocated=result.peak_allocated,
        entry=entry,
        entries=events.num_entries,
        seconds_in=seconds_in,
        live=live,
        has_frames=any(a.frames for a in live),
        skipped_frees=result.skipped_frees,
        untraced_bytes=_untraced_bytes(snapshot, events),
        ooms=result.ooms,
    )


def _untraced_bytes(snapshot: dict, events) -> int:
    """Bytes of the snapshot's allocated blocks on the trace's device that no traced alloc made."""
    traced = {addr for op, addr, _size, _stream in events.ops if op == _ALLOC}
    return sum(b["size"] for seg in snapshot.get("segments") or [] if seg.get("device", events.device) == events.device
               for b in seg.get("blocks", []) if b.get("state") == "active_allocated" and b["address"] not in traced)


def format_peak(report: PeakReport, name: str = "trace", top: int = 15) -> str:
    """The table printed by ``strided memory peak``; ``top`` (>= 1) groups are listed."""
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise ValueError(f"format_peak: top must be an int of at least 1, got {top!r}")
    when = f", {report.seconds_in:.3f} s in" if report.seconds_in is not None else ""
    out = [
        f"{name}: device {report.device}, settings {report.config or 'default'!r}",
        f"peak allocated {format_size(report.peak_allocated)} ({report.peak_allocated:,} bytes) at trace entry "
        f"{report.entry} of {report.entries}{when}: {len(report.live)} live allocations",
    ]
    if report.skipped_frees or report.untraced_bytes:
        out.append(f"(memory allocated before recording began is not in this breakdown: "
                   f"{format_size(report.untraced_bytes)} of it still allocated at the snapshot, "
                   f"{report.skipped_frees} frees of it during the trace)")
    if report.ooms:
        out.append(f"({report.ooms} allocations did not fit the simulated device and are not counted; "
                   "raise --capacity-gb)")
    if not report.live:
        return "\n".join(out)
    if not report.has_frames:
        out.append("(no stacks in this trace: grouped by size; record with "
                   "_record_memory_history(stacks='python') to see source lines)")
    groups = report.groups()
    head = f"{'bytes':>12} {'share':>6} {'count':>6}  {'sizes':<22} {'source line' if report.has_frames else 'group'}"
    out += [head, "-" * len(head)]
    for g in groups[:top]:
        lo, hi = min(g.sizes), max(g.sizes)
        sizes = format_size(lo) if lo == hi else f"{format_size(lo)}..{format_size(hi)}"
        share = g.bytes / report.peak_allocated
        out.append(f"{format_size(g.bytes):>12} {share:>6.1%} {g.count:>6}  {sizes:<22} {g.key}")
    rest = groups[top:]
    if rest:
        b = sum(g.bytes for g in rest)
        out.append(f"{format_size(b):>12} {b / report.peak_allocated:>6.1%} {sum(g.count for g in rest):>6}  "
                   f"{'':<22} ({len(rest)} more groups)")
    return "\n".join(out)
