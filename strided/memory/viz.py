"""Pictures of replays: a matplotlib PNG, or a self-contained HTML page (inline SVG, no scripts).

Both draw, per config, reserved (solid) and allocated (dashed) bytes after every allocator
operation of the trace.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from .replay import ReplayResult

__all__ = ["plot_timelines", "html_timelines", "downsample_max"]

GIB = float(1 << 30)
_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]


def downsample_max(values: Sequence[int], points: int) -> tuple[list[int], list[int]]:
    """At most ``points`` (x, y) pairs keeping each bucket's maximum, so peaks stay visible."""
    n = len(values)
    if n <= points:
        return list(range(n)), list(values)
    step = n / points
    xs, ys = [], []
    for k in range(points):
        lo, hi = int(k * step), max(int((k + 1) * step), int(k * step) + 1)
        chunk = values[lo:hi]
        m = max(chunk)
        xs.append(lo + chunk.index(m))
        ys.append(m)
    return xs, ys


def plot_timelines(results: Sequence[ReplayResult], path: str, title: str = "") -> None:
    """Write a PNG of allocated and reserved over time for each replay (needs matplotlib)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise RuntimeError("plotting needs matplotlib: pip install 'strided[plot]'") from e
    fig, ax = plt.subplots(figsize=(11, 5.5), dpi=110)
    for k, r in enumerate(results):
        color = _COLORS[k % len(_COLORS)]
        xs, ys = downsample_max(r.reserved_timeline, 4000)
        ax.plot(
            xs,
            [y / GIB for y in ys],
            color=color,
            lw=1.3,
            label=f"{r.label}: reserved (peak {r.peak_reserved / GIB:.2f} GiB)",
        )
        xs, ys = downsample_max(r.allocated_timeline, 4000)
        ax.plot(
            xs, [y / GIB for y in ys], color=color, lw=0.9, ls="--", alpha=0.8, label=f"{r.label}: allocated"
        )
    ax.set_xlabel("allocator operation (malloc / free) in trace order")
    ax.set_ylabel("GiB")
    ax.set_title(title or "allocator replay")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def html_timelines(results: Sequence[ReplayResult], title: str = "") -> str:
    """A self-contained HTML page (inline SVG and a table; no scripts, no network)."""
    w, h, pad = 1000, 420, 50
    top = max((max(r.reserved_timeline or [0]) for r in results), default=1) or 1
    n = max((len(r.reserved_timeline) for r in results), default=1) or 1

    def poly(values: Sequence[int], color: str, dash: str) -> str:
        xs, ys = downsample_max(values, 1500)
        pts = " ".join(
            f"{pad + x * (w - 2 * pad) / max(n - 1, 1):.1f},{h - pad - y * (h - 2 * pad) / top:.1f}"
            for x, y in zip(xs, ys)
        )
        return f'<polyline fill="none" stroke="{color}" stroke-width="1.4" {dash} points="{pts}"/>'

    lines, legend, rows = [], [], []
    for k, r in enumerate(results):
        c = _COLORS[k % len(_COLORS)]
        lines.append(poly(r.reserved_timeline, c, ""))
        lines.append(poly(r.allocated_timeline, c, 'stroke-dasharray="4 3"'))
        legend.append(
            f'<text x="{pad + 10}" y="{pad + 16 * k}" fill="{c}" font-size="12">{html.escape(r.label)}: '
            f"reserved solid, allocated dashed</text>"
        )
        rows.append(
            f"<tr><td>{html.escape(r.label)}</td><td><code>{html.escape(r.config or '(none)')}</code></td>"
            f"<td>{r.peak_allocated:,}</td><td>{r.peak_reserved:,}</td><td>{r.fragmentation:.4f}</td>"
            f"<td>{r.num_device_alloc}</td><td>{r.num_device_free}</td><td>{r.ooms}</td></tr>"
        )
    ticks = []
    for k in range(5):
        v = top * k / 4
        y = h - pad - v * (h - 2 * pad) / top
        ticks.append(
            f'<line x1="{pad}" x2="{w - pad}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>'
            f'<text x="4" y="{y + 4:.1f}" font-size="11">{v / GIB:.1f} GiB</text>'
        )
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif">'
        + "".join(ticks)
        + "".join(lines)
        + "".join(legend)
        + f'<text x="{w / 2}" y="{h - 10}" font-size="12" text-anchor="middle">'
        + "allocator operation in trace order</text>"
        + "</svg>"
    )
    title = html.escape(title or "allocator replay")
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{title}</title>"
        "<style>body{font-family:sans-serif;margin:2em}td,th{padding:2px 10px;text-align:right}"
        "td:first-child,th:first-child{text-align:left}</style></head><body>"
        f"<h2>{title}</h2>{svg}<table><tr><th>config</th><th>settings</th><th>peak allocated</th>"
        "<th>peak reserved</th><th>reserved/allocated</th><th>device allocs</th><th>device frees</th>"
        f"<th>OOMs</th></tr>{''.join(rows)}</table></body></html>\n"
    )
