"""Frees that arrive from finalizers run by the garbage collector inside an allocator call.

Note [Finalizer frees] in strided/memory/splitting.py: the cyclic collector can run in the middle
of a malloc (at the ``Block`` allocation of a split); a finalizer freeing a block there must not
edit the free lists under the malloc.
"""

from __future__ import annotations

import gc
import random

from strided.memory import splitting
from strided.memory.blocks import Block
from strided.memory.invariants import check_invariants

MiB = 1 << 20


class _Owner:
    """A storage owner caught in a reference cycle: only the cyclic collector frees it."""

    def __init__(self, alloc, block):
        self.alloc, self.block, self.cycle = alloc, block, self

    def __del__(self):
        self.alloc.free_from_finalizer(self.block)


def _collect_inside_next_split(monkeypatch, generation=2):
    """Run a collection the next time malloc makes a Block (the split of a cached block)."""
    armed = [True]

    def block(*args):
        if armed[0]:
            armed[0] = False
            gc.collect(generation)
        return Block(*args)

    monkeypatch.setattr(splitting, "Block", block)


def test_collection_inside_a_split_defers_the_finalizer_frees(make, monkeypatch):
    alloc, _ = make()
    keep = alloc.malloc(4096)
    for _ in range(3):
        _Owner(alloc, alloc.malloc(4096))  # garbage now; freed only by a collection
    gc.disable()
    try:
        with monkeypatch.context() as m:
            _collect_inside_next_split(m)
            block = alloc.malloc(8192)  # splits the segment's free remainder; the collector runs there
        assert len(alloc._late) == 3  # the three finalizers ran and queued their blocks
        check_invariants(alloc)
        assert alloc.memory_stats()["allocation.all.current"] == 5  # not freed yet
        alloc.free(block)
        alloc.free(alloc.malloc(512))  # the next malloc frees the queued blocks first
        assert alloc._late == []
        assert alloc.memory_stats()["allocation.all.current"] == 1
        alloc.free(keep)
        check_invariants(alloc)
    finally:
        gc.enable()


def test_empty_cache_frees_queued_blocks_first(make):
    alloc, dev = make()
    block = alloc.malloc(4096)
    with alloc._lock:  # as if a finalizer ran inside an allocator call on this thread
        alloc.free_from_finalizer(block)
    assert alloc.memory_allocated() == 4096
    alloc.empty_cache()
    assert alloc.memory_allocated() == 0 and alloc.memory_reserved() == 0
    assert dev.used == 0


def test_finalizer_frees_outside_the_allocator_are_immediate(make):
    alloc, _ = make()
    block = alloc.malloc(MiB)
    alloc.free_from_finalizer(block)
    assert alloc._late == [] and alloc.memory_allocated() == 0


def test_random_collections_inside_mallocs_keep_the_allocator_consistent(make, monkeypatch):
    alloc, _ = make()
    rng = random.Random(0)
    live = []
    deferred = 0  # rounds whose collection inside the split queued frees
    # Collections of the youngest generation only: with the collector disabled every _Owner made in a round
    # is young until a collection, and a full collection costs ~40 ms alone, ~0.5 s late in the suite
    gc.collect()
    gc.disable()
    try:
        for _ in range(300):
            for _ in range(2):
                _Owner(alloc, alloc.malloc(rng.choice([512, 4096, MiB, 3 * MiB])))
            if rng.random() < 0.5:
                live.append(alloc.malloc(rng.choice([512, 4096, MiB])))
            if live and rng.random() < 0.4:
                alloc.free(live.pop(rng.randrange(len(live))))
            with monkeypatch.context() as m:
                _collect_inside_next_split(m, generation=0)
                block = alloc.malloc(rng.choice([512, 4096, 8192, MiB, 5 * MiB]))
            deferred += bool(alloc._late)
            gc.collect(0)
            alloc.free(block)
            check_invariants(alloc)
    finally:
        gc.enable()
    for b in live:
        alloc.free(b)
    alloc.free(alloc.malloc(512))
    assert alloc._late == [] and alloc.memory_allocated() == 0
    assert deferred > 100, deferred  # the path under test was taken
