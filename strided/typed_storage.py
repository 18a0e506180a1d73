"""``TypedStorage``: torch's deprecated typed view of a tensor's storage (``Tensor.storage()``).

Code written before torch 2.0 reaches for ``x.storage()`` to read its size, address or elements. As in torch
the typed storage is the whole ``UntypedStorage`` read as elements of one dtype (from byte 0, whatever the
tensor's offset), it shares the memory (writes are seen by every tensor over it), and asking for one warns
once that it is deprecated in favour of ``untyped_storage()``.
"""

from __future__ import annotations

import warnings

from . import dtypes as _dt
from .storage import UntypedStorage

__all__ = ["TypedStorage", "warn_typed_storage_removal"]

_DEPRECATION = ("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only "
                "storage class. This should only matter to you if you are using storages directly.  To access "
                "UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()")
_warned = [False]


def warn_typed_storage_removal(stacklevel: int = 3) -> None:
    """torch's deprecation warning, once per process."""
    if not _warned[0]:
        _warned[0] = True
        warnings.warn(_DEPRECATION, UserWarning, stacklevel=stacklevel)


class TypedStorage:
    """A storage read as elements of ``dtype``: ``size()``, ``data_ptr()``, ``storage[i]``, ``tolist()``."""

    __slots__ = ("_untyped_storage", "dtype")

    def __init__(self, *, wrap_storage: UntypedStorage, dtype: _dt.dtype):
        if not isinstance(wrap_storage, UntypedStorage):
            raise TypeError("TypedStorage(): wrap_storage must be an UntypedStorage, got "
                            f"{type(wrap_storage).__name__}")
        if not isinstance(dtype, _dt.dtype):
            raise TypeError(f"TypedStorage(): dtype must be a strided.dtype, got {type(dtype).__name__}")
        self._untyped_storage = wrap_storage
        self.dtype = dtype

    @property
    def device(self):
        return self._untyped_storage.device

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    def size(self) -> int:
        return self._untyped_storage.nbytes() // self.dtype.itemsize

    __len__ = size

    def element_size(self) -> int:
        return self.dtype.itemsize

    def nbytes(self) -> int:
        return self._untyped_storage.nbytes()

    def data_ptr(self) -> int:
        return self._untyped_storage.data_ptr()

    def untyped(self) -> UntypedStorage:
        return self._untyped_storage

    def is_pinned(self, device="cuda") -> bool:
        return self._untyped_storage.is_pinned()

    def _flat(self):
        """The elements as a 1-D tensor over the same memory."""
        from .tensor import make_tensor

        return make_tensor(self._untyped_storage, 0, (self.size(),), (1,), self.dtype)

    def _index(self, idx) -> int:
        if isinstance(idx, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        if isinstance(idx, bool) or not isinstance(idx, int):
            raise TypeError(f"can't index a {type(self).__name__} with {type(idx).__name__}")
        n = self.size()
        i = idx + n if idx < 0 else idx
        if not 0 <= i < n:
            raise IndexError(f"index {idx} out of range for storage of size {n}")
        return i

    def __getitem__(self, idx):
        return self._flat()[self._index(idx)].item()

    def __setitem__(self, idx, value) -> None:
        self._flat()[self._index(idx)] = value

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self) -> list:
        return self._flat().tolist()

    def fill_(self, value) -> TypedStorage:
        self._flat().fill_(value)
        return self

    def __repr__(self) -> str:
        body = "\n".join(f" {v}" for v in self.tolist()) if self.device.type != "meta" else " ..."
        return (f"{body}\n[strided.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of size "
                f"{self.size()}]")
