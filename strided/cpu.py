"""``strided.cpu``: torch.cpu's device-agnostic shims, so code written as
``strided.get_device_module(dev).synchronize()`` or ``with module.stream(module.Stream()):`` runs on the CPU too.

Note [CPU device module]
The CPU has one device and runs each op to completion before the call returns, so its stream does nothing to order
and its events are always complete -- as torch.cpu's, whose docstrings say these "only exist to facilitate
device-agnostic code". ``stream()`` still swaps the current stream, so ``current_stream()`` reports the one selected.
"""

from __future__ import annotations

from contextlib import AbstractContextManager

from .cpu_capabilities import get_capabilities

__all__ = ["Stream", "Event", "StreamContext", "stream", "current_stream", "synchronize", "current_device",
           "device_count", "is_available", "is_initialized", "set_device", "get_capabilities"]


class Stream:
    """The CPU's stream: work is done when a call returns, so there is nothing to wait for (Note [CPU device
    module])."""

    def __init__(self, priority: int = -1) -> None:
        self.priority = priority

    def wait_stream(self, stream) -> None:
        """Nothing to wait for: every CPU op has finished when it returns."""

    def record_event(self) -> None:
        """Nothing to record (torch's returns None too)."""

    def wait_event(self, event) -> None:
        """Nothing to wait for."""


class Event:
    """A CPU event: always complete (Note [CPU device module])."""

    def query(self) -> bool:
        """True: the work before it is done."""
        return True

    def record(self, stream=None) -> None:
        """Nothing to record."""

    def synchronize(self) -> None:
        """Nothing to wait for."""

    def wait(self, stream=None) -> None:
        """Nothing to wait for."""


_default_stream = Stream()
_current_stream = _default_stream


class StreamContext(AbstractContextManager):
    """Select ``stream`` as the current CPU stream inside the block (None: leave it as it is)."""

    def __init__(self, stream):
        self.stream = stream
        self.prev_stream = _default_stream

    def __enter__(self):
        global _current_stream
        if self.stream is not None:
            self.prev_stream = _current_stream
            _current_stream = self.stream

    def __exit__(self, *exc) -> None:
        global _current_stream
        if self.stream is not None:
            _current_stream = self.prev_stream


def stream(stream) -> AbstractContextManager:
    """``StreamContext(stream)``."""
    return StreamContext(stream)


def current_stream(device=None) -> Stream:
    """The current CPU stream (``device`` ignored: there is one CPU device)."""
    return _current_stream


def synchronize(device=None) -> None:
    """Wait for the CPU's work: done already, every op finishes before it returns."""


def current_device() -> str:
    """``"cpu"``."""
    return "cpu"


def device_count() -> int:
    """1: strided sees the CPU as one device."""
    return 1


def is_available() -> bool:
    """True."""
    return True


def is_initialized() -> bool:
    """True: the CPU needs no initialization."""
    return True


def set_device(device) -> None:
    """Nothing to set: there is one CPU device."""
