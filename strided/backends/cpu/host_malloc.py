"""glibc's malloc thresholds for the CPU backend's large temporaries (``STRIDED_CPU_MALLOC_TUNING``).

Note [Host malloc thresholds]
NumPy takes every array from ``malloc``. glibc serves a request above ``M_MMAP_THRESHOLD`` (128 KiB at start,
raised on the fly up to 32 MiB) with a fresh ``mmap``, and gives the top of its heap back to the OS past
``M_TRIM_THRESHOLD``; either way the next large array lands on pages the kernel must fault in and zero again.
A CPU kernel that makes several temporaries per call (lerp, the interpolations, the losses) spent most of its
time there: ``lerp`` of two (8, 16, 64, 64) float32 tensors took 5.8 ms, 0.9 ms with the memory kept. At import
the CPU backend sets the mmap threshold to 32 MiB (glibc's own upper bound for the dynamic one) and the trim
threshold to 256 MiB, so freed arrays below 32 MiB are reused from the heap and at most 256 MiB of free heap is
kept from the OS. glibc only (other C libraries and platforms are left alone); ``STRIDED_CPU_MALLOC_TUNING=0``
skips it. The settings are process-wide, as ``MALLOC_MMAP_THRESHOLD_`` / ``MALLOC_TRIM_THRESHOLD_`` in the
environment would make them (those, when set, win: the tuning then does nothing).
"""

from __future__ import annotations

import ctypes
import os
import platform

__all__ = ["tune_host_malloc", "MMAP_THRESHOLD", "TRIM_THRESHOLD"]

MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 256 << 20
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's <malloc.h>


def tune_host_malloc() -> bool:
    """Set glibc's mmap and trim thresholds (Note [Host malloc thresholds]); whether they were set."""
    if os.environ.get("STRIDED_CPU_MALLOC_TUNING", "1") == "0":
        return False
    if any(k in os.environ for k in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")):
        return False  # the user's own glibc tunables
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
