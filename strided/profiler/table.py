"""The profiler's text table, column for column as torch's (torch/autograd/profiler_util.py, ``_build_table``).

Columns: name; self and total CPU time with their shares; with GPU work, the same for CUDA; with
``profile_memory``, "CPU Mem" / "Self CPU Mem" (and "CUDA Mem" / "Self CUDA Mem" where any row allocated device
memory); the call count; "Input Shapes" where rows carry shapes; "Total <scale>FLOPs" with ``with_flops``;
"Source Location" with ``with_stack`` (each further stack entry on a line of its own, then a blank line).
"""

from __future__ import annotations

import math

__all__ = ["build_table", "format_time", "format_memory", "SORT_KEYS"]

SORT_KEYS = {"cpu_time": "cpu_time", "cuda_time": "device_time", "device_time": "device_time",
             "cpu_time_total": "cpu_time_total", "cuda_time_total": "device_time_total",
             "device_time_total": "device_time_total", "self_cpu_time_total": "self_cpu_time_total",
             "self_cuda_time_total": "self_device_time_total", "self_device_time_total": "self_device_time_total",
             "count": "count", "cpu_memory_usage": "cpu_memory_usage",
             "self_cpu_memory_usage": "self_cpu_memory_usage", "cuda_memory_usage": "device_memory_usage",
             "device_memory_usage": "device_memory_usage", "self_cuda_memory_usage": "self_device_memory_usage",
             "self_device_memory_usage": "self_device_memory_usage", "flops": "flops"}

_FLOP_UNITS = ["FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"]


def format_time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def format_memory(nbytes: int) -> str:
    """torch's memory cell: ``39.06 KB``, ``-1.50 MB``, ``40 B``."""
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


def _time(us: float, unit: str | None) -> str:
    if unit == "s":
        return f"{us / 1e6:.3f}s"
    if unit == "ms":
        return f"{us / 1e3:.3f}ms"
    if unit == "us":
        return f"{us:.3f}us"
    return format_time(us)


def _trim_path(path: str, width: int) -> str:
    if len(path) > width:
        path = path[len(path) - width:]
        if len(path) > 3:
            path = "..." + path[3:]
    return path


def build_table(events, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
                max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None) -> str:
    """The table of ``events`` (an ``EventList`` of events or of ``key_averages()`` rows)."""
    if time_unit not in (None, "s", "ms", "us"):
        raise ValueError(f"table(): time_unit must be 's', 'ms' or 'us', got {time_unit!r}")
    rows = list(events)
    if sort_by is not None:
        if sort_by not in SORT_KEYS:
            raise AttributeError(f"'FunctionEventAvg' object has no attribute '{sort_by}'; sort_by takes one of "
                                 f"{sorted(SORT_KEYS)}")
        attr = SORT_KEYS[sort_by]
        rows.sort(key=lambda e: getattr(e, attr), reverse=True)
    device = events.use_device is not None or any(e.device_time_total for e in events)
    memory = getattr(events, "profile_memory", False)
    device_memory = memory and any(e.self_device_memory_usage > 0 for e in events)
    shapes = any(e.input_shapes for e in events)
    stacks = [e.stack for e in events if e.stack]
    flops = [e.flops for e in events if e.flops > 0] if getattr(events, "with_flops", False) else []
    # as torch: CPU rows share the host time, kernel rows the GPU time (an op's "Self CUDA" is the time of
    # the kernels it launched itself, which the kernels' own rows also show)
    cpu_total = sum(e.self_cpu_time_total for e in events if e.device_type == "CPU")
    dev_total = (sum(e.self_device_time_total for e in events if e.device_type == "CUDA")
                 if any(e.device_type == "CUDA" for e in events) else sum(k.duration_us for k in events.kernels))

    name_w = min(max([len(e.key) for e in rows] + [4]) + 4, max_name_column_width)
    heads = ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if device:
        heads += ["Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"]
    if memory:
        heads += ["CPU Mem", "Self CPU Mem"]
        if device_memory:
            heads += ["CUDA Mem", "Self CUDA Mem"]
    heads += ["# of Calls"]
    widths = [name_w] + [12] * len(heads)
    aligns = [">"] * len(widths)
    if shapes:
        heads.append("Input Shapes")
        widths.append(min(max(len(str(e.input_shapes)) for e in events) + 4, max_shapes_column_width))
        aligns.append(">")
    if flops:
        exp = max(0, min(math.floor(math.log10(min(flops)) / 3), len(_FLOP_UNITS) - 1))
        scale = 10.0 ** (-3 * exp)
        heads.append(f"Total {_FLOP_UNITS[exp]}")
        widths.append(12)
        aligns.append(">")
    src_w = 0
    if stacks:
        src_w = min(max(len(entry) for stack in stacks for entry in stack) + 4, max_src_column_width)
        heads.append("Source Location")
        widths.append(src_w)
        aligns.append("<")

    def row(cells) -> str:
        return "".join(f"{c:{a}{w}}  " for c, a, w in zip(cells, aligns, widths))

    rule = "".join("-" * w + "  " for w in widths)
    out = []
    if header is not None:
        out += ["=" * (len(rule) - 2), header]
    if top_level_events_only:
        out += ["=" * (len(rule) - 2), "This report only display top-level ops statistics"]
    out += [rule, row(["Name"] + heads), rule]
    shown = 0
    for e in rows:
        if shown == row_limit:
            break
        if top_level_events_only and getattr(e, "parent", None) is not None:
            continue
        shown += 1
        name = e.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        cells = [name, f"{e.self_cpu_time_total / (cpu_total or 1.0) * 100:.2f}%",
                 _time(e.self_cpu_time_total, time_unit), f"{e.cpu_time_total / (cpu_total or 1.0) * 100:.2f}%",
                 _time(e.cpu_time_total, time_unit), _time(e.cpu_time_total / max(e.count, 1), time_unit)]
        if device:
            cells += [_time(e.self_device_time_total, time_unit),
                      f"{e.self_device_time_total / (dev_total or 1.0) * 100:.2f}%",
                      _time(e.device_time_total, time_unit), _time(e.device_time_total / max(e.count, 1), time_unit)]
        if memory:
            cells += [format_memory(e.cpu_memory_usage), format_memory(e.self_cpu_memory_usage)]
            if device_memory:
                cells += [format_memory(e.device_memory_usage), format_memory(e.self_device_memory_usage)]
        cells.append(str(e.count))
        if shapes:
            cells.append(str(e.input_shapes)[:widths[len(cells)]])
        if flops:
            cells.append("--" if e.flops <= 0 else f"{e.flops * scale:8.3f}")
        if stacks:
            cells.append(_trim_path(e.stack[0], src_w) if e.stack else "")
        out.append(row(cells))
        if stacks:
            blank = [""] * (len(cells) - 1)
            out += [row(blank + [_trim_path(entry, src_w)]) for entry in e.stack[1:]]
            out.append(row(blank + [""]))
    out += [rule, f"Self CPU time total: {_time(cpu_total, time_unit)}"]
    if device:
        out.append(f"Self CUDA time total: {_time(dev_total, time_unit)}")
    return "\n".join(out) + "\n"
