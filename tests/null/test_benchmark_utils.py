"""strided.utils.benchmark against torch.utils.benchmark: Measurement statistics and repr, Compare's tables
(trimmed, colored, with warnings) from the same raw times, and Timer's replicates and errors."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided.utils import benchmark as sb

torch = pytest.importorskip("torch")
tb = pytest.importorskip("torch.utils.benchmark")

RNG = np.random.default_rng(0)
CASES = [  # (label, sub_label, description, number_per_run, raw times)
    ("add", "100", "cpu", 1000, list(1e-3 * (1 + 0.02 * RNG.standard_normal(12)))),
    ("add", "100", "cuda", 1000, list(4e-3 * (1 + 0.3 * RNG.standard_normal(9)))),
    ("add", "10000", "cpu", 100, list(2.5e-3 * (1 + 0.01 * RNG.standard_normal(20)))),
    ("add", "10000", "cuda", 100, [7e-4]),
    ("mul", "100", "cpu", 10, list(3e-2 * (1 + 0.12 * RNG.standard_normal(6)))),
]


def _measurements(lib):
    out = []
    for label, sub, desc, n, times in CASES:
        spec = lib.TaskSpec(stmt="x + x", setup="pass", label=label, sub_label=sub, description=desc)
        out.append(lib.Measurement(n, list(times), spec))
    return out


def _tail(text: str) -> str:
    return "\n".join(text.splitlines()[1:])  # the first line is the object's address


def test_measurements_match_torch():
    from torch.utils.benchmark.utils.common import Measurement as TM
    from torch.utils.benchmark.utils.common import TaskSpec as TS

    class T:  # torch's classes under the names the helper uses
        Measurement, TaskSpec = TM, TS

    for ours, theirs in zip(_measurements(sb), _measurements(T)):
        assert ours.median == pytest.approx(theirs.median, rel=1e-12)
        assert ours.mean == pytest.approx(theirs.mean, rel=1e-12)
        assert ours.iqr == pytest.approx(theirs.iqr, rel=1e-9, abs=1e-18)
        assert ours.significant_figures == theirs.significant_figures
        assert ours.has_warnings == theirs.has_warnings and ours.title == theirs.title
        assert _tail(repr(ours)) == _tail(repr(theirs))


@pytest.mark.parametrize("style", ["plain", "trim", "colorize", "rowwise", "warnings"])
def test_compare_tables_match_torch(style):
    from torch.utils.benchmark.utils.common import Measurement as TM
    from torch.utils.benchmark.utils.common import TaskSpec as TS

    class T:
        Measurement, TaskSpec = TM, TS

    tables = []
    for compare, lib in ((sb.Compare, sb), (tb.Compare, T)):
        c = compare(_measurements(lib))
        if style == "trim":
            c.trim_significant_figures()
        elif style == "colorize":
            c.colorize()
        elif style == "rowwise":
            c.colorize(rowwise=True)
        elif style == "warnings":
            c.highlight_warnings()
        tables.append(str(c))
    assert tables[0] == tables[1]


def test_timer_measures_and_refuses_as_torch():
    x = st.ones(64)
    t = sb.Timer("x + x", globals={"x": x}, label="add", description="cpu")
    m = t.blocked_autorange(min_run_time=0.02)
    assert m.number_per_run >= 1 and len(m.raw_times) >= 1 and 0 < m.median < 1
    assert m.title == "add" and m.description == "cpu"
    one = t.timeit(50)
    assert one.number_per_run == 50 and len(one.raw_times) == 1
    a = sb.Timer("strided.ones(4).sum()").adaptive_autorange(min_run_time=0.01, max_run_time=0.5)
    assert len(a.raw_times) >= 1
    with pytest.raises(ValueError, match="Currently only a `str` stmt is supported."):
        sb.Timer(lambda: 1)
    with pytest.raises(ValueError, match="global_setup is C\\+\\+ only"):
        sb.Timer("pass", global_setup="x = 1")
    with pytest.raises(TypeError, match=r"Timer\(\): globals must be a dict of names, got int"):
        sb.Timer("x", globals=3)
    with pytest.raises(ValueError, match="Expected an instance of `Measurement`"):
        sb.Compare([1])
    with pytest.raises(NotImplementedError, match="See `Timer.blocked_autorange.`"):
        t.repeat()
