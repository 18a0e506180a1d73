"""Allocation history (``_record_memory_history``) and PyTorch's snapshot dict.

Note [History off costs one check]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Recording is off by default; every hot-path call site is guarded by ``if self._recording``
and stack gathering by an integer compare, so the cost when off is one attribute test.
Entries are kept as tuples in a ring buffer of ``max_entries`` (oldest dropped, as c10's
``alloc_trace_next`` wraps) and turned into dicts only when a snapshot is taken.
"""

from __future__ import annotations

import sys
import time

from .blocks import Block

__all__ = ["HistoryMixin", "ACTION_NAMES", "gather_frames"]

ALLOC, FREE_REQUESTED, FREE_COMPLETED, SEGMENT_ALLOC, SEGMENT_FREE = 0, 1, 2, 3, 4
SEGMENT_MAP, SEGMENT_UNMAP, SNAPSHOT, OOM = 5, 6, 7, 8
ACTION_NAMES = (
    "alloc",
    "free_requested",
    "free_completed",
    "segment_alloc",
    "segment_free",
    "segment_map",
    "segment_unmap",
    "snapshot",
    "oom",
)
_CONTEXT_LEVELS = {None: 0, "state": 2, "alloc": 3, "all": 4}  # c10 RecordContext: NEVER<STATE<ALLOC<ALL
_MEMORY_DIR = __file__.rsplit("/", 1)[0]


def gather_frames() -> list[dict]:
    """The caller's Python stack as snapshot frames (innermost first), allocator frames dropped."""
    frames = []
    f = sys._getframe(1)
    while f is not None:
        code = f.f_code
        if not code.co_filename.startswith(_MEMORY_DIR):
            frames.append({"filename": code.co_filename, "line": f.f_lineno, "name": code.co_name})
        f = f.f_back
    return frames


class HistoryMixin:
    """``record_history``, ``snapshot`` and the trace ring buffer of the allocator."""

    def _init_history(self) -> None:
        self._recording = False
        self._context_level = 0  # stacks gathered at malloc if >= 2, attached to trace if >= 3
        self._trace: list[tuple] = []
        self._trace_max = 1
        self._trace_next = 0
        self._skip_actions: frozenset[int] = frozenset()

    def _gather(self, level: int) -> list[dict] | None:
        """Stack frames when the recording level asks for them at this ``level``."""
        return gather_frames() if self._context_level >= level else None

    def record_history(
        self,
        enabled: str | None = "all",
        context: str | None = "all",
        stacks: str = "python",
        max_entries: int = sys.maxsize,
        clear_history: bool = False,
        skip_actions: list[str] | None = None,
    ) -> None:
        """Start or stop recording allocator events (``torch.cuda.memory._record_memory_history``).

        Parameters
        ----------
        enabled : {"all", "state", None}
            ``"all"`` keeps a trace of events; ``"state"`` only stacks of live blocks
            (``max_entries`` forced to 1); ``None`` stops and clears the trace.
        context : {"all", "alloc", "state", None}
            Which stacks to record: at malloc (``"state"``), also on trace entries (``"alloc"``),
            also at free (``"all"``).
        stacks : {"python", "all"}
            Only Python frames exist here; ``"all"`` is accepted for compatibility.
        max_entries : int
            Ring-buffer size; the newest entries are kept.
        clear_history : bool
            Drop the entries recorded so far.
        skip_actions : list of str, optional
            Actions not to record (e.g. ``["free_requested"]``).
        """
        if enabled not in ("all", "state", None):
            raise ValueError(
                f"record_history: expected enabled to be 'state', 'all', or None, got {enabled!r}"
            )
        if context not in _CONTEXT_LEVELS:
            raise ValueError(
                f"record_history: expected context to be 'state', 'alloc', 'all', or None, got {context!r}"
            )
        if stacks not in ("python", "all"):
            raise ValueError(f"record_history: expected stacks to be 'python', or 'all', got {stacks!r}")
        if not isinstance(max_entries, int) or max_entries < 0:
            raise ValueError(f"record_history: max_entries must be a non-negative int, got {max_entries!r}")
        skip = set()
        for name in skip_actions or ():
            if name not in ACTION_NAMES:
                raise ValueError(f"record_history: unknown action {name!r} in skip_actions")
            skip.add(ACTION_NAMES.index(name))
        with self._lock:
            self._recording = enabled is not None
            self._context_level = _CONTEXT_LEVELS[context] if enabled is not None else 0
            self._trace_max = max(1, max_entries if enabled == "all" else 1)
            self._skip_actions = frozenset(skip)
            if enabled is None or clear_history:
                self._trace = []
                self._trace_next = 0
            elif len(self._trace) > self._trace_max:
                ordered = self._trace[self._trace_next :] + self._trace[: self._trace_next]
                self._trace = ordered[-self._trace_max :]
                self._trace_next = 0

    def _record(self, action: int, addr: int, size: int, stream: int, ctx: object) -> None:
        if action in self._skip_actions:
            return
        frames = ctx if self._context_level >= 3 else None
        entry = (action, addr, size, stream, time.time_ns() // 1000, frames)
        trace = self._trace
        if len(trace) < self._trace_max:
            trace.append(entry)
        else:
            trace[self._trace_next] = entry
            self._trace_next = (self._trace_next + 1) % self._trace_max

    def trace_entries(self) -> list[dict]:
        """The recorded entries, oldest first, as PyTorch's trace dicts."""
        with self._lock:
            ordered = self._trace[self._trace_next :] + self._trace[: self._trace_next]
        out = []
        for action, addr, size, stream, t_us, frames in ordered:
            e = {"action": ACTION_NAMES[action], ("device_free" if action == OOM else "addr"): addr}
            e["size"] = size
            e["stream"] = stream
            e["time_us"] = t_us
            e["compile_context"] = "N/A"
            e["user_metadata"] = ""
            if frames is not None:
                e["frames"] = frames
            out.append(e)
        return out

    def segments(self) -> list[dict]:
        """The segment list of a snapshot (``torch.cuda.memory_snapshot()``), by address."""
        with self._lock:
            return self._segments()

    def _segments(self) -> list[dict]:
        pool_ids = self._pool_ids()
        heads: list[Block] = []
        pools = [self.small_blocks, self.large_blocks]
        for pp in self._graph_pools.values():
            pools += [pp.small, pp.large]
        for block in [b for p in pools for b in p.all_blocks()] + list(self._active.values()):
            if block.prev is not None and block.prev.mapped:
                continue
            heads.append(block)
        result = []
        for head in heads:
            blocks = []
            seg = {
                "device": self.device,
                "address": head.ptr,
                "total_size": 0,
                "allocated_size": 0,
                "active_size": 0,
                "requested_size": 0,
                "stream": head.stream,
                "segment_type": "small" if head.pool.is_small else "large",
                "segment_pool_id": pool_ids.get(id(head.pool), (0, 0)),
                "is_expandable": head.segment is not None,
                "frames": head.segment_context or [],
                "blocks": blocks,
            }
            b = head
            address = head.ptr
            while b is not None and b.mapped:
                active = b.allocated or b.event_count > 0 or b.stream_uses is not None
                state = (
                    "active_allocated" if b.allocated else ("active_pending_free" if active else "inactive")
                )
                blocks.append(
                    {
                        "address": address,
                        "size": b.size,
                        "requested_size": b.requested_size,
                        "state": state,
                        "frames": b.context or [],
                    }
                )
                address += b.size
                seg["total_size"] += b.size
                if b.allocated:
                    seg["allocated_size"] += b.size
                if active:
                    seg["active_size"] += b.size
                    seg["requested_size"] += b.requested_size
                b = b.next
            result.append(seg)
        result.sort(key=lambda s: s["address"])
        return result

    def snapshot(self) -> dict:
        """PyTorch's snapshot dict (``torch.cuda.memory._snapshot()``).

        Returns
        -------
        dict
            ``{"segments", "device_traces", "allocator_settings", "external_annotations"}``;
            taking it appends a ``snapshot`` entry to the trace, as in c10.
        """
        with self._lock:
            segs = self._segments()
            if self._recording:
                self._record(SNAPSHOT, 0, sum(s["active_size"] for s in segs), 0, None)
            traces = self.trace_entries()
            settings = self.config.settings_dict()
        device_traces = [[] for _ in range(self.device)] + [traces]
        return {
            "segments": segs,
            "device_traces": device_traces,
            "allocator_settings": settings,
            "external_annotations": [],
        }
