"""``strided.from_file`` and ``UntypedStorage.from_file``: CPU tensors and storages backed by a memory-mapped file.

Note [Memory-mapped files]
As torch's MapAllocator: the file's first bytes are mapped with ``mmap`` -- ``shared=True`` maps them MAP_SHARED
read-write, creating the file or extending it to the size needed, so writes reach the file and every process that
maps it; ``shared=False`` (or None) maps them MAP_PRIVATE (copy on write), so the tensor can be written but the
file never changes, and the file must already hold the bytes. The mapping is the storage's owner: it lives as long
as any view of it, and the file may be renamed or deleted meanwhile. Such storages report ``is_shared()`` (torch's
do, in both modes) and cannot be resized. A size of 0 maps nothing. Only CPU tensors map files, and they cannot be
pinned, in torch's words.
"""

from __future__ import annotations

import mmap
import os

import numpy as np

__all__ = ["from_file", "storage_from_file"]


def storage_from_file(filename, shared: bool = False, nbytes: int = 0):
    """A CPU ``UntypedStorage`` of ``nbytes`` bytes mapped from ``filename`` (Note [Memory-mapped files])."""
    from .device import CPU
    from .storage import UntypedStorage

    filename = os.fspath(filename)
    nbytes = int(nbytes)
    if nbytes < 0:
        raise RuntimeError(f"unable to mmap {nbytes} bytes from file <{filename}>: the size must be non-negative")
    shared = bool(shared)
    mode = "read-write" if shared else "read-only"
    try:
        fd = os.open(filename, (os.O_RDWR | os.O_CREAT) if shared else os.O_RDONLY, 0o666)
    except OSError as e:
        raise RuntimeError(f"unable to open file <{filename}> in {mode} mode: {e.strerror} ({e.errno})") from None
    try:
        size = os.fstat(fd).st_size
        if size < nbytes:
            if not shared:
                raise RuntimeError(f"file <{filename}> size <{size}> is smaller than the required mapping size "
                                   f"<{nbytes}>")
            os.ftruncate(fd, nbytes)
        if nbytes == 0:
            buf = np.empty(0, dtype=np.uint8)
            return UntypedStorage(0, CPU, 0, owner=buf, buffer=buf, allocator="file")
        region = mmap.mmap(fd, nbytes, access=mmap.ACCESS_WRITE if shared else mmap.ACCESS_COPY)
    finally:
        os.close(fd)
    buf = np.frombuffer(region, dtype=np.uint8, count=nbytes)
    return UntypedStorage(nbytes, CPU, None, owner=region, buffer=buf, allocator="file")


def from_file(filename, shared: bool | None = None, size: int = 0, *, dtype=None, layout=None, device=None,
              pin_memory: bool = False, requires_grad: bool = False):
    """A 1-D CPU tensor of ``size`` elements of ``dtype`` backed by a memory-mapped file: ``shared=True`` writes
    through to the file (creating or extending it), otherwise changes stay private (Note [Memory-mapped files])."""
    from . import dtypes as dt
    from .device import device as _device
    from .dispatch.argument_checks import check_args
    from .factories import empty

    if not isinstance(filename, (str, os.PathLike)):  # torch takes str; a path too here
        raise TypeError(f"from_file(): argument 'filename' (position 1) must be str, not {type(filename).__name__}")
    check_args("from_file", ("shared", None, shared, "bool?"), ("size", None, size, "int"))
    d = dt.get_default_dtype() if dtype is None else dt.to_dtype(dtype)
    if layout not in (None, "strided"):
        raise RuntimeError(f"from_file(): only the strided layout is supported, got {layout!r}")
    if device is not None and _device(device).type != "cpu":
        raise RuntimeError(f"from_file: only CPU tensors can be mapped to files, got device '{_device(device)}'")
    if pin_memory:
        raise RuntimeError("tensors constructed from a file cannot be pinned")
    n = int(size)
    storage = storage_from_file(filename, bool(shared), n * d.itemsize)
    t = empty(0, dtype=d).set_(storage, 0, (n,), (1,))
    return t.requires_grad_(requires_grad) if requires_grad else t
