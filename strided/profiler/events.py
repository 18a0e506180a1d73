"""What a profile recorded: ``FunctionEvent`` (one op call, ``record_function`` range or GPU kernel),
``EventList`` with torch's ``key_averages()`` / ``table()``, and the Chrome trace export.

Times are microseconds, as torch's. An event's device time is the sum of the GPU kernels launched
inside it (its children's included); its *self* times leave out its children's.
"""

from __future__ import annotations

import json
import os
from collections import OrderedDict

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
                 "kernels", "device_type", "trace_name")

    def __init__(self, id, name, cat, thread, start_us, parent, input_shapes=None, device_type="CPU"):
        self.id, self.name, self.cat, self.thread, self.start_us = id, name, cat, thread, start_us
        self.end_us = None  # set when the range closes
        self.parent = parent
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.children: list[FunctionEvent] = []
        self.kernels: list[KernelRecord] = []
        self.device_type = device_type
        self.trace_name = None  # the name in the Chrome trace, where it differs (ProfilerStep#<n>)

    key = property(lambda self: self.name)
    count = property(lambda self: 1)
    is_user_annotation = property(lambda self: self.cat == "user_annotation")

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

    def __init__(self, key, input_shapes=None):
        self.key = key
        self.input_shapes = input_shapes
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.device_time_total = self.self_device_time_total = 0.0
        self.is_user_annotation = False
        self.device_type = "CPU"

    def add(self, e) -> FunctionEventAvg:
        self.count += e.count
        self.cpu_time_total += e.cpu_time_total
        self.self_cpu_time_total += e.self_cpu_time_total
        self.device_time_total += e.device_time_total
        self.self_device_time_total += e.self_device_time_total
        self.is_user_annotation = e.is_user_annotation
        self.device_type = e.device_type
        return self

    cpu_time = property(lambda self: self.cpu_time_total / max(self.count, 1))
    device_time = property(lambda self: self.device_time_total / max(self.count, 1))
    cuda_time = device_time
    cuda_time_total = property(lambda self: self.device_time_total)
    self_cuda_time_total = property(lambda self: self.self_device_time_total)

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
        self.device_type = "CUDA"


_SORT_KEYS = {"cpu_time": "cpu_time", "cuda_time": "device_time", "device_time": "device_time",
              "cpu_time_total": "cpu_time_total", "cuda_time_total": "device_time_total",
              "device_time_total": "device_time_total", "self_cpu_time_total": "self_cpu_time_total",
              "self_cuda_time_total": "self_device_time_total", "self_device_time_total": "self_device_time_total",
              "count": "count"}


def _format_time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


class EventList(list):
    """The events of a profile, in start order (torch's ``EventList``)."""

    def __init__(self, events=(), kernels=(), use_device=None):
        super().__init__(events)
        self.kernels = list(kernels)
        self.use_device = use_device

    def key_averages(self, group_by_input_shape: bool = False) -> EventList:
        """One row per event name (and input shapes), kernels included, in first-seen order."""
        groups: OrderedDict = OrderedDict()
        for e in list(self) + [_KernelRow(k) for k in self.kernels]:
            shapes = str(e.input_shapes) if group_by_input_shape else None
            key = (e.key, shapes)
            avg = groups.get(key)
            if avg is None:
                avg = groups[key] = FunctionEventAvg(e.key, e.input_shapes if group_by_input_shape else None)
            avg.add(e)
        return EventList(groups.values(), use_device=self.use_device)

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg("Total")
        for e in self:
            total.add(e)
        return total

    def table(self, sort_by: str | None = None, row_limit: int = 100, max_name_column_width: int = 55,
              header: str | None = None, top_level_events_only: bool = False) -> str:
        """torch's profiler table: one row per entry, device columns when GPU work was recorded."""
        rows = list(self)
        if top_level_events_only:
            rows = [e for e in rows if getattr(e, "parent", None) is None]
        if sort_by is not None:
            if sort_by not in _SORT_KEYS:
                raise AttributeError(f"'FunctionEventAvg' object has no attribute '{sort_by}'; sort_by takes one of "
                                     f"{sorted(_SORT_KEYS)}")
            attr = _SORT_KEYS[sort_by]
            rows.sort(key=lambda e: getattr(e, attr), reverse=True)
        if row_limit is not None and row_limit > 0:
            rows = rows[:row_limit]
        device = self.use_device is not None or any(e.device_time_total for e in self)
        grouped = any(isinstance(e, FunctionEventAvg) and e.input_shapes is not None for e in self)
        # as torch: CPU rows share the host time, kernel rows the GPU time (an op's "Self CUDA" is the time of
        # the kernels it launched itself, which the kernels' own rows also show)
        cpu_total = sum(e.self_cpu_time_total for e in self if e.device_type == "CPU")
        dev_total = (sum(e.self_device_time_total for e in self if e.device_type == "CUDA")
                     if any(e.device_type == "CUDA" for e in self) else sum(k.duration_us for k in self.kernels))
        name_w = min(max([len(e.key) for e in rows] + [4]) + 4, max_name_column_width)
        heads = ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
        if device:
            heads += ["Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"]
        heads += ["# of Calls"]
        if grouped:
            heads += ["Input Shapes"]
        widths = [name_w] + [28 if h == "Input Shapes" else 12 for h in heads]
        line = "  ".join("-" * w for w in widths) + "  "
        out = [header] if header else []
        out += [line, "  ".join(f"{h:>{w}}" for h, w in zip(["Name"] + heads, widths)) + "  ", line]
        for e in rows:
            name = e.key if len(e.key) <= name_w else e.key[:name_w - 3] + "..."
            cells = [f"{e.self_cpu_time_total / (cpu_total or 1.0) * 100:.2f}%", _format_time(e.self_cpu_time_total),
                     f"{e.cpu_time_total / (cpu_total or 1.0) * 100:.2f}%", _format_time(e.cpu_time_total),
                     _format_time(e.cpu_time_total / max(e.count, 1))]
            if device:
                cells += [_format_time(e.self_device_time_total),
                          f"{e.self_device_time_total / (dev_total or 1.0) * 100:.2f}%",
                          _format_time(e.device_time_total), _format_time(e.device_time_total / max(e.count, 1))]
            cells += [str(e.count)]
            if grouped:
                cells += [str(e.input_shapes)[:28]]
            out.append("  ".join(f"{c:>{w}}" for c, w in zip([name] + cells, widths)) + "  ")
        out += [line, f"Self CPU time total: {_format_time(cpu_total)}"]
        if device:
            out.append(f"Self CUDA time total: {_format_time(dev_total)}")
        return "\n".join(out) + "\n"

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
        args = {"External id": e.id}
        if e.input_shapes:
            args["Input Dims"] = e.input_shapes
        trace.append({"ph": "X", "cat": e.cat, "name": e.trace_name or e.name, "pid": pid, "tid": e.thread,
                      "ts": e.start_us,
                      "dur": e.cpu_time_total, "args": args})
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
