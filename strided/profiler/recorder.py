"""The recorder behind ``strided.profiler.profile``: host ranges for operator calls, ``record_function``
blocks and autograd nodes, and (through :mod:`.cuda_timing`) the GPU work launched inside them.

Note [Profiler hooks]
Nothing on the hot path tests a flag. While a profile records, every kernel the dispatcher has resolved
is wrapped in place and the tracing wrapper (Note [Zero-cost tracing]) wraps those resolved meanwhile;
the engine's ``node_scope`` opens a range per backward node, and the CUDA launch points (the driver's
``cuLaunchKernel`` and memcpy functions, cuBLASLt's matmul) are swapped for timed versions; with
``profile_memory`` the storage allocators and each device's caching allocator are (Note [Memory records]),
with ``with_stack`` ``nn.Module.__call__`` (Note [Op call sites]); stopping puts every one back. An op's
Autograd (or Autocast) kernel and the backend kernel it redispatches to are one call in torch's profiler,
so a wrapped kernel entered while the same op is the innermost open range records nothing new.
"""

from __future__ import annotations

import itertools
import threading
import time

from ..dispatch import dispatcher
from ..tensor import Tensor
from .call_sites import ModuleRanges, user_stack
from .events import EventList, FunctionEvent, KernelRecord
from .flops import flops_of

__all__ = ["Recorder", "active", "wrap_resolved"]


class _Active:
    __slots__ = ("recorder",)

    def __init__(self):
        self.recorder = None


active = _Active()  # the recording Recorder, or None


def _shapes(args, kwargs) -> list:
    out = []
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, Tensor):
            out.append(list(a._sizes))
        elif isinstance(a, (list, tuple)) and a and all(isinstance(t, Tensor) for t in a):
            out.append([list(t._sizes) for t in a])
        else:
            out.append([])
    return out


def _all_overloads():
    from ..ops.registry import _NAMESPACES

    for ns in _NAMESPACES.values():
        for packet in ns:
            yield from packet._ordered


def wrap_resolved(wrapper) -> None:
    """Wrap every kernel the dispatcher has already resolved with ``wrapper(op, keyset, fn)`` in place (or, with
    None, put the originals back): clearing the caches instead would make each op's first traced call pay its
    resolution again. A wrapped kernel keeps its original as ``.unprofiled``."""
    for op in _all_overloads():
        cache = op._cache
        for keyset, fn in list(cache.items()):
            original = getattr(fn, "unprofiled", None)
            if wrapper is not None and original is None:
                cache[keyset] = wrapper(op, keyset, fn)
            elif wrapper is None and original is not None:
                cache[keyset] = original


class Recorder:
    """Collects events between :meth:`start` and :meth:`stop` (one at a time per process)."""

    def __init__(self, record_shapes: bool = False, cuda: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_flops: bool = False):
        self.record_shapes = record_shapes
        self.use_cuda = cuda
        self.profile_memory, self.with_stack, self.with_flops = profile_memory, with_stack, with_flops
        self.memory = None
        self.modules = None
        self.events: list[FunctionEvent] = []
        self.kernels: list[KernelRecord] = []
        self._tls = threading.local()
        self._ids = itertools.count(1)
        self._t0 = time.perf_counter_ns()
        self.timing = None

    # -- time and the per-thread range stack ------------------------------------------------------
    def now(self) -> float:
        """Microseconds since the recorder was made."""
        return (time.perf_counter_ns() - self._t0) / 1e3

    def _stack(self) -> list:
        st = getattr(self._tls, "stack", None)
        if st is None:
            st = self._tls.stack = []
        return st

    def current(self):
        """The innermost open range of this thread, or None."""
        st = self._stack()
        return st[-1] if st else None

    def push(self, name: str, cat: str, shapes=None) -> FunctionEvent:
        st = self._stack()
        parent = st[-1] if st else None
        e = FunctionEvent(next(self._ids), name, cat, threading.get_native_id(), self.now(), parent, shapes)
        if self.with_stack and cat != "python_function":
            e.stack = user_stack(2)
        if parent is not None:
            parent.children.append(e)
        self.events.append(e)
        st.append(e)
        return e

    def pop(self, e: FunctionEvent) -> None:
        e.end_us = self.now()
        st = self._stack()
        while st:  # an exception may have left inner ranges open
            top = st.pop()
            if top is e:
                break
            top.end_us = e.end_us

    def charge_memory(self, nbytes: int, device: bool) -> None:
        """Add an allocation's (or a free's negative) bytes to this thread's innermost range, or record a
        ``[memory]`` event when no range is open (Note [Memory records])."""
        st = self._stack()
        if st:
            e = st[-1]
        else:
            e = FunctionEvent(next(self._ids), "[memory]", "cpu_instant_event", threading.get_native_id(), self.now(),
                              None)
            e.end_us = e.start_us
            self.events.append(e)
        if device:
            e.self_device_memory_usage += nbytes
        else:
            e.self_cpu_memory_usage += nbytes

    def add_kernel(self, name, device, stream, launch_us, parent, grid=None, block=None) -> KernelRecord:
        k = KernelRecord(name, device, stream, launch_us, parent, grid, block)
        k.id = next(self._ids)
        if k.parent is not None:
            k.parent.kernels.append(k)
        self.kernels.append(k)
        return k

    # -- hooks -------------------------------------------------------------------------------
    def _wrap(self, op, keyset, fn):
        """The dispatcher's tracing wrapper (Note [Profiler hooks])."""
        name = op.name
        shapes = self.record_shapes
        flops = self.with_flops

        def profiled(*args, **kwargs):
            st = self._stack()
            if st and st[-1].name == name and st[-1].cat == "cpu_op":
                return fn(*args, **kwargs)  # the backend kernel below this op's Autograd kernel
            e = self.push(name, "cpu_op", _shapes(args, kwargs) if shapes else None)
            if flops:
                e.flops = flops_of(name, args, kwargs)
            try:
                return fn(*args, **kwargs)
            finally:
                self.pop(e)

        profiled.unprofiled = fn
        return profiled

    def node_scope(self, name: str):
        """The engine's range for one backward node (torch's ``autograd::engine::evaluate_function``)."""
        return _NodeScope(self, name)

    def start(self) -> None:
        if active.recorder is not None or dispatcher._tracing.wrapper is not None:
            raise RuntimeError("Profiler is already enabled on this thread (a strided profiler or count_ops() "
                               "is recording, or a forward AD level is open)")
        if self.use_cuda:
            from .cuda_timing import CudaTiming

            self.timing = CudaTiming(self)
            self.timing.install()
        if self.profile_memory:
            from .memory import MemoryTracker

            self.memory = MemoryTracker(self)
            self.memory.install()
        if self.with_stack:
            self.modules = ModuleRanges(self)
            self.modules.install()
        active.recorder = self
        dispatcher._tracing.node_scope = self.node_scope
        dispatcher._tracing.wrapper = self._wrap
        wrap_resolved(self._wrap)

    def stop(self) -> EventList:
        """Stop recording; GPU times are read now (one synchronization of each device used)."""
        dispatcher._tracing.wrapper = None
        dispatcher._tracing.node_scope = None
        wrap_resolved(None)
        if self.modules is not None:
            self.modules.uninstall()
        if self.memory is not None:
            self.memory.uninstall()
        active.recorder = None
        end = self.now()
        for e in self.events:  # ranges still open (stopped inside a block) end now
            if e.end_us is None:
                e.end_us = end
        if self.timing is not None:
            self.timing.uninstall()
            self.timing.resolve()
        return EventList(self.events, self.kernels, use_device="cuda" if self.use_cuda else None,
                         profile_memory=self.profile_memory, with_flops=self.with_flops,
                         memory_records=self.memory.records if self.memory is not None else ())


class _NodeScope:
    __slots__ = ("recorder", "name", "outer", "inner")

    def __init__(self, recorder, name):
        self.recorder, self.name = recorder, name

    def __enter__(self):
        self.outer = self.recorder.push(f"autograd::engine::evaluate_function: {self.name}", "cpu_op")
        self.inner = self.recorder.push(self.name, "cpu_op")

    def __exit__(self, *exc):
        self.recorder.pop(self.inner)
        self.recorder.pop(self.outer)
