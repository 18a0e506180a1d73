"""``strided.cuda.profiler``: start and stop the CUDA profiler's collection, as ``torch.cuda.profiler``
(for ``nsys profile --capture-range=cudaProfilerApi``)."""

from __future__ import annotations

import contextlib

from ..backends.cuda import driver
from ..backends.cuda.device import current_device

__all__ = ["start", "stop", "profile"]


def start() -> None:
    """Start the profiling tool's data collection (``cuProfilerStart`` on the current device's context)."""
    driver.ensure_context(current_device())
    driver.check(driver.cu().cuProfilerStart())


def stop() -> None:
    """Stop the profiling tool's data collection (``cuProfilerStop``)."""
    driver.ensure_context(current_device())
    driver.check(driver.cu().cuProfilerStop())


@contextlib.contextmanager
def profile():
    """Collect inside the block only: ``with strided.cuda.profiler.profile(): model(x)``."""
    try:
        start()
        yield
    finally:
        stop()
