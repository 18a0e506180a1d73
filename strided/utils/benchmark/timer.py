"""``Timer``: time a Python statement as torch.utils.benchmark.Timer does -- warm-up, replicates in blocks sized
so the timer's own cost is negligible, the CUDA device synchronized before each reading, one CPU thread
unless asked otherwise.

::

    from strided.utils.benchmark import Timer
    t = Timer("a @ b", globals={"a": a, "b": b}, label="mm", description="cuda")
    print(t.blocked_autorange(min_run_time=0.5))     # Median, IQR, replicates
"""

from __future__ import annotations

import enum
import statistics
import textwrap
import timeit
from collections.abc import Callable

from .common import Measurement, TaskSpec, set_num_threads

__all__ = ["Timer", "timer", "Language"]


def timer() -> float:
    """``time.perf_counter()`` after the current CUDA device finishes its queued work (when there is a GPU)."""
    from ... import cuda

    if cuda.is_available() and cuda.is_initialized():
        cuda.synchronize()
    return timeit.default_timer()


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


class Timer:
    """Time ``stmt`` (a string of Python) after ``setup``, with names from ``globals`` (``strided`` is always
    there). ``label`` / ``sub_label`` / ``description`` / ``env`` name the result; ``Compare`` lays out rows
    by sub_label and columns by description."""

    def __init__(self, stmt: str = "pass", setup: str = "pass", global_setup: str = "",
                 timer: Callable[[], float] = timer, globals: dict | None = None, label: str | None = None,
                 sub_label: str | None = None, description: str | None = None, env: str | None = None,
                 num_threads: int = 1, language: Language | str = Language.PYTHON):
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language in (Language.CPP, "cpp", "c++"):
            raise ValueError("Timer(language='c++'): strided has no C++ API to time")
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Invalid language `{language}`.")
        if global_setup:
            raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely this code can simply be "
                             "moved to `setup`.")
        if globals is not None and not isinstance(globals, dict):
            raise TypeError(f"Timer(): globals must be a dict of names, got {type(globals).__name__}")
        if not isinstance(num_threads, int) or num_threads < 1:
            raise ValueError(f"Timer(): num_threads must be a positive int, got {num_threads!r}")
        import strided

        self._globals = dict(globals or {})
        self._globals.setdefault("strided", strided)
        stmt = textwrap.dedent(stmt)
        stmt = (stmt[1:] if stmt and stmt[0] == "\n" else stmt).rstrip()
        setup = textwrap.dedent(setup)
        setup = (setup[1:] if setup and setup[0] == "\n" else setup).rstrip()
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = TaskSpec(stmt=stmt, setup=setup, label=label, sub_label=sub_label,
                                   description=description, env=env, num_threads=num_threads)

    def _timeit(self, number: int) -> float:
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number: int = 1000000) -> Measurement:
        """Run ``stmt`` ``number`` times (after a warm-up of number / 100): one replicate."""
        with set_num_threads(self._task_spec.num_threads):
            self._timeit(max(int(number // 100), 2))
            return Measurement(number_per_run=number, raw_times=[self._timeit(number)], task_spec=self._task_spec)

    def _estimate_block_size(self, min_run_time: float) -> int:
        with set_num_threads(self._task_spec.num_threads):
            overhead = statistics.median(self._timeit(0) for _ in range(5))
            number = 1
            while True:
                taken = self._timeit(number)
                if (overhead / taken <= 1e-4 and taken >= min_run_time / 1000) or taken > min_run_time:
                    break
                if number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def _measure(self, number, stop, min_run_time, max_run_time=None, callback=None) -> list:
        total, times, can_stop = 0.0, [], False
        with set_num_threads(self._task_spec.num_threads):
            while total < min_run_time or not can_stop:
                spent = self._timeit(number)
                times.append(spent)
                total += spent
                if callback:
                    callback(number, spent)
                can_stop = stop(times)
                if max_run_time and total > max_run_time:
                    break
        return times

    def blocked_autorange(self, callback: Callable | None = None, min_run_time: float = 0.2) -> Measurement:
        """Replicates of a block of runs (sized so that reading the timer costs < 0.01% of a block) until
        ``min_run_time`` seconds have been spent."""
        number = self._estimate_block_size(min_run_time)
        times = self._measure(number, lambda times: True, min_run_time, callback=callback)
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01, max_run_time: float = 10.0,
                           callback: Callable | None = None) -> Measurement:
        """As :meth:`blocked_autorange`, going on until IQR / median < ``threshold`` (or ``max_run_time``)."""
        number = self._estimate_block_size(min_run_time=0.05)

        def stop(times) -> bool:
            return len(times) > 3 and Measurement(number, times, self._task_spec).meets_confidence(threshold)

        times = self._measure(number, stop, min_run_time, max_run_time, callback)
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def repeat(self, repeat: int = -1, number: int = -1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")
