"""``Compare``: Measurements laid out as torch.utils.benchmark.Compare's table -- one table per label, a row per
sub_label (grouped by thread count), a column per description, medians in one unit; optionally trimmed to
their significant figures, colored best-to-worst, and flagged where the spread is wide."""

from __future__ import annotations

import math
from collections import defaultdict

from .common import Measurement, ordered_unique, select_unit, trim_sigfig, unit_to_english

__all__ = ["Compare"]

BEST, GOOD, BAD, VERY_BAD = "\033[92m", "\033[34m", "\033[2m\033[91m", "\033[31m"
BOLD, TERMINATE = "\033[1m", "\033[0m"


def _color(segment: str, value: float, best: float) -> str:
    if value <= best * 1.01 or value <= best + 100e-9:
        return BEST + BOLD + segment + TERMINATE * 2
    if value <= best * 1.1:
        return GOOD + BOLD + segment + TERMINATE * 2
    if value >= best * 5:
        return VERY_BAD + BOLD + segment + TERMINATE * 2
    if value >= best * 2:
        return BAD + segment + TERMINATE * 2
    return segment


class _Column:
    """One description's cells: a number format wide enough for the column, as torch's."""

    def __init__(self, results: list, scale: float, trim: bool, highlight: bool):
        present = [r for r in results if r is not None]
        self.highlight = highlight and any(r.has_warnings for r in present)
        self.trim = trim
        digits = [int(math.ceil(math.log10(r.median / scale))) for r in present]
        decimals = min(max(r.significant_figures - d, 0) for d, r in zip(digits, present)) if trim else 1
        width = max(digits) + decimals + (1 if decimals else 0)
        self.template = f"{{:>{width}.{decimals}f}}{{:>{7 if self.highlight else 0}}}"

    def cell(self, value: float | None, sigfigs: int, spread: float | None) -> str:
        if value is None:
            return " " * len(self.cell(1, sigfigs, None))
        if self.trim:
            value = trim_sigfig(value, sigfigs)
        return self.template.format(value, f" (! {spread * 100:.0f}%)" if self.highlight and spread is not None
                                    else "")


def _table(results: list, colorize: str, trim: bool, highlight: bool) -> str:
    unit, scale = select_unit(min(r.median for r in results))
    row_keys = ordered_unique((r.num_threads, r.env, r.as_row_name) for r in results)
    row_keys.sort(key=lambda k: (k[0], k[1]))  # by threads and env, statements in first-seen order
    col_keys = ordered_unique(r.description for r in results)
    grid = [[None] * len(col_keys) for _ in row_keys]
    rpos, cpos = {k: i for i, k in enumerate(row_keys)}, {k: j for j, k in enumerate(col_keys)}
    for r in results:
        grid[rpos[(r.num_threads, r.env, r.as_row_name)]][cpos[r.description]] = r
    envs = {r.env for r in results}
    render_env = len(envs) > 1
    env_len = max(len(e) for e in envs) if render_env else 0
    columns = [_Column([row[j] for row in grid], scale, trim, highlight) for j in range(len(col_keys))]
    strings = [[""] + [c or "" for c in col_keys]]
    prior_env = None
    for (_, env, name), row in zip(row_keys, grid):
        env_str = (f"({env})" if render_env and env != prior_env else "").ljust(env_len + 4)
        prior_env = env
        cells = ["  " + env_str + name]
        for m, col in zip(row, columns):
            cells.append(col.cell(None if m is None else m.median / scale, 1 if m is None else m.significant_figures,
                                  m.iqr / m.median if m is not None and m.has_warnings else None))
        strings.append(cells)
    widths = [max(len(s[i]) for s in strings) for i in range(len(strings[0]))]
    lines = ["  |  ".join(s.center(w) for s, w in zip(strings[0], widths))]
    overall = len(lines[0])
    prior_threads = None
    for (threads, _, _), cells, row in zip(row_keys, strings[1:], grid):
        if threads != prior_threads:
            lines.append(f"{threads} threads: ".ljust(overall, "-"))
            prior_threads = threads
        best = [None] * len(row)
        present = [m.median for m in row if m is not None]
        if colorize == "rowwise":
            best = [min(present)] * len(row)
        elif colorize == "columnwise":
            best = [min((g[j].median for g, k in zip(grid, row_keys) if k[0] == threads and g[j] is not None),
                        default=None) for j in range(len(row))]
        out = [cells[0].ljust(widths[0])]
        for s, w, m, b in zip(cells[1:], widths[1:], row, best):
            s = s.center(w)
            out.append(_color(s, m.median, b) if colorize != "none" and m is not None and b is not None else s)
        lines.append("  |  ".join(out))
    warn = highlight and any(r.has_warnings for r in results)
    label = results[0].label
    return (f"[{(' ' + (label or '') + ' ').center(overall - 2, '-')}]\n" + "\n".join(lines) + "\n\n"
            + f"Times are in {unit_to_english(unit)}s ({unit}).\n"
            + ("(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n" if warn else ""))


class Compare:
    """A table of Measurements: ``Compare(results).print()``, or ``str(...)``."""

    def __init__(self, results: list):
        self._results: list = []
        self.extend_results(results)
        self._trim = False
        self._colorize = "none"
        self._highlight = False

    def extend_results(self, results) -> None:
        for r in results:
            if not isinstance(r, Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        self._trim = True

    def colorize(self, rowwise: bool = False) -> None:
        self._colorize = "rowwise" if rowwise else "columnwise"

    def highlight_warnings(self) -> None:
        self._highlight = True

    def __str__(self) -> str:
        groups: defaultdict = defaultdict(list)
        for r in Measurement.merge(self._results):
            groups[r.label].append(r)
        return "\n".join(_table(g, self._colorize, self._trim, self._highlight) for g in groups.values())

    def print(self) -> None:
        print(str(self))
