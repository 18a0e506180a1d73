"""Allocator statistics: flat integer lists on the hot path, PyTorch's dict on demand.

Note [Stat layout]
~~~~~~~~~~~~~~~~~~
c10 keeps ``Stat{current, peak, allocated, freed}`` for nine quantities, each for three pool
types (``all``, ``small_pool``, ``large_pool``).  Here they are four flat lists indexed by
``STAT * 3 + type`` (``STAT`` one of the constants below), updated inline by the allocator,
and expanded into ``memory_stats()``'s flattened, sorted dict only when asked.

``active``/``active_bytes`` are derived, not stored: a block becomes active exactly when it
is allocated, and stops being active when it is freed, unless events recorded on other
streams hold it ("pending").  So with ``pending`` = blocks freed but waiting on events:
``active.current = allocation.current + pending``; ``active.allocated = allocation.allocated``;
``active.freed = allocation.freed - pending + pending_at_last_reset``; and the active peak only
needs its own tracking while something is pending (otherwise it equals the allocation peak).
``allocated`` (the running total of increases) is derived too: since the last reset,
``current = current_at_reset + allocated - freed``.  And ``freed`` of the ``all`` type is never
written: every decrease is of one pool type, so it is the sum of the ``small_pool`` and
``large_pool`` values (``all``'s current and peak are stored: the peak needs the current at every
increase).  Together that saves more than thirty list updates per malloc+free on the path every
tensor pays for.
"""

from __future__ import annotations

from collections import OrderedDict

__all__ = ["DeviceStats", "STAT_NAMES", "TYPE_NAMES", "format_summary"]

STAT_NAMES = (
    "allocation",
    "segment",
    "active",
    "inactive_split",
    "allocated_bytes",
    "reserved_bytes",
    "active_bytes",
    "inactive_split_bytes",
    "requested_bytes",
)
TYPE_NAMES = ("all", "small_pool", "large_pool")

ALLOCATION = 0
SEGMENT = 3
ACTIVE = 6
INACTIVE_SPLIT = 9
ALLOCATED_BYTES = 12
RESERVED_BYTES = 15
ACTIVE_BYTES = 18
INACTIVE_SPLIT_BYTES = 21
REQUESTED_BYTES = 24
OVERSIZE_ALLOCATIONS = 27
OVERSIZE_SEGMENTS = 28
_N = 29


class DeviceStats:
    """Counters of one device allocator (c10 ``DeviceStats``)."""

    __slots__ = (
        "cur",
        "peak",
        "base",
        "fre",
        "pend",
        "pend_base",
        "active_peak",
        "num_alloc_retries",
        "num_ooms",
        "num_sync_all_streams",
        "num_device_alloc",
        "num_device_free",
        "num_oom_rejections",
        "max_split_size",
    )

    def __init__(self) -> None:
        self.cur = [0] * _N
        self.peak = [0] * _N
        self.base = [0] * _N  # current at the last reset_accumulated (allocated is derived)
        self.fre = [0] * _N
        self.pend = [0] * 6  # pending-free blocks: counts [0:3], bytes [3:6], per pool type
        self.pend_base = [0] * 6
        self.active_peak = [0] * 6
        self.num_alloc_retries = 0
        self.num_ooms = 0
        self.num_sync_all_streams = 0
        self.num_device_alloc = 0
        self.num_device_free = 0
        self.num_oom_rejections = 0
        self.max_split_size = -1

    # -- generic updates (off the hot path) --------------------------------------------------
    def increase(self, i: int, n: int) -> None:
        v = self.cur[i] + n
        self.cur[i] = v
        if v > self.peak[i]:
            self.peak[i] = v

    def decrease(self, i: int, n: int) -> None:
        """Decrease a stat without pool types (``oversize_*``); typed stats use :meth:`decrease2`."""
        self.cur[i] -= n
        self.fre[i] += n

    def increase2(self, stat: int, t: int, n: int) -> None:
        """Increase ``stat`` for pool type ``t`` and for ``all``."""
        self.increase(stat, n)
        self.increase(stat + t, n)

    def decrease2(self, stat: int, t: int, n: int) -> None:
        """Decrease ``stat`` for pool type ``t`` and for ``all`` (whose ``freed`` is derived)."""
        cur = self.cur
        cur[stat] -= n
        cur[stat + t] -= n
        self.fre[stat + t] += n

    def freed(self, i: int) -> int:
        """The ``freed`` total of flat index ``i`` (``all``'s is the sum of the two pool types')."""
        if i < OVERSIZE_ALLOCATIONS and i % 3 == 0:
            return self.fre[i + 1] + self.fre[i + 2]
        return self.fre[i]

    def add_pending(self, t: int, size: int, sign: int) -> None:
        """A freed block starts (``sign=1``) or stops (``-1``) waiting on stream events."""
        p = self.pend
        p[0] += sign
        p[t] += sign
        p[3] += sign * size
        p[3 + t] += sign * size

    def note_active_peak(self, t: int) -> None:
        """Called at malloc while blocks are pending: the active peak may exceed allocation's."""
        cur, p, ap = self.cur, self.pend, self.active_peak
        for j in (0, t):
            v = cur[ALLOCATION + j] + p[j]
            if v > ap[j]:
                ap[j] = v
            v = cur[ALLOCATED_BYTES + j] + p[3 + j]
            if v > ap[3 + j]:
                ap[3 + j] = v

    # -- derived values --------------------------------------------------------------------
    def stat(self, i: int) -> tuple[int, int, int, int]:
        """``(current, peak, allocated, freed)`` of flat index ``i``."""
        stat, t = divmod(i, 3)
        if i < OVERSIZE_ALLOCATIONS and stat * 3 in (ACTIVE, ACTIVE_BYTES):
            base = ALLOCATION if stat * 3 == ACTIVE else ALLOCATED_BYTES
            off = 0 if stat * 3 == ACTIVE else 3
            j = base + t
            pending = self.pend[off + t]
            fre = self.freed(j)
            return (
                self.cur[j] + pending,
                max(self.peak[j], self.active_peak[off + t]),
                self.cur[j] - self.base[j] + fre,
                fre - pending + self.pend_base[off + t],
            )
        fre = self.freed(i)
        return self.cur[i], self.peak[i], self.cur[i] - self.base[i] + fre, fre

    def current(self, i: int) -> int:
        return self.stat(i)[0]

    def as_nested(self) -> dict:
        """c10's nested stats dict (``torch._C._cuda_memoryStats``)."""
        out: dict = {}
        for s, name in enumerate(STAT_NAMES):
            out[name] = {}
            for t, tname in enumerate(TYPE_NAMES):
                c, p, a, f = self.stat(s * 3 + t)
                out[name][tname] = {"current": c, "peak": p, "allocated": a, "freed": f}
        for name, i in (
            ("oversize_allocations", OVERSIZE_ALLOCATIONS),
            ("oversize_segments", OVERSIZE_SEGMENTS),
        ):
            c, p, a, f = self.stat(i)
            out[name] = {"current": c, "peak": p, "allocated": a, "freed": f}
        out["num_alloc_retries"] = self.num_alloc_retries
        out["num_ooms"] = self.num_ooms
        out["num_sync_all_streams"] = self.num_sync_all_streams
        out["num_device_alloc"] = self.num_device_alloc
        out["num_device_free"] = self.num_device_free
        out["num_oom_rejections"] = self.num_oom_rejections
        out["max_split_size"] = self.max_split_size
        return out

    def as_flat(self) -> OrderedDict:
        """``torch.cuda.memory_stats()``: keys joined with ``.``, sorted."""
        result: list[tuple[str, object]] = []

        def walk(prefix: str, obj: object) -> None:
            if isinstance(obj, dict):
                for k, v in obj.items():
                    key = "_".join(str(x) for x in k) if isinstance(k, tuple) else str(k)
                    walk(f"{prefix}.{key}" if prefix else key, v)
            else:
                result.append((prefix, obj))

        walk("", self.as_nested())
        result.sort()
        return OrderedDict(result)

    # -- resets ----------------------------------------------------------------------------
    def reset_peak(self) -> None:
        """c10 ``resetPeakStats``: every peak becomes the current value."""
        self.peak[:] = self.cur
        for t in range(3):
            self.active_peak[t] = self.cur[ALLOCATION + t] + self.pend[t]
            self.active_peak[3 + t] = self.cur[ALLOCATED_BYTES + t] + self.pend[3 + t]

    def reset_accumulated(self) -> None:
        """c10 ``resetAccumulatedStats``: allocated/freed totals and event counters to zero."""
        self.base[:] = self.cur
        self.fre[:] = [0] * _N
        self.pend_base[:] = self.pend
        self.num_alloc_retries = 0
        self.num_ooms = 0
        self.num_sync_all_streams = 0
        self.num_device_alloc = 0
        self.num_device_free = 0


def _fmt_size(sz: int, pref: float) -> str:
    prefix = "B  "
    for p in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        if pref < 768 * 1024:
            break
        prefix = p
        sz //= 1024
        pref /= 1024
    return f"{sz:6d} {prefix}"


def _fmt_count(cnt: int, pref: float) -> str:
    prefix = " "
    for p in ("K", "M"):
        if pref < 750 * 1000:
            break
        prefix = p
        cnt //= 1000
        pref /= 1000
    return f"{cnt:7d} {prefix} "


def format_summary(stats: dict, device: int = 0, abbreviated: bool = False) -> str:
    """The ``torch.cuda.memory_summary()`` table for a flat ``memory_stats()`` dict."""
    rows = [
        ("allocated_bytes", "Allocated memory", _fmt_size),
        ("active_bytes", "Active memory", _fmt_size),
        ("requested_bytes", "Requested memory", _fmt_size),
        ("reserved_bytes", "GPU reserved memory", _fmt_size),
        ("inactive_split_bytes", "Non-releasable memory", _fmt_size),
        ("allocation", "Allocations", _fmt_count),
        ("active", "Active allocs", _fmt_count),
        ("segment", "GPU reserved segments", _fmt_count),
        ("inactive_split", "Non-releasable allocs", _fmt_count),
    ]
    lines = [
        "=" * 75,
        f" {'':16} PyTorch CUDA memory summary, device ID {device:<17d} ",
        "-" * 75,
        f"  {'':9} CUDA OOMs: {stats.get('num_ooms', 0):<12d} | {'':6} cudaMalloc retries: "
        f"{stats.get('num_alloc_retries', 0):<8d}  ",
        "=" * 75,
        "        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  ",
    ]
    fields = ("current", "peak", "allocated", "freed")
    for key, name, fmt in rows:
        lines.append("-" * 75)
        subs = [("all", name)]
        if not abbreviated:
            subs += [("large_pool", "      from large pool"), ("small_pool", "      from small pool")]
        pref = None
        for sub, label in subs:
            vals = [stats.get(f"{key}.{sub}.{f}", 0) for f in fields]
            if pref is None:
                pref = vals
            cells = " | ".join(fmt(v, p) for v, p in zip(vals, pref))
            lines.append(f" {label:<21} | {cells} ")
    for key, name in (
        ("oversize_allocations", "Oversize allocations"),
        ("oversize_segments", "Oversize GPU segments"),
    ):
        lines.append("-" * 75)
        vals = [stats.get(f"{key}.{f}", 0) for f in fields]
        cells = " | ".join(_fmt_count(v, v) for v in vals)
        lines.append(f" {name:<21} | {cells} ")
    lines.append("=" * 75)
    return "|" + "|\n|".join(lines) + "|\n"
