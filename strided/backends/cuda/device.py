"""Devices: the current device (per thread), names, properties and synchronization."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import cache

from . import driver, index_errors
from .driver import check, cu

__all__ = ["current_device", "set_device", "device", "get_device_name", "get_device_properties",
           "get_device_capability", "synchronize", "DeviceProperties", "mem_get_info"]


class _DeviceTLS(threading.local):
    index = 0  # this thread's current device (Note [Thread-local defaults] in streams.py)


_tls = _DeviceTLS()


def _index(d) -> int:
    """A device index from None (current), an int, "cuda", "cuda:N" or a strided.device."""
    if d is None:
        return current_device()
    if isinstance(d, int) and not isinstance(d, bool):
        return d
    from ...device import device as _device

    dev = _device(d)
    if dev.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {dev}")
    return current_device() if dev.index is None else dev.index


def current_device() -> int:
    """Index of this thread's current CUDA device (0 until ``set_device``)."""
    return _tls.index


def set_device(device) -> None:  # torch's parameter name, here and below
    """Make ``device`` this thread's current device (its context is created on first use); without a usable
    GPU this raises, as torch's does, and a negative index does nothing."""
    i = _index(device)
    if i < 0:
        return
    driver.require()
    if not 0 <= i < driver.device_count():
        raise RuntimeError(f"CUDA error: invalid device ordinal {i}")
    _tls.index = i


class device:  # noqa: N801 - torch.cuda.device
    """Context manager that changes the current device (``with strided.cuda.device(1): ...``)."""

    def __init__(self, device):
        self.idx = -1 if device is None else _index(device)
        self.prev = -1

    def __enter__(self):
        self.prev = current_device()
        if self.idx >= 0:
            set_device(self.idx)
        return self

    def __exit__(self, *exc):
        if self.idx >= 0:
            _tls.index = self.prev
        return False


@dataclass(frozen=True)
class DeviceProperties:
    """``cudaDeviceProp`` fields that torch's ``_CudaDeviceProperties`` exposes."""

    name: str
    major: int
    minor: int
    total_memory: int
    multi_processor_count: int
    L2_cache_size: int  # noqa: N815 - torch's spelling
    max_threads_per_multi_processor: int
    shared_memory_per_block_optin: int
    warp_size: int
    pci_bus_id: int

    def __repr__(self) -> str:
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // (1 << 20)}MB, "
                f"multi_processor_count={self.multi_processor_count}, "
                f"L2_cache_size={self.L2_cache_size // (1 << 20)}MB)")


@cache
def _props(i: int) -> DeviceProperties:
    driver.require()
    d = cu()
    dev = check(d.cuDeviceGet(i))
    name = check(d.cuDeviceGetName(256, dev))
    name = name.split(b"\0", 1)[0].decode()
    a = driver.attribute
    return DeviceProperties(
        name=name, major=a("COMPUTE_CAPABILITY_MAJOR", i), minor=a("COMPUTE_CAPABILITY_MINOR", i),
        total_memory=int(check(d.cuDeviceTotalMem(dev))),
        multi_processor_count=a("MULTIPROCESSOR_COUNT", i), L2_cache_size=a("L2_CACHE_SIZE", i),
        max_threads_per_multi_processor=a("MAX_THREADS_PER_MULTIPROCESSOR", i),
        shared_memory_per_block_optin=a("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", i),
        warp_size=a("WARP_SIZE", i), pci_bus_id=a("PCI_BUS_ID", i),
    )


def get_device_properties(device=None) -> DeviceProperties:
    """Properties of a device (name, capability, memory, multiprocessors, L2)."""
    return _props(_index(device))


def get_device_name(device=None) -> str:
    return _props(_index(device)).name


def get_device_capability(device=None) -> tuple[int, int]:
    p = _props(_index(device))
    return (p.major, p.minor)


def synchronize(device=None) -> None:
    """Wait for all work on a device (``cuCtxSynchronize``)."""
    i = _index(device)
    driver.ensure_context(i)
    check(cu().cuCtxSynchronize())
    index_errors.raise_pending(i)  # Note [Deferred index errors]


def mem_get_info(device=None) -> tuple[int, int]:
    """``(free, total)`` bytes of a device (``cuMemGetInfo``)."""
    i = _index(device)
    driver.ensure_context(i)
    free, total = check(cu().cuMemGetInfo())
    return int(free), int(total)
