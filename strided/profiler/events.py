"""What a profile recorded: ``FunctionEvent`` (one op call, ``record_function`` range or GPU kernel),
``EventList`` with torch's ``key_averages()`` / ``table()``, and the Chrome trace export.

Times are microseconds, as torch's. An event's device time is the sum of the GPU kernels launched
inside it (its children's included); its *self* times leave out its children's.
"""

from __future__ import annotations

import json
import os
from collections import OrderedDict

from .table import build_table

__all__ = ["FunctionEvent", "FunctionEventAvg", "EventList", "KernelRecord"]


class KernelRecord:
    """One GPU kernel (or cuBLASLt GEMM) launched while profiling; device times filled in at stop."""

    __slots__ = ("name", "device", "stream", "launch_us", "start_us", "end_us", "parent", "grid", "block", "id")

    def __init__(self, name, device, stream, launch_us, parent, grid=None, block=None):
        self.name, self.device, self.stream, self.launch_us, self.parent = name, device, stream, launch_us, parent
        self.grid, self.block = grid, block
        self.start_us = self.end_us = None  # None: not timed (launched during a CUDA graph capture)
        self.id = 0

    @property
    def duration_us(self) -> float:
        return 0.0 if self.start_us is None else self.end_us - self.start_us


class FunctionEvent:
    """One recorded range on the host: an operator call (``cat="cpu_op"``), a ``record_function`` block
    (``"user_annotation"``) or a runtime call such as ``cuLaunchKernel`` (``"cuda_runtime"``)."""

    __slots__ = ("id", "name", "cat", "thread", "start_us", "end_us", "input_shapes", "parent", "children",
                 "kernels", "device_type", "trace_name", "self_cpu_memory_usage", "self_device_memory_usage", "flops",
                 "stack")

    def __init__(self, id, name, cat, thread, start_us, parent, input_shapes=None, device_type="CPU"):
        self.id, self.name, self.cat, self.thread, self.start_us = id, name, cat, thread, start_us
        self.end_us = None  # set when the range closes
        self.parent = parent
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.children: list[FunctionEvent] = []
        self.kernels: list[KernelRecord] = []
        self.device_type = device_type
        self.trace_name = None  # the name in the Chrome trace, where it differs (ProfilerStep#<n>)
        self.self_cpu_memory_usage = self.self_device_memory_usage = 0  # bytes (Note [Memory records])
        self.flops = 0  # with_flops: torch's estimate (flops.py)
        self.stack: list[str] = []  # with_stack: the call site, innermost first (Note [Op call sites])

    key = property(lambda self: self.name)
    count = property(lambda self: 1)
    is_user_annotation = property(lambda self: self.cat == "user_annotation")
    is_python_function = property(lambda self: self.cat == "python_function")

    @property
    def cpu_memory_usage(self) -> int:
        return self.self_cpu_memory_usage + sum(c.cpu_memory_usage for c in self.children)

    @property
    def device_memory_usage(self) -> int:
        return self.self_device_memory_usage + sum(c.device_memory_usage for c in self.children)

    cuda_memory_usage = device_memory_usage
    self_cuda_memory_usage = property(lambda self: self.self_device_memory_usage)

    @property
    def cpu_time_total(self) -> float:
        return self.end_us - self.start_us

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.children)

    @property
    def self_device_time_total(self) -> float:
        return sum(k.duration_us for k in self.kernels)

    @property
    def device_time_total(self) -> float:
        return self.self_device_time_total + sum(c.device_time_total for c in self.children)

    cuda_time_total = device_time_total  # torch's older names
    self_cuda_time_total = self_device_time_total
    cpu_children = property(lambda self: list(self.children))
    cpu_parent = property(lambda self: self.parent)

    def __repr__(self) -> str:
        return (f"<FunctionEvent id={self.id} name={self.name} cpu_time_total={self.cpu_time_total:.3f}us "
                f"device_time_total={self.device_time_total:.3f}us input_shapes={self.input_shapes}>")


class FunctionEventAvg:
    """The events of one name (and input shapes, when grouped by them) added up (torch's ``FunctionEventAvg``)."""

    def __init__(self, key, input_shapes=None, stack=None):
        self.key = key
        self.input_shapes = input_shapes
        self.stack = stack if stack is not None else []
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.device_time_total = self.self_device_time_total = 0.0
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0
        self.device_memory_usage = self.self_device_memory_usage = 0
        self.flops = 0
        self.is_user_annotation = False
        self.device_type = "CPU"

    def add(self, e) -> FunctionEventAvg:
        self.count += e.count
        self.cpu_time_total += e.cpu_time_total
        self.self_cpu_time_total += e.self_cpu_time_total
        self.device_time_total += e.device_time_total
        self.self_device_time_total += e.self_device_time_total
        self.cpu_memory_usage += e.cpu_memory_usage
        self.self_cpu_memory_usage += e.self_cpu_memory_usage
        self.device_memory_usage += e.device_memory_usage
        self.self_device_memory_usage += e.self_device_memory_usage
        self.flops += e.flops
        self.is_user_annotation = e.is_user_annotation
        self.device_type = e.device_type
        return self

    cpu_time = property(lambda self: self.cpu_time_total / max(self.count, 1))
    device_time = property(lambda self: self.device_time_total / max(self.count, 1))
    cuda_time = device_time
    cuda_time_total = property(lambda self: self.device_time_total)
    self_cuda_time_total = property(lambda self: self.self_device_time_total)
    cuda_memory_usage = property(lambda self: self.device_memory_usage)
    self_cuda_memory_usage = property(lambda self: self.self_device_memory_usage)

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} count={self.count} cpu_time_total={self.cpu_time_total:.3f}us "
                f"device_time_total={self.device_time_total:.3f}us>")


class _KernelRow:
    """A kernel's row in key_averages: device time only (its launch is a host event of its own)."""

    def __init__(self, k: KernelRecord):
        self.key = self.name = k.name
        self.count = 1
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.device_time_total = self.self_device_time_total = k.duration_us
        self.is_user_annotation = False
        self.input_shapes = []
        self.stack = []
        self.cpu_memory_usage = self.self_cpu_memory_usage = self.device_memory_usage = 0
        self.self_device_memory_usage = self.flops = 0
        self.is_python_function = False
        self.device_type = "CUDA"


class EventList(list):
    """The events of a profile, in start order (torch's ``EventList``)."""

    def __init__(self, events=(), kernels=(), use_device=None, profile_memory=False, with_flops=False,
                 memory_records=()):
        super().__init__(events)
        self.kernels = list(kernels)
        self.use_device = use_device
        self.profile_memory = profile_memory
        self.with_flops = with_flops
        self.memory_records = list(memory_records)  # with profile_memory: every allocation and free, in order

    def key_averages(self, group_by_input_shapes: bool = False, group_by_stack_n: int = 0,
                     include_python_functions: bool = False) -> EventList:
        """One row per event name (and input shapes, and first ``group_by_stack_n`` call-site entries), kernels
        included, in first-seen order; ``nn.Module`` ranges are left out unless ``include_python_functions``."""
        if not isinstance(group_by_stack_n, int) or group_by_stack_n < 0:
            raise ValueError(f"key_averages(): group_by_stack_n must be a non-negative int, got {group_by_stack_n!r}")
        groups: OrderedDict = OrderedDict()
        for e in list(self) + [_KernelRow(k) for k in self.kernels]:
            if e.is_python_function and not include_python_functions:
                continue
            shapes = str(e.input_shapes) if group_by_input_shapes else None
            stack = tuple(e.stack[:group_by_stack_n]) if group_by_stack_n else ()
            key = (e.key, shapes, stack)
            avg = groups.get(key)
            if avg is None:
                avg = groups[key] = FunctionEventAvg(e.key, e.input_shapes if group_by_input_shapes else None,
                                                     list(stack) if group_by_stack_n else list(e.stack))
            avg.add(e)
        return EventList(groups.values(), use_device=self.use_device, profile_memory=self.profile_memory,
                         with_flops=self.with_flops)

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg("Total")
        for e in self:
            total.add(e)
        return total

    def table(self, sort_by: str | None = None, row_limit: int = 100, max_src_column_width: int = 75,
              max_name_column_width: int = 55, max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False, time_unit: str | None = None) -> str:
        """torch's profiler table: one row per entry; device columns when GPU work was recorded, memory columns
        with ``profile_memory``, a FLOPs column with ``with_flops``, the call site with ``with_stack``."""
        return build_table(self, sort_by=sort_by, row_limit=row_limit, max_src_column_width=max_src_column_width,
                           max_name_column_width=max_name_column_width,
                           max_shapes_column_width=max_shapes_column_width, header=header,
                           top_level_events_only=top_level_events_only, time_unit=time_unit)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Write each event's call stack (with ``with_stack``) and ``metric`` in the flame-graph tools' folded
        format: ``outermost;...;innermost <int value>`` per line, as torch's ``export_stacks``."""
        metrics = ["self_cpu_time_total", "self_cuda_time_total", "self_device_time_total"]
        if metric not in metrics:
            raise ValueError(f"metric should be one of: {metrics}")
        attr = metric.replace("cuda", "device")
        clean = str.maketrans(" ;\t\n", "____")
        with open(path, "w") as f:
            for e in self:
                value = int(getattr(e, attr))
                if e.stack and value > 0:
                    f.write(";".join(entry.translate(clean) for entry in reversed(e.stack)) + f" {value}\n")

    def export_chrome_trace(self, path: str) -> None:
        """Write the events as a Chrome trace (open it in https://ui.perfetto.dev or chrome://tracing)."""
        with open(path, "w") as f:
            json.dump(chrome_trace(self), f)


_GPU_PID = 1 << 30  # GPU n is process _GPU_PID + n in the trace (the host process is its own pid)


def chrome_trace(events: EventList) -> dict:
    """The Chrome trace-event JSON of ``events``: host ranges per thread, kernels per device stream, and a flow
    arrow from each launch to its kernel."""
    pid = os.getpid()
    trace = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "CPU (strided)"}}]
    for e in events:
        if e.name == "[memory]":
            continue  # an instant event below
        args = {"External id": e.id}
        if e.input_shapes:
            args["Input Dims"] = e.input_shapes
        if e.stack:
            args["Call stack"] = ";".join(e.stack)
        if e.flops:
            args["flops"] = e.flops
        trace.append({"ph": "X", "cat": e.cat, "name": e.trace_name or e.name, "pid": pid, "tid": e.thread,
                      "ts": e.start_us,
                      "dur": e.cpu_time_total, "args": args})
    for m in getattr(events, "memory_records", ()):
        trace.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": pid, "tid": m.thread,
                      "ts": m.ts, "args": {"Total Reserved": m.total_reserved, "Total Allocated": m.total_allocated,
                                           "Bytes": m.nbytes, "Device Id": m.device_index,
                                           "Device Type": 1 if m.device_type == "cuda" else 0, "Addr": m.addr}})
    lanes = set()  # (device, stream) already named
    for k in events.kernels:
        if k.start_us is None:
            continue
        gpu = _GPU_PID + k.device  # numeric ids: the trace-event format's (Perfetto and chrome://tracing)
        if (k.device, None) not in lanes:
            lanes.add((k.device, None))
            trace.append({"ph": "M", "name": "process_name", "pid": gpu, "tid": 0, "args": {"name": f"GPU {k.device}"}})
        if (k.device, k.stream) not in lanes:
            lanes.add((k.device, k.stream))
            trace.append({"ph": "M", "name": "thread_name", "pid": gpu, "tid": k.stream,
                          "args": {"name": f"stream {k.stream:#x}"}})
        args = {"device": k.device, "stream": k.stream}
        if k.grid is not None:
            args["grid"], args["block"] = k.grid, k.block
        if k.parent is not None:
            args["External id"] = k.parent.id
        trace.append({"ph": "X", "cat": "kernel", "name": k.name, "pid": gpu, "tid": k.stream, "ts": k.start_us,
                      "dur": k.duration_us, "args": args})
        thread = k.parent.thread if k.parent is not None else 0
        trace.append({"ph": "s", "id": k.id, "cat": "ac2g", "name": "launch", "pid": pid, "tid": thread,
                      "ts": k.launch_us})
        trace.append({"ph": "f", "id": k.id, "cat": "ac2g", "name": "launch", "pid": gpu, "tid": k.stream,
                      "ts": k.start_us, "bp": "e"})
    return {"traceEvents": trace, "displayTimeUnit": "ms"}
