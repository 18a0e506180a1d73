"""``strided.cuda.nvtx``: NVTX ranges and marks for Nsight Systems, as ``torch.cuda.nvtx``.

The calls go to the NVTX library (Note [NVTX library]); without a tool attached they do nothing and
``range_push`` / ``range_pop`` answer -2, as torch's. ``strided.autograd.profiler.emit_nvtx()`` opens one
range per operator call with these.
"""

from __future__ import annotations

from contextlib import contextmanager

from ..backends.cuda.nvtx_library import library

__all__ = ["range_push", "range_pop", "range_start", "range_end", "mark", "range"]


def _message(msg, fn: str) -> bytes:
    if not isinstance(msg, str):
        raise TypeError(f"{fn}(): argument 'msg' must be str, not {type(msg).__name__}")
    return msg.encode()


def range_push(msg: str) -> int:
    """Push a range onto this thread's stack of nested ranges; returns its zero-based depth (-2 when no
    tool records ranges)."""
    return library().nvtxRangePushA(_message(msg, "range_push"))


def range_pop() -> int:
    """Pop this thread's innermost range; returns the zero-based depth of the range ended (-2 when no tool
    records ranges)."""
    return library().nvtxRangePop()


def range_start(msg: str) -> int:
    """Start a range that may end on another thread; returns its handle for :func:`range_end`."""
    return library().nvtxRangeStartA(_message(msg, "range_start"))


def range_end(range_id: int) -> None:
    """End the range that :func:`range_start` returned ``range_id`` for."""
    if isinstance(range_id, bool) or not isinstance(range_id, int) or not 0 <= range_id < 1 << 64:
        raise TypeError(f"range_end(): argument 'range_id' must be a handle from range_start(), got {range_id!r}")
    library().nvtxRangeEnd(range_id)


def mark(msg: str) -> None:
    """An instantaneous event with a message."""
    library().nvtxMarkA(_message(msg, "mark"))


@contextmanager
def range(msg: str, *args, **kwargs):  # noqa: A001 (torch's name)
    """Context manager / decorator: a range around its block; extra arguments go to ``msg.format()``."""
    range_push(_message(msg, "range").decode().format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
