"""Count and time operator calls by dispatch key: ``with count_ops() as stats: ...``.

Uses the dispatcher's tracing hook (Note [Zero-cost tracing]): while active, every newly
resolved kernel is wrapped with a counter; outside it the hot path is untouched.
"""

from __future__ import annotations

import contextlib
import time
from collections import defaultdict
from dataclasses import dataclass, field

from ..dispatch import dispatcher
from ..dispatch.keys import DispatchKey

__all__ = ["count_ops", "OpStats"]


@dataclass
class OpStats:
    """Per (op, backend) call counts and inclusive host time in seconds."""

    calls: dict = field(default_factory=lambda: defaultdict(int))
    seconds: dict = field(default_factory=lambda: defaultdict(float))

    def table(self) -> str:
        rows = sorted(self.calls.items(), key=lambda kv: (-kv[1], kv[0]))
        width = max((len(f"{op} [{key}]") for (op, key), _ in rows), default=10)
        lines = [f"{'op [backend]':<{width}}  {'calls':>6}  {'host ms':>8}"]
        for (op, key), n in rows:
            lines.append(f"{op + ' [' + key + ']':<{width}}  {n:>6}  {self.seconds[(op, key)] * 1e3:>8.3f}")
        return "\n".join(lines)

    @property
    def total_calls(self) -> int:
        return sum(self.calls.values())


@contextlib.contextmanager
def count_ops():
    """Record every dispatched operator call (nested composite calls included)."""
    if dispatcher._tracing.wrapper is not None:
        raise RuntimeError("count_ops() is already active (or a profiler, emit_nvtx() or a forward AD level is: "
                           "they share the dispatcher's tracing hook)")
    stats = OpStats()

    def wrap(op, keyset, fn):
        key = (f"{op.name}.{op.overload_name}", DispatchKey(keyset & 0xF).name)
        perf = time.perf_counter

        def counted(*args, **kwargs):
            t0 = perf()
            try:
                return fn(*args, **kwargs)
            finally:
                stats.calls[key] += 1
                stats.seconds[key] += perf() - t0

        return counted

    dispatcher.clear_all_caches()
    dispatcher._tracing.wrapper = wrap
    try:
        yield stats
    finally:
        dispatcher._tracing.wrapper = None
        dispatcher.clear_all_caches()
