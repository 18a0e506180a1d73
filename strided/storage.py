"""``UntypedStorage``: a run of bytes on a device, owned by the allocator that made it.

Note [Storage ownership]
A storage never frees memory itself. It holds an ``owner`` object whose lifetime *is* the
allocation: a NumPy array for CPU memory, an allocator block handle for CUDA memory (its
finalizer returns the block to the caching allocator), or nothing for meta tensors. Views share
the storage object, so the memory lives until the last view dies. ``buffer`` is the host-visible
NumPy ``uint8`` array for CPU (and pinned) memory, and ``None`` elsewhere.
"""

from __future__ import annotations

import numpy as np

from .device import CPU, META, device

__all__ = ["UntypedStorage"]

CPU_ALIGNMENT = 64  # bytes; matches c10's alignment for CPU allocations (gAlignment = 64)


class UntypedStorage:
    """Bytes on a device: ``nbytes()``, ``device``, ``data_ptr()``."""

    __slots__ = ("_nbytes", "device", "_data_ptr", "owner", "buffer", "allocator", "__weakref__")

    def __init__(self, nbytes: int, device: device, data_ptr: int, owner=None, buffer=None,
                 allocator: str = ""):
        self._nbytes = nbytes
        self.device = device
        self._data_ptr = data_ptr
        self.owner = owner
        self.buffer = buffer
        self.allocator = allocator

    def nbytes(self) -> int:
        return self._nbytes

    def size(self) -> int:
        return self._nbytes

    def data_ptr(self) -> int:
        return self._data_ptr

    @property
    def is_pinned(self) -> bool:
        return self.allocator == "pinned"

    def __repr__(self) -> str:
        return f"UntypedStorage(nbytes={self._nbytes}, device='{self.device}', data_ptr={self._data_ptr:#x})"


def allocate_cpu(nbytes: int) -> UntypedStorage:
    """A fresh, 64-byte aligned, uninitialized CPU storage of ``nbytes`` bytes."""
    raw = np.empty(nbytes + CPU_ALIGNMENT, dtype=np.uint8)
    start = (-raw.ctypes.data) % CPU_ALIGNMENT
    buf = raw[start:start + nbytes]
    return UntypedStorage(nbytes, CPU, buf.ctypes.data, owner=raw, buffer=buf, allocator="cpu")


def allocate_meta(nbytes: int) -> UntypedStorage:
    """A meta storage: a size and no memory."""
    return UntypedStorage(nbytes, META, 0, allocator="meta")


def wrap_host_memory(array: np.ndarray, nbytes: int, data_ptr: int) -> UntypedStorage:
    """A CPU storage over existing host memory (zero-copy); ``array`` keeps the memory alive."""
    import ctypes

    if nbytes == 0:
        buf = np.empty(0, dtype=np.uint8)
    else:
        buf = np.frombuffer((ctypes.c_uint8 * nbytes).from_address(data_ptr), dtype=np.uint8)
    return UntypedStorage(nbytes, CPU, data_ptr, owner=array, buffer=buf, allocator="numpy")
