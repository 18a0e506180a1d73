"""Synchronization debug mode: warn or raise when an operation makes the host wait for a CUDA stream.

Note [Synchronizing calls]
A host-device synchronization stalls the Python thread until the GPU drains its queue, so a training
loop that synchronizes once per step runs at the speed of the slower side instead of overlapping
both. torch's ``set_sync_debug_mode`` finds these calls; this is the same switch with the same sites
(c10/cuda/CUDAFunctions.h ``memcpy_and_sync`` and ``stream_synchronize``):

* a blocking copy between host and device (``.cpu()``, ``.to("cuda")`` from host memory,
  ``copy_`` with ``non_blocking=False``), and a device-to-host copy into a layout the copy engine
  cannot write directly;
* reading a value to the host: ``.item()``, ``bool(t)`` / ``float(t)``, printing, and the ops whose
  output size depends on the data (``nonzero``, ``masked_select``, boolean indexing, ``unique``...);
* ``Stream.synchronize()``.

Not counted, as in torch: ``strided.cuda.synchronize()`` and ``Event.synchronize()`` (asked for by
name), the caching allocator's own waits (an out-of-memory retry, ``empty_cache``), and the kernel
fault check of ``CUDA_LAUNCH_BLOCKING=1``. A non-blocking copy from pageable host memory is not
counted either: the driver returns once it has read the host buffer, and nothing waits for the
stream. All of strided's synchronizing calls go through :func:`stream_synchronize`, so the mode
sees every one of them; a GPT training step (forward, backward, fused AdamW) makes none.
"""

from __future__ import annotations

import os
import sys
import warnings

from . import index_errors
from .driver import check, cu

__all__ = ["set_sync_debug_mode", "get_sync_debug_mode", "stream_synchronize", "warn_or_error_on_sync"]

_MODES = {"default": 0, "warn": 1, "error": 2}
_MESSAGE = "called a synchronizing CUDA operation"
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep


class _Mode:
    """The process-wide mode (0 off, 1 warn, 2 error); an attribute read on every synchronizing call."""

    __slots__ = ("level",)

    def __init__(self):
        self.level = 0


MODE = _Mode()


def set_sync_debug_mode(debug_mode: int | str) -> None:
    """Warn (``"warn"`` or 1) or raise (``"error"`` or 2) on synchronizing CUDA operations; ``"default"``
    or 0 turns the check off (Note [Synchronizing calls])."""
    if isinstance(debug_mode, str):
        if debug_mode not in _MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`")
        debug_mode = _MODES[debug_mode]
    if isinstance(debug_mode, bool) or not isinstance(debug_mode, int):
        raise RuntimeError(
            f"invalid argument to set_sync_debug_mode, debug_mode type is {type(debug_mode).__name__}")
    if not 0 <= debug_mode <= 2:
        raise RuntimeError("invalid value of debug_mode, expected one of 0,1,2")
    MODE.level = int(debug_mode)


def get_sync_debug_mode() -> int:
    """The current synchronization debug mode: 0 (off), 1 (warn) or 2 (error)."""
    return MODE.level


def warn_or_error_on_sync() -> None:
    """Report a synchronizing call as the mode asks (nothing when it is off)."""
    level = MODE.level
    if level == 2:
        raise RuntimeError(_MESSAGE)
    if level == 1:
        warnings.warn(_MESSAGE, UserWarning, stacklevel=_user_stacklevel())


def stream_synchronize(stream: int, device_index: int, report_index_errors: bool = True) -> None:
    """Wait for ``stream`` of device ``device_index`` (current context); the sync debug mode sees the call.

    Then any index error a kernel reported meanwhile is raised (Note [Deferred index errors]), except
    after a host-to-device copy (``report_index_errors=False``): the copy succeeded, and the error
    waits for the next read of the device's results."""
    if MODE.level:
        warn_or_error_on_sync()
    check(cu().cuStreamSynchronize(stream))
    if report_index_errors:
        index_errors.raise_pending(device_index)


def _user_stacklevel() -> int:
    """The stack level of the first frame outside strided, so a warning names the caller's line."""
    frame, level = sys._getframe(2), 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level
