"""``strided memory ...``: replay traces, plot them, show what was live at the peak, summarize snapshots."""

from __future__ import annotations

import argparse
import json
import os
import sys

__all__ = ["add_parser", "DEFAULT_CONFIGS", "OURS"]

OURS = "expandable_segments:True,strided_eager_unmap:True"
DEFAULT_CONFIGS = [
    ("PyTorch default", ""),
    ("PyTorch expandable", "expandable_segments:True"),
    ("strided eager unmap", OURS),
]


def _gib(text: str) -> float:
    """``--capacity-gb``: a finite, positive number of GiB (argparse reports anything else as a usage error)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of GiB, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive, finite number of GiB, got {text}")
    return value


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register the ``memory`` group."""
    p = sub.add_parser(
        "memory",
        help="caching allocator tools: replay traces, plot them, find what was live at the peak, rank allocator "
        "settings, summarize snapshots",
        description="Tools for the caching allocator (strided.memory).",
    )
    p.set_defaults(group_parser=p)
    cmds = p.add_subparsers(dest="command", metavar="COMMAND")

    def common(q: argparse.ArgumentParser) -> None:
        q.add_argument("trace", help="snapshot with device_traces (PyTorch or strided; .pickle or .gz)")
        q.add_argument(
            "--config",
            action="append",
            metavar="CONF",
            help="allocator settings to replay under (repeatable; 'default' = PyTorch's defaults). "
            "Without it: PyTorch default, expandable_segments:True, and strided's eager unmap policy",
        )
        q.add_argument("--device", type=int, help="which device's trace (default: the longest)")
        q.add_argument("--capacity-gb", type=_gib, default=141.0, help="simulated device memory (GiB)")
        q.add_argument(
            "--no-recorded-addresses",
            action="store_true",
            help="let the simulated device pick addresses instead of the recorded ones",
        )
        q.add_argument(
            "--progress", action="store_true", help="show progress even when stderr is not a terminal"
        )

    r = cmds.add_parser("replay", help="replay a trace under several configs; one row per config")
    common(r)
    r.add_argument("--json", action="store_true", help="print the results as JSON")
    r.add_argument(
        "--reference",
        metavar="JSON",
        help="PyTorch's measured numbers (pytorch_reference.json); by default one beside the trace",
    )
    r.set_defaults(func=_cmd_replay)

    pl = cmds.add_parser("plot", help="draw allocated and reserved over time for each config")
    common(pl)
    pl.add_argument("-o", "--output", metavar="PNG", help="write a PNG (needs matplotlib)")
    pl.add_argument("--html", metavar="HTML", help="write a self-contained HTML page")
    pl.set_defaults(func=_cmd_plot)

    pk = cmds.add_parser("peak", help="what was live at the peak of allocated memory, by source line")
    pk.add_argument("trace", help="snapshot with device_traces (PyTorch or strided; .pickle or .gz)")
    pk.add_argument("--config", default="", metavar="CONF",
                    help="allocator settings to replay under (default: PyTorch's defaults)")
    pk.add_argument("--device", type=int, help="which device's trace (default: the longest)")
    pk.add_argument("--top", type=int, default=15, help="groups to list (default 15)")
    pk.add_argument("--capacity-gb", type=_gib, default=141.0, help="simulated device memory (GiB)")
    pk.add_argument("--json", action="store_true", help="print the live allocations' groups as JSON")
    pk.add_argument("--progress", action="store_true", help="show progress even when stderr is not a terminal")
    pk.set_defaults(func=_cmd_peak)

    tu = cmds.add_parser("tune", help="rank allocator settings by the peak memory this trace would reserve",
                         description="Replay the trace under a grid of PYTORCH_CUDA_ALLOC_CONF settings "
                         "(Note [Tuning grid] in strided/memory/tune.py) and rank them by peak reserved memory.")
    tu.add_argument("trace", help="snapshot with device_traces (PyTorch or strided; .pickle or .gz)")
    tu.add_argument("--device", type=int, help="which device's trace (default: the longest)")
    tu.add_argument("--capacity-gb", type=_gib, default=141.0,
                    help="device memory (GiB): settings that run out of it are ranked last (default 141)")
    tu.add_argument("--config", action="append", metavar="CONF",
                    help="try these settings instead of the grid (repeatable; 'default' = PyTorch's defaults)")
    tu.add_argument("--fit", action="store_true",
                    help="also find the least device memory each setting runs the trace in (bisection: slower), "
                    "and rank by it")
    tu.add_argument("--top", type=int, default=None, help="rows to print (default: all)")
    tu.add_argument("--json", action="store_true", help="print the ranking as JSON")
    tu.add_argument("--progress", action="store_true", help="show progress even when stderr is not a terminal")
    tu.set_defaults(func=_cmd_tune)

    st = cmds.add_parser("stats", help="summarize a snapshot file")
    st.add_argument("snapshot", help="snapshot pickle (.pickle or .gz)")
    st.set_defaults(func=_cmd_stats)


def _configs(args: argparse.Namespace) -> list[tuple[str, str]]:
    if not args.config:
        return DEFAULT_CONFIGS
    return [("default" if c in ("", "default") else c, "" if c == "default" else c) for c in args.config]


def _load(path: str, command: str) -> dict:
    """The snapshot at ``path``; a file that cannot be read or is no snapshot ends the command with one line."""
    from .snapshot import SnapshotFormatError, load_snapshot

    try:
        return load_snapshot(path)
    except OSError as e:
        raise SystemExit(f"strided memory {command}: cannot read {path!r}: {e.strerror or e}") from None
    except SnapshotFormatError as e:
        raise SystemExit(f"strided memory {command}: {path!r} is not a memory snapshot: {e}") from None


def _events(snap: dict, device: int, command: str):
    """The snapshot's trace for ``device``, or the command's one-line error (no trace recorded, no such device)."""
    from .replay import decode_trace

    try:
        return decode_trace(snap, device, op=command)
    except ValueError as e:
        raise SystemExit(f"strided memory {e}") from None


def _run(args: argparse.Namespace):
    from ..utils.progress import Progress
    from .config import AllocatorConfigError
    from .replay import replay

    events = _events(_load(args.trace, args.command), args.device, args.command)
    results = []
    for label, conf in _configs(args):
        with Progress(total=len(events.ops), desc=f"{label:>22}", force=args.progress) as bar:
            try:
                res = replay(
                    events,
                    conf,
                    label=label,
                    recorded_addresses=not args.no_recorded_addresses,
                    capacity=int(args.capacity_gb * (1 << 30)),
                    progress=bar.set,
                )
            except AllocatorConfigError as e:
                raise SystemExit(f"strided memory: bad --config {conf!r}: {e}") from None
        results.append(res)
    return events, results


def _reference(args: argparse.Namespace) -> dict | None:
    path = args.reference or os.path.join(
        os.path.dirname(os.path.abspath(args.trace)), "pytorch_reference.json"
    )
    if not os.path.exists(path):
        return None
    try:
        with open(path) as f:
            ref = json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit(f"strided memory {args.command}: cannot read the reference {path!r}: {e}") from None
    if not isinstance(ref, dict) or not isinstance(ref.get("traces", {}), dict):
        raise SystemExit(f"strided memory {args.command}: the reference {path!r} has no \"traces\" object")
    return ref.get("traces", {}).get(os.path.basename(args.trace))


def _cmd_replay(args: argparse.Namespace) -> int:
    events, results = _run(args)
    ref = _reference(args)
    if args.json:
        print(
            json.dumps(
                {
                    "trace": args.trace,
                    "entries": events.num_entries,
                    "reference": ref,
                    "results": [r.as_dict() for r in results],
                },
                indent=2,
            )
        )
        return 0
    print(format_table(args.trace, events, results, ref))
    return 0


def format_table(trace: str, events, results, ref: dict | None = None) -> str:
    """The side-by-side table printed by ``strided memory replay``."""
    n_alloc = sum(1 for op in events.ops if op[0] == 0)
    name = os.path.basename(trace)
    out = [f"{name}: {events.num_entries} trace entries, {n_alloc} allocations, device {events.device}"]
    w = max([24] + [len(r.label) for r in results])
    head = (
        f"{'config':<{w}} {'peak allocated':>16} {'peak reserved':>16} {'reserved/alloc':>14} "
        f"{'dev allocs':>10} {'dev frees':>9} {'OOMs':>5} {'addresses':>10} {'replay':>8}"
    )
    out += [head, "-" * len(head)]
    for r in results:
        addr = "exact" if r.exact_addresses else f"{r.address_mismatches} moved"
        out.append(
            f"{r.label:<{w}} {r.peak_allocated:>16,} {r.peak_reserved:>16,} {r.fragmentation:>14.4f} "
            f"{r.num_device_alloc:>10} {r.num_device_free:>9} {r.ooms:>5} {addr:>10} {r.seconds:>7.2f}s"
        )
    if ref:
        for key, label in (
            ("default_config", "PyTorch measured"),
            ("expandable_segments_True_separate_run", "PyTorch meas. expand."),
        ):
            m = ref.get(key)
            if m:
                out.append(
                    f"{label:<{w}} {m['max_allocated']:>16,} {m['max_reserved']:>16,} "
                    f"{m['max_reserved'] / m['max_allocated']:>14.4f} {m.get('num_device_alloc', ''):>10}"
                )
    return "\n".join(out)


def _unwritable(path: str) -> str | None:
    """Why ``path`` cannot be written, or None: checked before a replay that may take a while."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        return "it is a directory"
    if not os.path.isdir(folder):
        return f"no directory '{folder}'"
    if not os.access(folder, os.W_OK):
        return f"directory '{folder}' is not writable"
    return None


def _cmd_plot(args: argparse.Namespace) -> int:
    if not args.output and not args.html:
        print("strided memory plot: give -o PNG and/or --html HTML", file=sys.stderr)
        return 2
    for path in (args.output, args.html):
        if path and (why := _unwritable(path)):
            print(f"strided memory plot: cannot write '{path}': {why}", file=sys.stderr)
            return 2
    if args.output:
        try:
            import matplotlib  # noqa: F401 - checked before the replay, not after it
        except ImportError:
            print("strided memory plot: -o PNG needs matplotlib (pip install 'strided[plot]'); --html needs "
                  "nothing", file=sys.stderr)
            return 2
    from .viz import html_timelines, plot_timelines

    _, results = _run(args)
    title = os.path.basename(args.trace)
    try:
        if args.output:
            plot_timelines(results, args.output, title)
            print(f"wrote {args.output}")
        if args.html:
            with open(args.html, "w") as f:
                f.write(html_timelines(results, title))
            print(f"wrote {args.html}")
    except OSError as e:
        print(f"strided memory plot: cannot write '{e.filename}': {e.strerror}", file=sys.stderr)
        return 1
    return 0


def _live_groups(blocks: list[dict], format_size, top: int = 5) -> list[str]:
    """A snapshot's allocated blocks grouped as ``strided memory peak`` groups them, largest first."""
    from .peak import LiveAllocation, group_live

    if not blocks:
        return []
    live = [LiveAllocation(b["address"], b.get("requested_size", b["size"]), b["size"], 0, b.get("frames") or [])
            for b in blocks]
    groups = group_live(live)
    by = "source line" if any(a.frames for a in live) else "size"
    out = [f"  live by {by} (largest {min(top, len(groups))} of {len(groups)})"]
    out += [f"    {format_size(g.bytes):>12} in {g.count:>5}  {g.key}" for g in groups[:top]]
    return out


def _cmd_peak(args: argparse.Namespace) -> int:
    from ..utils.progress import Progress
    from .config import AllocatorConfigError
    from .peak import format_peak, peak_breakdown

    if args.top < 1:
        raise SystemExit(f"strided memory peak: --top must be at least 1, got {args.top}")
    snap = _load(args.trace, "peak")
    conf = "" if args.config == "default" else args.config
    events = _events(snap, args.device, "peak")
    with Progress(total=len(events.ops), desc="replaying to the peak", force=args.progress) as bar:
        try:
            report = peak_breakdown(snap, conf, events=events, capacity=int(args.capacity_gb * (1 << 30)),
                                    progress=bar.set)
        except AllocatorConfigError as e:
            raise SystemExit(f"strided memory: bad --config {conf!r}: {e}") from None
    if args.json:
        groups = [{"group": g.key, "count": g.count, "bytes": g.bytes, "requested_sizes": sorted(set(g.sizes))}
                  for g in report.groups()[: args.top]]
        print(json.dumps({"trace": args.trace, "device": report.device, "config": report.config,
                          "peak_allocated": report.peak_allocated, "entry": report.entry,
                          "live_allocations": len(report.live), "grouped_by": "source line"
                          if report.has_frames else "size", "groups": groups}, indent=2))
        return 0
    print(format_peak(report, os.path.basename(args.trace), args.top))
    return 0


def _cmd_tune(args: argparse.Namespace) -> int:
    from ..utils.progress import Progress
    from .config import AllocatorConfigError
    from .tune import GRID, format_tune, tune

    if args.top is not None and args.top < 1:
        raise SystemExit(f"strided memory tune: --top must be at least 1, got {args.top}")
    configs = GRID if not args.config else ["" if c == "default" else c for c in args.config]
    events = _events(_load(args.trace, "tune"), args.device, "tune")
    with Progress(total=len(configs), desc="settings", force=args.progress) as bar:
        try:
            rows = tune(events, configs, capacity=int(args.capacity_gb * (1 << 30)),
                        progress=lambda done, total: bar.set(done), fit=args.fit)
        except AllocatorConfigError as e:
            raise SystemExit(f"strided memory: bad --config: {e}") from None
    if args.json:
        print(json.dumps({"trace": args.trace, "capacity_gb": args.capacity_gb, "ranking": [
            {"config": r.config, "peak_reserved": r.peak_reserved, "peak_allocated": r.peak_allocated,
             "device_allocs": r.device_allocs, "ooms": r.ooms, "pytorch_option": r.pytorch_option,
             "fits_in": r.fits_in}
            for r in rows[: args.top]]}, indent=2))
        return 0
    print(format_tune(os.path.basename(args.trace), rows, args.top))
    return 0


def _cmd_stats(args: argparse.Namespace) -> int:

    try:
        text = summarize_snapshot(_load(args.snapshot, "stats"), os.path.basename(args.snapshot))
    except (KeyError, TypeError, AttributeError) as e:
        raise SystemExit(f"strided memory stats: {args.snapshot!r} is not a well-formed memory snapshot "
                         f"({type(e).__name__}: {e})") from None
    print(text)
    return 0


def summarize_snapshot(snap: dict, name: str = "snapshot") -> str:
    """A readable summary of a snapshot's segments, blocks, trace and settings."""
    from collections import Counter

    from .errors import format_size

    segs = snap.get("segments", [])
    reserved = sum(s["total_size"] for s in segs)
    blocks = [b for s in segs for b in s.get("blocks", [])]
    allocated = sum(b["size"] for b in blocks if b["state"] == "active_allocated")
    requested = sum(b.get("requested_size", b["size"]) for b in blocks if b["state"] == "active_allocated")
    pending = sum(b["size"] for b in blocks if b["state"] in ("active_pending_free", "active_awaiting_free"))
    free = [b["size"] for b in blocks if b["state"] == "inactive"]
    n_small = sum(1 for s in segs if s.get("segment_type") == "small")
    n_expandable = sum(1 for s in segs if s.get("is_expandable"))
    n_allocated = sum(1 for b in blocks if b["state"] == "active_allocated")
    streams = sorted({s["stream"] for s in segs})
    lines = [
        f"{name}",
        f"  segments         {len(segs)} ({n_small} small, {n_expandable} expandable), streams {streams}",
        f"  reserved         {format_size(reserved)} ({reserved:,} bytes)",
        f"  allocated        {format_size(allocated)} in {n_allocated} blocks "
        f"(requested {format_size(requested)})",
        f"  pending free     {format_size(pending)}",
        f"  cached free      {format_size(sum(free))} in {len(free)} blocks, "
        f"largest {format_size(max(free, default=0))}",
    ]
    lines += _live_groups([b for b in blocks if b["state"] == "active_allocated"], format_size)
    traces = snap.get("device_traces") or []
    for dev, trace in enumerate(traces):
        if trace:
            counts = Counter(e["action"] for e in trace)
            lines.append(
                f"  trace device {dev}   {len(trace)} entries: "
                + ", ".join(f"{k} {v}" for k, v in counts.items())
            )
    settings = snap.get("allocator_settings")
    if settings:
        conf = settings.get("PYTORCH_CUDA_ALLOC_CONF", "")
        lines.append(
            f"  settings         {conf!r} expandable_segments={settings.get('expandable_segments')} "
            f"max_split_size={settings.get('max_split_size')}"
        )
    return "\n".join(lines)
