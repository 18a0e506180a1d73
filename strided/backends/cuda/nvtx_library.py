"""The NVTX library (NVIDIA Tools Extension), loaded with ctypes on first use.

Note [NVTX library]
NVTX 3 is a header-only C API: each call goes through a function table that stays empty (every call a
no-op) until a tool such as Nsight Systems attaches through ``NVTX_INJECTION64_PATH``. Python cannot
compile the headers, so strided calls a shared library built from them: ``libnvtx3interop.so.1`` of the
``nvidia-nvtx`` wheel (CUDA 13; installed alongside PyTorch's CUDA wheels), or the older
``libnvToolsExt.so.1`` (the CUDA 12 wheel, or a CUDA toolkit). Both export the classic entry points
(``nvtxRangePushA``...), with the same results as ``torch._C._nvtx``: without a tool attached, push and
pop answer -2 (``NVTX_NO_PUSH_POP_TRACKING``). Nothing here needs a GPU or initializes CUDA.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading

__all__ = ["library", "library_path", "NvtxNotInstalled"]

_NAMES = ("libnvtx3interop.so.1", "libnvToolsExt.so.1")
_WHEEL_DIRS = (("cu13", "lib"), ("nvtx", "lib"))  # nvidia-nvtx (CUDA 13), nvidia-nvtx-cu12
_lock = threading.Lock()
_lib = None
_path: str | None = None


class NvtxNotInstalled(RuntimeError):
    """No NVTX library was found (torch's words: "NVTX functions not installed")."""


def _candidates() -> list[str]:
    out = []
    try:
        import nvidia  # the namespace package of NVIDIA's wheels

        roots = list(nvidia.__path__)
    except ImportError:
        roots = []
    for root in roots:
        for sub in _WHEEL_DIRS:
            for name in _NAMES:
                out.append(os.path.join(root, *sub, name))
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home:
            out += [os.path.join(home, "lib64", name) for name in _NAMES]
    for short in ("nvtx3interop", "nvToolsExt"):
        found = ctypes.util.find_library(short)
        if found:
            out.append(found)
    return out


def _declare(lib) -> None:
    c = ctypes
    lib.nvtxRangePushA.argtypes, lib.nvtxRangePushA.restype = [c.c_char_p], c.c_int
    lib.nvtxRangePop.argtypes, lib.nvtxRangePop.restype = [], c.c_int
    lib.nvtxRangeStartA.argtypes, lib.nvtxRangeStartA.restype = [c.c_char_p], c.c_uint64
    lib.nvtxRangeEnd.argtypes, lib.nvtxRangeEnd.restype = [c.c_uint64], None
    lib.nvtxMarkA.argtypes, lib.nvtxMarkA.restype = [c.c_char_p], None


def library():
    """The loaded NVTX library (a ``ctypes.CDLL`` with its entry points declared).

    Raises
    ------
    NvtxNotInstalled
        When neither library is found.
    """
    global _lib, _path
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is None:
            tried = []
            for path in _candidates():
                if os.sep in path and not os.path.exists(path):
                    continue
                tried.append(path)
                try:
                    lib = ctypes.CDLL(path)
                    _declare(lib)
                except (OSError, AttributeError):
                    continue
                _lib, _path = lib, path
                break
            else:
                raise NvtxNotInstalled(
                    "NVTX functions not installed. strided.cuda.nvtx needs libnvtx3interop.so.1 (pip install "
                    "nvidia-nvtx) or libnvToolsExt.so.1 (a CUDA toolkit); "
                    + (f"none of {tried} loaded" if tried else "none was found"))
    return _lib


def library_path() -> str | None:
    """Where the loaded library came from (None before the first NVTX call or when none is found)."""
    return _path
