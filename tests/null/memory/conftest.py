from __future__ import annotations

import pytest

from strided.memory import AllocatorConfig, CachingAllocator, SimulatedDevice
from strided.memory.invariants import check_invariants

MiB = 1 << 20
GiB = 1 << 30


@pytest.fixture
def make():
    """Build (allocator, device) pairs; every allocator is checked for consistency at teardown."""
    made = []

    def factory(settings: str = "", capacity: int = 8 * GiB, **device_kw):
        dev = SimulatedDevice(capacity=capacity, **device_kw)
        alloc = CachingAllocator(dev, AllocatorConfig(settings or None))
        made.append(alloc)
        return alloc, dev

    yield factory
    for alloc in made:
        check_invariants(alloc)


@pytest.fixture
def data_dir():
    from pathlib import Path

    return Path(__file__).resolve().parents[2] / "data"
