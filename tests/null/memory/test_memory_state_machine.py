"""Random malloc / free / record_stream / event completion / empty_cache / OOM sequences.

After every step the allocator must be consistent (``check_invariants``): no two live blocks
overlap, every byte of every segment belongs to exactly one block, free neighbours are
merged, stats equal a recount, and the device holds exactly what the allocator reserved --
also right after an OutOfMemoryError.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from strided.memory import AllocatorConfig, CachingAllocator, OutOfMemoryError, SimulatedDevice
from strided.memory.invariants import check_invariants

MiB = 1 << 20
SIZES = st.one_of(
    st.integers(1, 4096),
    st.integers(4096, 2 * MiB),
    st.integers(2 * MiB, 24 * MiB),
    st.sampled_from([512, MiB, MiB + 1, 10 * MiB, 20 * MiB, 40 * MiB]),
)
CONFIGS = [
    "",
    "max_split_size_mb:20",
    "roundup_power2_divisions:4,garbage_collection_threshold:0.6",
    "expandable_segments:True",
    "expandable_segments:True,strided_eager_unmap:True,strided_large_page_mb:4",
]


class AllocatorMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.alloc = None
        self.live = []

    @precondition(lambda self: self.alloc is None)
    @rule(config=st.sampled_from(CONFIGS), fraction=st.sampled_from([None, 0.7]))
    def setup(self, config, fraction):
        self.dev = SimulatedDevice(capacity=128 * MiB)
        self.alloc = CachingAllocator(self.dev, AllocatorConfig(config or None))
        if fraction is not None:
            self.alloc.set_memory_fraction(fraction)

    @precondition(lambda self: self.alloc is not None)
    @rule(size=SIZES, stream=st.sampled_from([0, 0, 0, 5]))
    def malloc(self, size, stream):
        before = self.alloc.memory_allocated()
        try:
            block = self.alloc.malloc(size, stream)
        except OutOfMemoryError as e:
            assert self.alloc.memory_allocated() == before == e.allocated
            return
        assert block.size >= size and block.stream == stream
        self.live.append(block)

    @precondition(lambda self: self.alloc is not None and self.live)
    @rule(data=st.data(), uses=st.lists(st.sampled_from([1, 2, 5]), max_size=2))
    def free(self, data, uses):
        block = self.live.pop(data.draw(st.integers(0, len(self.live) - 1)))
        for s in uses:
            self.alloc.record_stream(block, s)
        self.alloc.free(block)

    @precondition(lambda self: self.alloc is not None)
    @rule(stream=st.sampled_from([None, 0, 1, 2, 5]))
    def complete(self, stream):
        if stream is None:
            self.dev.complete_all()
        else:
            self.dev.complete_stream(stream)

    @precondition(lambda self: self.alloc is not None)
    @rule()
    def empty_cache(self):
        self.alloc.empty_cache()
        assert not self.dev.pending_events or all(e.done for e in self.dev.pending_events)

    @precondition(lambda self: self.alloc is not None)
    @rule()
    def reset_stats(self):
        self.alloc.reset_peak_memory_stats()

    @invariant()
    def consistent(self):
        if self.alloc is not None:
            check_invariants(self.alloc)
            assert self.alloc.memory_allocated() == sum(b.size for b in self.live)

    def teardown(self):
        if self.alloc is not None:
            for b in self.live:
                self.alloc.free(b)
            self.dev.complete_all()
            self.alloc.empty_cache()
            check_invariants(self.alloc)
            assert self.alloc.memory_reserved() == 0 and self.dev.used == 0  # nothing leaks


AllocatorMachine.TestCase.settings = settings(
    max_examples=150, stateful_step_count=50, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
TestAllocatorMachine = AllocatorMachine.TestCase
