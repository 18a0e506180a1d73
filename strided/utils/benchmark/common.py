"""What a benchmark measured: ``TaskSpec`` (the statement and its labels) and ``Measurement`` (the times, their
median / IQR / significant figures, and torch's ``repr``), as torch.utils.benchmark.utils.common."""

from __future__ import annotations

import contextlib
import dataclasses
import math
import textwrap
from collections import defaultdict
from collections.abc import Iterable, Iterator

import numpy as np

__all__ = ["TaskSpec", "Measurement", "select_unit", "unit_to_english", "trim_sigfig", "ordered_unique",
           "set_num_threads"]

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9  # 25 ns
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """The statement timed and the labels that name it (everything of a Timer but its globals)."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        if "\n" not in self.stmt:
            return self.stmt + (f": {self.sub_label}" if self.sub_label else "")
        return f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self) -> str:
        if self.setup == "pass" or not self.setup:
            return ""
        return f"setup:\n{textwrap.indent(self.setup, '  ')}" if "\n" in self.setup else f"setup: {self.setup}"

    def summarize(self) -> str:
        sections = [self.title, self.description or "", self.setup_str()]
        return "\n".join(f"{s}\n" if "\n" in s else s for s in sections if s)


_TASKSPEC_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


def select_unit(t: float) -> tuple[str, float]:
    """The unit that shows ``t`` seconds with O(1) digits, and its scale."""
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(math.log10(t) // 3), "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[unit]


def unit_to_english(u: str) -> str:
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x: float, n: int) -> float:
    """``x`` to ``n`` significant figures (3.14159, 2 -> 3.1)."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    scale = 10 ** (int(math.ceil(math.log10(abs(x)))) - n)
    return float(np.round(x / scale) * scale)


def ordered_unique(elements: Iterable) -> list:
    return list(dict.fromkeys(elements))


@contextlib.contextmanager
def set_num_threads(n: int) -> Iterator[None]:
    """strided's CPU thread count set to ``n`` for the block (torch's ``set_torch_threads``)."""
    from ...backends.cpu import threads

    before = threads.get_num_threads()
    threads.set_num_threads(n)
    try:
        yield
    finally:
        threads.set_num_threads(before)


@dataclasses.dataclass(repr=False)
class Measurement:
    """Replicates of one statement's time: ``raw_times[i]`` is the time of ``number_per_run`` executions."""

    number_per_run: int
    raw_times: list
    task_spec: TaskSpec
    metadata: dict | None = None

    def __post_init__(self) -> None:
        self._sorted_times: tuple = ()
        self._warnings: tuple = ()
        self._median = self._mean = self._p25 = self._p75 = -1.0

    def __getattr__(self, name: str):
        if name in _TASKSPEC_FIELDS:  # the TaskSpec's fields, forwarded
            return getattr(self.task_spec, name)
        return super().__getattribute__(name)

    @property
    def times(self) -> list:
        """Seconds per execution of the statement, one per replicate."""
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self) -> float:
        self._lazy_init()
        return self._median

    @property
    def mean(self) -> float:
        self._lazy_init()
        return self._mean

    @property
    def iqr(self) -> float:
        self._lazy_init()
        return self._p75 - self._p25

    @property
    def significant_figures(self) -> int:
        """A rough estimate of the digits the interquartile spread supports (for ``Compare``)."""
        self._lazy_init()
        n = len(self._sorted_times)
        middle = self._sorted_times[n // 4:int(math.ceil(3 * n / 4))]
        std = float(np.std(middle))
        ci = max(1.645 * std / math.sqrt(len(middle)), _MIN_CONFIDENCE_INTERVAL)
        return min(max(int(math.floor(math.log10(self._median / ci))), 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self) -> bool:
        self._lazy_init()
        return bool(self._warnings)

    def _lazy_init(self) -> None:
        if self.raw_times and not self._sorted_times:
            self._sorted_times = tuple(sorted(self.times))
            arr = np.array(self._sorted_times, dtype=np.float64)
            self._median = float(np.quantile(arr, 0.5))
            self._mean = float(arr.mean())
            self._p25, self._p75 = float(np.quantile(arr, 0.25)), float(np.quantile(arr, 0.75))
            rel = self.iqr / self._median * 100
            if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD):
                self._warnings = (f"  WARNING: Interquartile range is {rel:.1f}% of the median measurement.\n"
                                  "           This suggests significant environmental influence.",)
            elif not self.meets_confidence(_IQR_WARN_THRESHOLD):
                self._warnings = (f"  WARNING: Interquartile range is {rel:.1f}% of the median measurement.\n"
                                  "           This could indicate system fluctuation.",)

    def meets_confidence(self, threshold: float = _IQR_WARN_THRESHOLD) -> bool:
        return self.iqr / self.median < threshold

    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def env(self) -> str:
        return "Unspecified env" if self.task_spec.env is None else self.task_spec.env

    @property
    def as_row_name(self) -> str:
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self) -> str:
        self._lazy_init()
        n = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        lines = [object.__repr__(self), self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}"]
        if n >= 4:
            lo, hi = self._p25 / scale, self._p75 / scale
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({lo:.2f} to {hi:.2f})")
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {self.num_threads} thread"
                     f"{'s' if self.num_threads > 1 else ''}")
        lines += list(self._warnings)
        return "\n".join(line for line in "\n".join(lines).strip().splitlines())

    @staticmethod
    def merge(measurements: Iterable[Measurement]) -> list[Measurement]:
        """Replicates of the same task pooled into one Measurement each (times per execution, metadata dropped)."""
        grouped: defaultdict = defaultdict(list)
        for m in measurements:
            grouped[m.task_spec].append(m)
        return [Measurement(1, [t for m in group for t in m.times], spec) for spec, group in grouped.items()]
