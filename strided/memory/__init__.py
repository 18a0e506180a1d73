"""strided's device memory engine: PyTorch's CUDA caching allocator in pure Python.

Nothing here imports a CUDA library or ``strided.backends``; the allocator holds integers
and talks to a device through a :class:`Provider`.  See ``docs/memory.md``.
"""

from __future__ import annotations

from .blocks import Block, get_allocation_size, round_size
from .caching import CachingAllocator, register_free_memory_callback
from .config import (
    AllocatorConfig,
    AllocatorConfigError,
    allocator_config,
    get_allocator_settings,
    set_allocator_settings,
)
from .errors import OutOfMemoryError, format_size
from .pools import new_pool_id
from .provider import Provider
from .simulate import SimulatedDevice
from .snapshot import dump_snapshot, load_snapshot

__all__ = [
    "AllocatorConfig",
    "AllocatorConfigError",
    "Block",
    "CachingAllocator",
    "OutOfMemoryError",
    "Provider",
    "SimulatedDevice",
    "allocator_config",
    "dump_snapshot",
    "format_size",
    "get_allocation_size",
    "get_allocator_settings",
    "load_snapshot",
    "new_pool_id",
    "register_free_memory_callback",
    "round_size",
    "set_allocator_settings",
]
