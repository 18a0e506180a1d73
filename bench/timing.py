"""Timing shared by the side-by-side benchmarks: ms per call of ``fn``, by CUDA events on a GPU (host overhead
included) or by the host clock on the CPU, and the median over repeats."""

from __future__ import annotations

import statistics
import time


def timer(lib, device, steady=False):
    """``timed(fn, n)``: ms per call over ``n`` back-to-back calls of ``fn`` in ``lib`` (torch or strided). On CUDA,
    ``steady`` queues one call before the start event (Note [From idle and steady state] in bench_optim.py)."""
    if device == "cpu":
        def timed(fn, n):
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            return (time.perf_counter() - t0) * 1e3 / n
        return timed
    ev = lib.cuda.Event

    def timed(fn, n):
        start, end = ev(enable_timing=True), ev(enable_timing=True)
        if steady:
            fn()
        start.record()
        for _ in range(n):
            fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / n
    return timed


def median(timed, fn, n, reps, warmup=2):
    """The median of ``reps`` timings of ``n`` calls, after ``warmup`` untimed calls."""
    for _ in range(warmup):
        fn()
    return statistics.median(timed(fn, n) for _ in range(reps))
