"""Stream-capture state shared by the allocator, the kernels and CUDA graphs.

How many captures are underway (hot paths test one int), the capture modes, relaxing this thread's
mode around calls a global-mode capture forbids, whether a stream is capturing, and finalizers that
must wait until no capture is underway. :mod:`.graphs` begins and ends the captures.

Note [Finalizers during capture]
The garbage collector can run finalizers inside a capture. One that makes a call a global-mode
capture forbids (a graph's reset, raw memory's ``cuCtxSynchronize`` + ``cuMemFree``, a MemPool's release
and ``empty_cache``, a pinned block's free recording events on the streams that used it, the legacy stream
among them; an event's destruction) would invalidate the capture of unrelated work, so such finalizers go
through :func:`run_or_defer`: queued while any capture is underway, run when the last one ends.
"""

from __future__ import annotations

import warnings

from . import driver
from .driver import check, cu

__all__ = ["captures_underway", "underway", "run_or_defer", "run_deferred", "capture_mode", "capture_status",
           "CAPTURE_ACTIVE", "relaxed_capture_mode", "is_current_stream_capturing", "stream_is_capturing"]

_MODES = ("global", "thread_local", "relaxed")
CAPTURE_ACTIVE = 1  # CU_STREAM_CAPTURE_STATUS_ACTIVE


class _Count:
    __slots__ = ("n",)

    def __init__(self):
        self.n = 0


underway = _Count()  # captures underway in this process (hot paths test this one int)


def captures_underway() -> int:
    """How many stream captures strided has begun and not ended (in any thread)."""
    return underway.n


_deferred: list = []  # (fn, args) of finalizers queued during a capture (Note [Finalizers during capture])


def run_or_defer(fn, *args) -> None:
    """``fn(*args)`` now, or after the last capture ends if one is underway (Note [Finalizers during capture])."""
    if underway.n:
        _deferred.append((fn, args))
    else:
        fn(*args)


def run_deferred() -> None:
    """Run the queued finalizers, unless a capture is still underway."""
    while _deferred and not underway.n:
        fn, args = _deferred.pop(0)
        try:
            fn(*args)
        except Exception as e:  # noqa: BLE001 - a finalizer's failure must not fail the capture's end
            warnings.warn(f"a finalizer deferred past a CUDA graph capture failed: {type(e).__name__}: {e}",
                          RuntimeWarning, stacklevel=2)


def capture_mode(name: str):
    """The driver's capture mode for ``"global"``, ``"thread_local"`` or ``"relaxed"``."""
    if name not in _MODES:
        raise ValueError(f"capture_error_mode must be one of {list(_MODES)}, got {name!r}")
    return getattr(cu().CUstreamCaptureMode, "CU_STREAM_CAPTURE_MODE_" + name.upper())


def capture_status(stream: int) -> tuple[int, int]:
    """(status, capture id) of ``stream``."""
    r = cu().cuStreamGetCaptureInfo(stream)
    check(r[:1])
    return int(r[1]), int(r[2])


class relaxed_capture_mode:  # noqa: N801 - a context manager, like torch's
    """Relax this thread's capture mode while inside (c10 wraps cudaMalloc in it during capture)."""

    __slots__ = ("prev",)

    def __enter__(self):
        self.prev = None
        if underway.n:
            relaxed = cu().CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED
            self.prev = check(cu().cuThreadExchangeStreamCaptureMode(relaxed))
        return self

    def __exit__(self, *exc):
        if self.prev is not None:
            check(cu().cuThreadExchangeStreamCaptureMode(self.prev))
        return False


def is_current_stream_capturing() -> bool:
    """True when the current stream of the current device is being captured."""
    if not driver.is_initialized():
        return False
    from .device import current_device
    from .streams import current_stream_handle

    i = current_device()
    driver.ensure_context(i)
    s = current_stream_handle(i)
    if s == 0:
        return False  # the legacy default stream cannot be captured
    return int(check(cu().cuStreamIsCapturing(s))) == CAPTURE_ACTIVE


def stream_is_capturing(stream: int) -> bool:
    """True when ``stream`` (a raw handle on the current context's device) is being captured."""
    return bool(stream) and int(check(cu().cuStreamIsCapturing(stream))) == CAPTURE_ACTIVE
