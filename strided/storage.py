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
from .dispatch.state import grad_mode, inference_threads

__all__ = ["UntypedStorage"]

# Note [Inference tensors]
# As in torch, a tensor made inside ``inference_mode`` is an inference tensor, and so is every view of
# it, while a view made there of a normal tensor stays normal: inference-ness belongs to the memory, so
# it is a flag of the storage, set when the storage is made. Outside inference mode an inference tensor
# may be read but not written in place (the dispatcher checks before each in-place kernel), saved for
# backward (SavedTensor checks), or made to require grad; it has no version counter.

# Note [Shared CPU memory]
# ``share_memory_()`` moves a CPU storage into an anonymous shared mapping (``mmap``, MAP_SHARED) and
# swaps it in place, so every view of the tensor sees the new memory. A process forked afterwards
# (``multiprocessing`` with the "fork" start method, Linux's default before Python 3.14) maps the same
# pages: what either side writes, the other reads -- the Hogwild pattern of ``model.share_memory()``
# then ``Process(target=train, args=(model,))``. Unlike torch, strided sends no shared-memory handles
# through pickling, so processes started with "spawn" or "forkserver" get copies. A shared storage
# cannot grow (``resize_`` refuses, as torch's does for memory it does not own).

# Note [Lazy CPU address]
# Reading an ndarray's address (``.ctypes.data``) costs ~1.5 µs, three times NumPy's allocation
# itself, and CPU kernels never need it: they work on the buffer. So a CPU storage fills in its
# address on the first ``data_ptr()`` call. NumPy's allocator aligns buffers to at least 16 bytes
# (64 with its huge-page path for large arrays), which its SIMD loops rely on.


class UntypedStorage:
    """Bytes on a device: ``nbytes()``, ``device``, ``data_ptr()``."""

    __slots__ = ("_nbytes", "device", "_data_ptr", "owner", "buffer", "allocator", "_version", "inference",
                 "__weakref__")

    def __init__(self, nbytes: int, device: device, data_ptr: int, owner=None, buffer=None,
                 allocator: str = ""):
        self._nbytes = nbytes
        self.device = device
        self._data_ptr = data_ptr
        self.owner = owner
        self.buffer = buffer
        self.allocator = allocator
        self._version = 0  # bumped by every in-place op on a tensor over this storage (autograd)
        self.inference = inference_threads.n > 0 and grad_mode.inference  # Note [Inference tensors]

    def nbytes(self) -> int:
        return self._nbytes

    def size(self) -> int:
        return self._nbytes

    def data_ptr(self) -> int:
        ptr = self._data_ptr
        if ptr is None:  # CPU memory: the address is read from NumPy only when asked (Note [Lazy CPU address])
            ptr = self._data_ptr = self.buffer.ctypes.data if self._nbytes else 0
        return ptr

    def share_memory_(self) -> UntypedStorage:
        """Move CPU memory into shared memory, in place (every view follows; Note [Shared CPU memory]).
        CUDA memory and memory already shared are left as they are."""
        if self.device.type == "cuda" or self.allocator in ("shared", "file"):
            return self
        if self.device.type != "cpu":
            raise RuntimeError("_share_fd_: only available on CPU")
        import mmap

        n = self._nbytes
        region = mmap.mmap(-1, max(n, 1))  # anonymous and MAP_SHARED: forked processes see one memory
        buf = np.frombuffer(region, dtype=np.uint8, count=n)
        if n:
            buf[:] = self.buffer[:n]
        self.buffer, self.owner, self._data_ptr, self.allocator = buf, region, None, "shared"
        return self

    def is_shared(self) -> bool:
        """Whether the memory is shared between processes (CUDA memory always is, as torch reports)."""
        return self.allocator in ("shared", "file") or self.device.type == "cuda"  # a mapped file: as torch's

    @staticmethod
    def from_file(filename, shared: bool = False, nbytes: int = 0) -> UntypedStorage:
        """A CPU storage of ``nbytes`` bytes backed by the memory-mapped file ``filename`` (torch's
        ``UntypedStorage.from_file``; Note [Memory-mapped files] in ``mapped_files.py``)."""
        from .mapped_files import storage_from_file

        return storage_from_file(filename, shared, nbytes)

    def is_pinned(self, device="cuda") -> bool:
        """Whether this is page-locked host memory (torch's method; ``device`` is accepted as torch's)."""
        return self.allocator == "pinned"

    def __repr__(self) -> str:
        return f"UntypedStorage(nbytes={self._nbytes}, device='{self.device}', data_ptr={self.data_ptr():#x})"


def allocate_cpu(nbytes: int) -> UntypedStorage:
    """A fresh, uninitialized CPU storage of ``nbytes`` bytes (address read lazily)."""
    try:
        buf = np.empty(nbytes, dtype=np.uint8)
    except MemoryError:  # torch's CPU allocator's words and type (NumPy's MemoryError names an array shape)
        raise RuntimeError(f"DefaultCPUAllocator: not enough memory: you tried to allocate {nbytes} bytes.") from None
    return UntypedStorage(nbytes, CPU, None, owner=buf, buffer=buf, allocator="cpu")


def allocate_meta(nbytes: int) -> UntypedStorage:
    """A meta storage: a size and no memory."""
    return UntypedStorage(nbytes, META, 0, allocator="meta")


class _HostBytes:
    """``nbytes`` bytes at ``data_ptr`` as NumPy's array interface: a byte view of memory another array owns.
    (A ctypes array type per size, ``c_uint8 * nbytes``, would be a new class -- a reference cycle left to the
    garbage collector -- for every size wrapped.)"""

    __slots__ = ("__array_interface__", "owner")

    def __init__(self, owner, data_ptr: int, nbytes: int):
        self.__array_interface__ = {"data": (data_ptr, False), "shape": (nbytes,), "typestr": "|u1", "version": 3}
        self.owner = owner


def wrap_host_memory(array: np.ndarray, nbytes: int, data_ptr: int) -> UntypedStorage:
    """A CPU storage over existing host memory (zero-copy); ``array`` keeps the memory alive."""
    return UntypedStorage(nbytes, CPU, data_ptr, owner=array, buffer=host_byte_view(array, data_ptr, nbytes),
                          allocator="numpy")


def host_byte_view(owner, data_ptr: int, nbytes: int) -> np.ndarray:
    """A uint8 array over ``nbytes`` of host memory at ``data_ptr`` that ``owner`` keeps alive (zero-copy)."""
    if nbytes == 0:
        return np.empty(0, dtype=np.uint8)
    return np.asarray(_HostBytes(owner, data_ptr, nbytes))
