"""``get_num_threads`` / ``set_num_threads``: the thread count of the BLAS library NumPy runs on.

Note [BLAS thread control]
The CPU matrix kernels (mm, bmm, addmm, baddbmm, hence matmul and linear) run NumPy's matmul,
i.e. the BLAS library NumPy loaded: OpenBLAS in NumPy's wheels (built with a symbol prefix and
suffix, e.g. ``scipy_openblas_set_num_threads64_`` in ``libscipy_openblas64_-*.so``), MKL in conda
builds, sometimes BLIS. We find the loaded library through ``ctypes`` without new dependencies:
the shared objects mapped into this process (``/proc/self/maps`` on Linux), else the libraries
bundled next to NumPy (``numpy.libs``, ``numpy/.libs``, ``numpy/.dylibs``), opened with
``RTLD_NOLOAD`` so that we only ever talk to the copy NumPy uses. Its own setter/getter is then
the source of truth. When no controllable library is found (Apple Accelerate, an unknown BLAS),
``set_num_threads`` only records the value and ``get_num_threads`` returns it: a clear, documented
fallback rather than environment variables that a library already loaded would never read.

Note [No inter-op pool]
torch keeps a second pool for inter-op parallelism (``torch.jit.fork``); strided runs ops one at a time on
the calling thread and has no such pool. ``set_num_interop_threads`` / ``get_num_interop_threads`` keep the
setting with torch's rules -- a positive int, settable once -- and the default torch reports (the logical
core count), so scripts that tune it run unchanged; it changes nothing here.
"""

from __future__ import annotations

import ctypes
import dataclasses
import glob
import os
import re

__all__ = ["get_num_threads", "set_num_threads", "get_num_interop_threads", "set_num_interop_threads",
           "blas_library", "BlasLibrary"]

# (kind, setter base name, getter base name); names get the prefixes/suffixes below.
_APIS = (
    ("openblas", "openblas_set_num_threads", "openblas_get_num_threads"),
    ("mkl", "MKL_Set_Num_Threads", "MKL_Get_Max_Threads"),
    ("blis", "bli_thread_set_num_threads", "bli_thread_get_num_threads"),
)
_PREFIXES = ("", "scipy_")
_SUFFIXES = ("", "64_", "_64", "_64_", "64")
_LIBRARY_NAME = re.compile(r"(openblas|mkl_rt|libmkl|blis)[^/]*\.(so[.\d]*|dylib|dll)$", re.IGNORECASE)


@dataclasses.dataclass(frozen=True)
class BlasLibrary:
    """A loaded BLAS whose thread count we control (``strided.backends.cpu.threads.blas_library()``)."""

    kind: str  # "openblas", "mkl" or "blis"
    path: str
    set_symbol: str
    get_symbol: str
    _set: object = dataclasses.field(repr=False, compare=False)
    _get: object = dataclasses.field(repr=False, compare=False)

    def set_num_threads(self, n: int) -> None:
        self._set(n)

    def get_num_threads(self) -> int:
        return int(self._get())


_UNSET = object()
_library = _UNSET
_num_threads: int | None = None


def _candidate_paths() -> list[str]:
    """Shared objects that look like a BLAS: mapped into this process first, then NumPy's own."""
    import numpy  # noqa: F401 - NumPy loads its BLAS when its core extension is imported

    found = []
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            for line in f:
                start = line.find("/")
                path = line[start:].rstrip("\n") if start >= 0 else ""
                if path and _LIBRARY_NAME.search(path) and path not in found:
                    found.append(path)
    except OSError:
        pass
    root = os.path.dirname(os.path.dirname(numpy.__file__))
    for pattern in ("numpy.libs/*", "numpy/.libs/*", "numpy/.dylibs/*"):
        for path in sorted(glob.glob(os.path.join(root, pattern))):
            if _LIBRARY_NAME.search(path) and path not in found:
                found.append(path)
    return found


def _open(path: str):
    mode = getattr(os, "RTLD_NOLOAD", 0) | getattr(os, "RTLD_LOCAL", 0)
    try:
        return ctypes.CDLL(path, mode=mode)
    except OSError:
        return None  # not loaded in this process (RTLD_NOLOAD) or not loadable


def _resolve(lib, path: str) -> BlasLibrary | None:
    for kind, set_name, get_name in _APIS:
        for prefix in _PREFIXES:
            for suffix in _SUFFIXES:
                setter = getattr(lib, prefix + set_name + suffix, None)
                getter = getattr(lib, prefix + get_name + suffix, None)
                if setter is not None and getter is not None:
                    setter.argtypes, setter.restype = [ctypes.c_int], None
                    getter.argtypes, getter.restype = [], ctypes.c_int
                    return BlasLibrary(kind, path, prefix + set_name + suffix, prefix + get_name + suffix,
                                       setter, getter)
    return None


def blas_library() -> BlasLibrary | None:
    """The BLAS library whose threads ``set_num_threads`` controls, or None (Note [BLAS thread control])."""
    global _library
    if _library is _UNSET:
        _library = None
        for path in _candidate_paths():
            lib = _open(path)
            found = _resolve(lib, path) if lib is not None else None
            if found is not None:
                _library = found
                break
    return _library


def get_num_threads() -> int:
    """The number of threads the CPU matrix kernels use (torch.get_num_threads)."""
    lib = blas_library()
    if lib is not None:
        return lib.get_num_threads()
    return _num_threads if _num_threads is not None else (os.cpu_count() or 1)


def set_num_threads(n: int) -> None:
    """Set the number of threads the CPU matrix kernels use (torch.set_num_threads)."""
    global _num_threads
    if not isinstance(n, int) or isinstance(n, bool):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    lib = blas_library()
    if lib is not None:
        lib.set_num_threads(n)
    _num_threads = n


_num_interop_threads: int | None = None


def get_num_interop_threads() -> int:
    """The inter-op thread count torch would use (torch.get_num_interop_threads; Note [No inter-op pool])."""
    return _num_interop_threads if _num_interop_threads is not None else (os.cpu_count() or 1)


def set_num_interop_threads(n: int) -> None:
    """Set the inter-op thread count, once (torch.set_num_interop_threads; Note [No inter-op pool])."""
    global _num_interop_threads
    if not isinstance(n, int) or isinstance(n, bool):
        raise RuntimeError(f"set_num_interop_threads expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    if _num_interop_threads is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has started "
                           "or set_num_interop_threads called")
    _num_interop_threads = n
