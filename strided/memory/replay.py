"""Replay a recorded allocation trace through the allocator under any config.

A PyTorch (or strided) snapshot with ``device_traces`` holds, per device, the ``alloc`` /
``free_requested`` / ``free_completed`` sequence the program made.  Replaying it through
:class:`~.caching.CachingAllocator` on a :class:`~.simulate.SimulatedDevice` shows what a
different policy would have reserved, without the GPU or the program.

Note [Replay semantics]
~~~~~~~~~~~~~~~~~~~~~~~
* ``alloc`` -> ``malloc(size, stream)``; the recorded address maps to our Block.
* ``free_requested`` immediately followed by its ``free_completed`` -> ``free``.  When the
  completion comes later (the program used ``record_stream``), the block is marked used on a
  private stream, freed, and that stream's events complete at the recorded ``free_completed``:
  the memory returns to the pool at the same point as in the recording.
* A free of an address the trace never allocated (a ring buffer cut off its ``alloc``) is
  skipped and counted; segment, snapshot and oom entries are the allocator's own business.
* With ``recorded_addresses`` the device hands out the recorded ``segment_alloc`` addresses in
  order, so under PyTorch's default policy every block lands where it did in the recording.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .caching import CachingAllocator
from .config import AllocatorConfig
from .errors import OutOfMemoryError
from .simulate import GIB, SimulatedDevice
from .stats import ALLOCATED_BYTES, RESERVED_BYTES, SEGMENT

__all__ = ["TraceEvents", "ReplayResult", "decode_trace", "replay", "DEFAULT_CAPACITY"]

DEFAULT_CAPACITY = 141 * GIB  # an H200's class of device, so that recorded runs fit
_ALLOC, _FREE, _FREE_DEFERRED, _FREE_DONE = 0, 1, 2, 3
_PSEUDO_STREAM_BASE = 1 << 62


@dataclass
class TraceEvents:
    """A decoded device trace: compact ``(op, addr, size, stream)`` tuples."""

    ops: list[tuple[int, int, int, int]]
    segments: list[tuple[int, int]]  # recorded (addr, size) of segment_alloc, in order
    num_entries: int  # all trace entries, including the ones replay does not act on
    device: int = 0
    entry_index: list[int] = field(default_factory=list, repr=False)  # trace index of each op


@dataclass
class ReplayResult:
    """What one replay measured."""

    label: str
    config: str
    peak_allocated: int
    peak_reserved: int
    num_device_alloc: int
    num_device_free: int
    device_mallocs: int
    page_maps: int
    peak_segments: int
    ooms: int
    address_mismatches: int
    skipped_frees: int
    entries: int
    ops: int
    seconds: float
    exact_addresses: bool
    peak_allocated_op: int = -1  # index in TraceEvents.ops of the alloc that reached peak_allocated
    allocated_timeline: list[int] = field(default_factory=list, repr=False)
    reserved_timeline: list[int] = field(default_factory=list, repr=False)
    block_sizes: list[int] | None = field(default=None, repr=False)  # see replay(block_sizes=)

    @property
    def fragmentation(self) -> float:
        """Peak reserved / peak allocated (1.0 = no waste)."""
        return self.peak_reserved / self.peak_allocated if self.peak_allocated else 1.0

    def as_dict(self) -> dict:
        """Numbers only (no timelines), for ``--json``."""
        d = {k: v for k, v in self.__dict__.items() if not k.endswith("_timeline") and k != "block_sizes"}
        d["fragmentation"] = self.fragmentation
        return d


def decode_trace(snapshot: dict, device: int | None = None, op: str = "replay") -> TraceEvents:
    """Pick a device's trace from a snapshot dict and decode it for :func:`replay`.

    Parameters
    ----------
    snapshot : dict
        A snapshot (``device_traces`` required).
    device : int, optional
        Which device's trace; by default the one with the most entries.
    op : str
        The command named in errors (``replay``, ``peak``).
    """
    traces = snapshot.get("device_traces") if isinstance(snapshot, dict) else None
    if not isinstance(traces, list) or not traces:
        raise ValueError(f"{op}: the snapshot has no device_traces (record with _record_memory_history)")
    if device is None:
        device = max(range(len(traces)), key=lambda d: len(traces[d] or []))
    if not 0 <= device < len(traces):
        raise ValueError(f"{op}: no trace for device {device}; the snapshot has {len(traces)}")
    trace = traces[device] or []
    if not isinstance(trace, list):
        raise ValueError(f"{op}: device {device}'s trace is a {type(trace).__name__}, not a list of entries")
    try:
        return _decode_entries(trace, device)
    except (KeyError, TypeError, AttributeError) as e:
        k = _decode_failed_at(trace)
        raise ValueError(f"{op}: entry {k} of device {device}'s trace is malformed "
                         f"({type(e).__name__}: {e}): {trace[k]!r:.200}") from None


def _decode_failed_at(trace: list) -> int:
    """The first entry of ``trace`` that is not a dict with an action, an address and a size."""
    for k, e in enumerate(trace):
        if not isinstance(e, dict) or not isinstance(e.get("action"), str) or (
                e["action"] in ("alloc", "free_requested", "free_completed", "segment_alloc")
                and not (isinstance(e.get("addr"), int) and isinstance(e.get("size"), int))):
            return k
    return 0


def _decode_entries(trace: list, device: int) -> TraceEvents:
    ops: list[tuple[int, int, int, int]] = []
    index: list[int] = []
    segments: list[tuple[int, int]] = []
    n = len(trace)
    for k, e in enumerate(trace):
        action = e["action"]
        if action == "alloc":
            ops.append((_ALLOC, e["addr"], e["size"], e.get("stream", 0)))
            index.append(k)
        elif action == "free_requested":
            nxt = trace[k + 1] if k + 1 < n else None
            immediate = nxt is not None and nxt["action"] == "free_completed" and nxt["addr"] == e["addr"]
            ops.append((_FREE if immediate else _FREE_DEFERRED, e["addr"], e["size"], e.get("stream", 0)))
            index.append(k)
        elif action == "free_completed":
            prev = trace[k - 1] if k else None
            if not (prev is not None and prev["action"] == "free_requested" and prev["addr"] == e["addr"]):
                ops.append((_FREE_DONE, e["addr"], e["size"], e.get("stream", 0)))
                index.append(k)
        elif action == "segment_alloc":
            segments.append((e["addr"], e["size"]))
    return TraceEvents(ops, segments, n, device, index)


def replay(
    events: TraceEvents | dict,
    config: str | AllocatorConfig = "",
    *,
    label: str | None = None,
    recorded_addresses: bool = True,
    capacity: int = DEFAULT_CAPACITY,
    timeline: bool = True,
    progress: Callable[[int], None] | None = None,
    block_sizes: bool = False,
    stop_on_oom: bool = False,
) -> ReplayResult:
    """Replay a trace through a fresh allocator on a simulated device.

    Parameters
    ----------
    events : TraceEvents or dict
        A decoded trace, or a snapshot dict (decoded here).
    config : str or AllocatorConfig
        Allocator settings for this run (``""`` = PyTorch's defaults).
    label : str, optional
        Name shown in reports; defaults to the settings string or ``"default"``.
    recorded_addresses : bool
        Hand out the recorded segment addresses in order (see Note [Replay semantics]).
    capacity : int
        Simulated device memory in bytes.
    timeline : bool
        Keep allocated/reserved after every operation.
    progress : callable, optional
        Called with the number of operations done, every 4096 operations.
    block_sizes : bool
        Keep the size of the block each ``alloc`` got, per operation (0 for the others and for
        failed allocations), as ``result.block_sizes`` (what ``strided memory peak`` reads).
    stop_on_oom : bool
        End the replay at the first allocation that does not fit (``ooms`` is then 1): enough to
        know a capacity is too small, without replaying the rest (``strided memory tune --fit``).

    Returns
    -------
    ReplayResult
    """
    if isinstance(events, dict):
        events = decode_trace(events)
    cfg = config if isinstance(config, AllocatorConfig) else AllocatorConfig(config or None)
    settings = cfg.last_allocator_settings
    device = SimulatedDevice(
        capacity=capacity,
        device_index=events.device,
        auto_complete=True,
        recorded=events.segments if recorded_addresses else None,
    )
    alloc = CachingAllocator(device, cfg)
    malloc = alloc.malloc
    free = alloc.free
    cur = alloc.stats.cur
    blocks: dict[int, object] = {}
    pending: dict[int, int] = {}
    a_tl: list[int] = []
    r_tl: list[int] = []
    a_app = a_tl.append
    r_app = r_tl.append
    ooms = mismatches = skipped = 0
    peak = 0
    peak_op = -1
    sizes = [0] * len(events.ops) if block_sizes else None
    next_pseudo = _PSEUDO_STREAM_BASE
    start = time.perf_counter()
    for k, (op, addr, size, stream) in enumerate(events.ops):
        if op == _ALLOC:
            try:
                block = malloc(size, stream)
            except OutOfMemoryError:
                ooms += 1
                if stop_on_oom:
                    break
                continue
            if block is None:
                continue
            if block.ptr != addr:
                mismatches += 1
            blocks[addr] = block
            if sizes is not None:
                sizes[k] = block.size
            if cur[ALLOCATED_BYTES] > peak:
                peak = cur[ALLOCATED_BYTES]
                peak_op = k
        elif op == _FREE:
            block = blocks.pop(addr, None)
            if block is None:
                skipped += 1
                continue
            free(block)
        elif op == _FREE_DEFERRED:
            block = blocks.pop(addr, None)
            if block is None:
                skipped += 1
                continue
            next_pseudo += 1
            device.hold_stream(next_pseudo)
            alloc.record_stream(block, next_pseudo)
            pending[addr] = next_pseudo
            free(block)
        else:
            s = pending.pop(addr, None)
            if s is not None:
                device.complete_stream(s)
            continue
        if timeline:
            a_app(cur[ALLOCATED_BYTES])
            r_app(cur[RESERVED_BYTES])
        if progress is not None and not k & 4095:
            progress(k)
    seconds = time.perf_counter() - start
    if progress is not None:
        progress(len(events.ops))
    st = alloc.stats
    return ReplayResult(
        label=label or settings or "default",
        config=settings,
        peak_allocated=st.peak[ALLOCATED_BYTES],
        peak_reserved=st.peak[RESERVED_BYTES],
        num_device_alloc=st.num_device_alloc,
        num_device_free=st.num_device_free,
        device_mallocs=device.num_malloc,
        page_maps=device.num_map,
        peak_segments=st.peak[SEGMENT],
        ooms=ooms,
        address_mismatches=mismatches,
        skipped_frees=skipped,
        entries=events.num_entries,
        ops=len(events.ops),
        seconds=seconds,
        exact_addresses=recorded_addresses and mismatches == 0 and ooms == 0,
        peak_allocated_op=peak_op,
        allocated_timeline=a_tl,
        reserved_timeline=r_tl,
        block_sizes=sizes,
    )
