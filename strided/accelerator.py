"""``strided.accelerator``: torch.accelerator's device-agnostic API, over strided's one accelerator, CUDA.

Code written against ``torch.accelerator`` (PyTorch 2.6 and later) runs with ``strided`` in its place::

    dev = strided.accelerator.current_accelerator(check_available=True) or strided.device("cpu")
    model.to(dev)
    strided.accelerator.synchronize()
    strided.accelerator.max_memory_allocated()

Note [The current accelerator]
torch reports the accelerator its build was compiled for, even on a machine with no GPU, and
``check_available=True`` turns that into None. strided's CUDA backend is Python, so "compiled for"
becomes "the CUDA bindings are installed": with cuda-bindings and no GPU, ``current_accelerator()``
is ``device("cuda")`` and ``current_accelerator(check_available=True)`` is None, as in a CUDA build of
torch. Calls that need a device raise torch's "Cannot access accelerator device when none is
available." without touching the driver; the memory queries answer zero / empty before the device
allocates, as ``strided.cuda``'s do.
"""

from __future__ import annotations

import importlib.util
from collections import OrderedDict
from functools import cache

from .device import device as _device

__all__ = [
    "current_accelerator", "current_device_idx", "current_device_index", "current_stream", "device_count",
    "device_index", "empty_cache", "empty_host_cache", "get_device_capability", "get_memory_info",
    "is_available", "max_memory_allocated", "max_memory_reserved", "memory_allocated", "memory_reserved",
    "memory_stats", "reset_accumulated_memory_stats", "reset_peak_memory_stats", "set_device_idx",
    "set_device_index", "set_stream", "synchronize",
]

_NONE_AVAILABLE = "Cannot access accelerator device when none is available."


@cache
def _cuda_backend_present() -> bool:
    """Whether strided's CUDA backend can load (Note [The current accelerator]); never initializes CUDA."""
    try:
        return importlib.util.find_spec("cuda.bindings") is not None
    except (ImportError, ValueError):
        return False


def _cuda():
    from . import cuda

    return cuda


def is_available() -> bool:
    """True when a CUDA GPU can be used (never raises, never creates a context)."""
    return _cuda_backend_present() and _cuda().is_available()


def device_count() -> int:
    """Number of accelerator devices; 0 when none is available."""
    return _cuda().device_count() if _cuda_backend_present() else 0


def current_accelerator(check_available: bool = False):
    """``device("cuda")`` when strided's CUDA backend is installed (and, with ``check_available``, a GPU is
    present); None otherwise. The index is None: :func:`current_device_index` gives it."""
    if not _cuda_backend_present() or (check_available and not is_available()):
        return None
    return _device("cuda")


def _require():
    if not is_available():
        raise RuntimeError(_NONE_AVAILABLE)
    return _cuda()


def _index(dev, optional: bool = True) -> int:
    """torch.accelerator's ``_get_device_index``: an int, or a device of the accelerator's type."""
    if isinstance(dev, bool):
        raise TypeError(f"Expected a device index or a device, but got: {dev!r}")
    if isinstance(dev, int):
        return dev
    if dev is None:
        if not optional:
            raise ValueError(f"Expected a device with a specified index or an integer, but got:{dev}")
        return current_device_index()
    d = _device(dev) if isinstance(dev, str) else dev
    if not isinstance(d, _device):
        raise TypeError(f"Expected a device index or a device, but got: {type(dev).__name__}")
    acc = current_accelerator()
    if acc is None:
        raise RuntimeError("Accelerator expected")
    if d.type != acc.type:
        raise ValueError(f"{d.type} doesn't match the current accelerator {acc}.")
    if d.index is None:
        if not optional:
            raise ValueError(f"Expected a device with a specified index or an integer, but got:{d}")
        return current_device_index()
    return d.index


def current_device_index() -> int:
    """This thread's current device index."""
    return _require().current_device()


def set_device_index(device, /) -> None:
    """Make ``device`` (an index or a ``cuda`` device) this thread's current device."""
    _require().set_device(_index(device, optional=False))


current_device_idx = current_device_index  # torch's deprecated names
set_device_idx = set_device_index


class device_index:  # noqa: N801 - torch's name
    """Context manager: ``with strided.accelerator.device_index(1):`` (None switches nothing)."""

    def __init__(self, device: int | None, /) -> None:
        self.idx = device
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.idx is not None:
            cuda = _require()
            self.prev_idx = cuda.current_device()
            cuda.set_device(self.idx)

    def __exit__(self, *exc_info: object) -> None:
        if self.idx is not None:
            _cuda().set_device(self.prev_idx)


def get_device_capability(device=None, /) -> dict:
    """``{"supported_dtypes": set of dtypes}`` a tensor of the device can hold and convert between."""
    _require()
    _index(device)
    from . import dtypes as dt

    return {"supported_dtypes": set(dt.all_dtypes + dt.complex_dtypes)}


def current_stream(device=None, /):
    """This thread's current stream on ``device`` (a :class:`strided.cuda.Stream`)."""
    return _require().current_stream(_index(device))


def set_stream(stream) -> None:
    """Make ``stream`` the current stream of its device (and that device the current device)."""
    cuda = _require()
    if not isinstance(stream, cuda.Stream):
        raise TypeError(f"set_stream(): expected a strided.cuda.Stream, got {type(stream).__name__}")
    cuda.set_device(stream.device_index)
    cuda.set_stream(stream)


def synchronize(device=None, /) -> None:
    """Wait for all work on ``device`` (the current device when None)."""
    _require().synchronize(_index(device))


def empty_cache() -> None:
    """Return the caching allocator's unused cached memory to the driver (no-op before first use)."""
    if is_available():
        _cuda().empty_cache()


def empty_host_cache() -> None:
    """Free the pinned host memory cached by the host allocator."""
    if is_available():
        _cuda().empty_host_cache()


def memory_stats(device_index=None, /) -> OrderedDict:
    """The caching allocator's flattened statistics (torch's keys); empty before the device allocates."""
    if not is_available():
        return OrderedDict()
    return _cuda().memory_stats(_index(device_index))


def memory_allocated(device_index=None, /) -> int:
    return memory_stats(device_index).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device_index=None, /) -> int:
    return memory_stats(device_index).get("allocated_bytes.all.peak", 0)


def memory_reserved(device_index=None, /) -> int:
    return memory_stats(device_index).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device_index=None, /) -> int:
    return memory_stats(device_index).get("reserved_bytes.all.peak", 0)


def reset_accumulated_memory_stats(device_index=None, /) -> None:
    if is_available():
        _cuda().reset_accumulated_memory_stats(_index(device_index))


def reset_peak_memory_stats(device_index=None, /) -> None:
    if is_available():
        _cuda().reset_peak_memory_stats(_index(device_index))


def get_memory_info(device_index=None, /) -> tuple[int, int]:
    """``(free, total)`` bytes of the device."""
    return _require().mem_get_info(_index(device_index))
