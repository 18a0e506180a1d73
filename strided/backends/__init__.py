"""Backends: Meta (shapes only), CPU (NumPy) and CUDA; each fills its dispatch key's kernel table.

``allocate(nbytes, device)`` is the one place a kernel gets memory for an output: it asks the
storage allocator of the device's type. CPU and Meta are always there; the CUDA backend adds its
caching-allocator-backed allocator when it is first used.
"""

from __future__ import annotations

from ..storage import UntypedStorage, allocate_cpu, allocate_meta

__all__ = ["allocate", "register_allocator", "STORAGE_ALLOCATORS"]


def _cpu(nbytes: int, device, pin_memory: bool = False) -> UntypedStorage:
    if pin_memory:
        from .cuda_loader import pinned_allocate

        return pinned_allocate(nbytes)
    return allocate_cpu(nbytes)


def _meta(nbytes: int, device, pin_memory: bool = False) -> UntypedStorage:
    return allocate_meta(nbytes)


def _cuda(nbytes: int, device, pin_memory: bool = False) -> UntypedStorage:
    from .cuda_loader import cuda_allocate

    return cuda_allocate(nbytes, device)


STORAGE_ALLOCATORS = {"cpu": _cpu, "meta": _meta, "cuda": _cuda}


def register_allocator(device_type: str, fn) -> None:
    """Replace the storage allocator for a device type (the CUDA backend registers its own)."""
    STORAGE_ALLOCATORS[device_type] = fn


def allocate(nbytes: int, device, pin_memory: bool = False) -> UntypedStorage:
    """Fresh storage of ``nbytes`` bytes on ``device`` (uninitialized)."""
    return STORAGE_ALLOCATORS[device.type](nbytes, device, pin_memory)
