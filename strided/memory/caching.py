"""A per-device CUDA caching allocator, in pure Python over a :class:`~.provider.Provider`.

This is PyTorch's ``DeviceCachingAllocator`` (c10/cuda/CUDACachingAllocator.cpp), rule for
rule, so its stats, snapshots, OOM text and replayed addresses match PyTorch's.

Algorithm
---------
* Requests are rounded (:func:`~.blocks.round_size`: 512-byte multiples, or power-of-two
  divisions from ``roundup_power2_divisions``).  Rounded sizes ``<= 1 MiB`` use the *small*
  pool, larger ones the *large* pool; during a private-pool capture, streams matched by a
  capture filter use that private pool instead.
* ``malloc`` first polls events of earlier cross-stream frees, then looks for a cached block:
  best fit (smallest size, then lowest address) among the free blocks *of the same stream*.
  Blocks ``>= max_split_size`` only serve requests ``>= max_split_size``, and only when the
  block is smaller than ``request + max_non_split_rounding_size``.
* On a miss: free-memory callbacks run and the search is retried; with a memory fraction and
  ``garbage_collection_threshold``, old unsplit cached blocks are freed; then a new segment
  is requested (:func:`~.blocks.get_allocation_size`: 2 MiB for small requests, 20 MiB for
  1-10 MiB, else the size rounded to 2 MiB) -- or, with expandable segments, pages are mapped
  into the stream's growing segment.  If the device is full: free one cached block large
  enough (``release_available_cached_blocks``, only with ``max_split_size``), retry; then
  synchronize all events and free every unsplit cached segment (``release_cached_blocks``),
  retry once more; then raise :class:`~.errors.OutOfMemoryError` with PyTorch's message.
* A found block is split when the rest is worth keeping (``should_split``: small pool or
  expandable segments: ``rest >= 512``; large pool: ``size < max_split_size`` and
  ``rest > 1 MiB``); the rest goes back to the pool.
* ``free`` returns the block to its pool and merges it with free neighbours, unless
  ``record_stream`` added other streams: then one event per stream is recorded and the block
  returns only when the provider reports them complete.  Memory goes back to the device only
  through ``empty_cache``, the OOM fallbacks, GC, or strided's eager page recycling.

API for the CUDA layer
----------------------
::

    alloc = CachingAllocator(provider, config, device=0)
    block = alloc.malloc(size, stream)     # Block: .ptr .size .requested_size .stream
    alloc.record_stream(block, other_stream)
    alloc.free(block)                      # or alloc.free(alloc.get_block(ptr))
    alloc.empty_cache(); alloc.memory_stats(); alloc.snapshot()
    alloc.record_history(enabled="all", max_entries=100_000)
    alloc.set_memory_fraction(0.5)
    pool = alloc.create_pool(); alloc.begin_allocate_to_pool(pool, lambda s: s == capture_stream)
    alloc.end_allocate_to_pool(pool); alloc.release_pool(pool)

Every public method takes the allocator's one ``threading.RLock``.  Methods are split over
mixins by concern (``splitting.py``, ``miss.py``, ``events.py``, ``release.py``, ``expandable.py``,
``pools.py``, ``history.py``); they share the state created in :meth:`CachingAllocator.__init__`.
"""

from __future__ import annotations

import threading
import warnings
from bisect import bisect_left
from collections import OrderedDict, deque
from collections.abc import Callable

from .blocks import K_SMALL_SIZE, KEY_SHIFT, Block, BlockPool, round_size
from .config import SIZE_MAX, AllocatorConfig, allocator_config
from .errors import OutOfMemoryError
from .events import EventsMixin
from .expandable import ExpandableMixin
from .history import HistoryMixin
from .miss import FREE_MEMORY_CALLBACKS, MissMixin, register_free_memory_callback
from .pools import PoolsMixin
from .provider import Provider
from .release import ReleaseMixin
from .splitting import SplitMergeMixin
from .stats import ALLOCATED_BYTES, RESERVED_BYTES, DeviceStats, format_summary

__all__ = ["CachingAllocator", "register_free_memory_callback", "FREE_MEMORY_CALLBACKS"]

_ONE_EB = 1 << 60


class CachingAllocator(SplitMergeMixin, MissMixin, EventsMixin, ReleaseMixin, ExpandableMixin, PoolsMixin,
                       HistoryMixin):
    """The caching allocator of one device.

    Parameters
    ----------
    provider : Provider
        The device (simulated or CUDA).
    config : AllocatorConfig, optional
        Settings; defaults to the process-wide :data:`~.config.allocator_config`.  The allocator
        follows later changes to it.
    device : int, optional
        Device index used in stats, traces and errors; defaults to ``provider.device_index``.
    """

    def __init__(self, provider: Provider, config: AllocatorConfig | None = None, device: int | None = None):
        self.provider = provider
        self.config = config if config is not None else allocator_config
        self.device = provider.device_index if device is None else int(device)
        self._lock = threading.RLock()
        self.stats = st = DeviceStats()
        self._cur, self._peak, self._fre = st.cur, st.peak, st.fre
        self.small_blocks = BlockPool(True)
        self.large_blocks = BlockPool(False)
        self._active: dict[int, Block] = {}  # ptr -> allocated or pending-free block
        self._events: dict[int, deque] = {}  # stream -> deque of (event, block)
        self._deferred: list[Block] = []  # frees with stream uses during a capture
        self._late: list[Block] = []  # frees from finalizers run inside a call (Note [Finalizer frees])
        self._total_allocated = 0  # bytes obtained from the device (malloc'd + mapped)
        self._allowed_max = 0
        self._set_fraction = False
        self._fraction = 1.0
        self._oom_observers: list[Callable[[int, int, int, int], None]] = []
        self._warned_expandable = False
        self._init_expandable()
        self._init_pools()
        self._init_history()
        self._refresh_config()
        self.config.subscribe(self._refresh_config)
        if self.config.per_process_memory_fraction < 1.0:
            self.set_memory_fraction(self.config.per_process_memory_fraction)

    def _refresh_config(self) -> None:
        """Cache config values read on the hot path (called again when the config changes)."""
        cfg = self.config
        with self._lock:
            self._max_split = cfg.max_split_size
            self._split_limited = cfg.max_split_size != SIZE_MAX
            self._any_divisions = any(cfg.roundup_power2_divisions)
            self._large_segment = cfg.large_segment_size
            want = cfg.expandable_segments
            if want and not self.provider.supports_expandable:
                if not self._warned_expandable:
                    warnings.warn("expandable_segments not supported on this platform", stacklevel=3)
                    self._warned_expandable = True
                want = False
            self._expandable_on = want
            self._eager_unmap = want and cfg.strided_eager_unmap
            self._gc_active = self._set_fraction and cfg.garbage_collection_threshold > 0.0
            # any of these sends malloc's cache lookup down the full c10 path
            self._limited = self._split_limited or self._gc_active
            self.stats.max_split_size = -1 if cfg.max_split_size == SIZE_MAX else cfg.max_split_size

    # -- malloc ----------------------------------------------------------------------------
    # Note [Lock calls]
    # malloc and free, paid by every tensor, take the lock with ``acquire()`` and release it in a
    # ``finally``: ``with lock:`` calls ``__exit__`` with three arguments, and measured twice the
    # time (0.33 against 0.18 µs per round on the CI machine). Everything else uses ``with``.
    def malloc(self, size: int, stream: int = 0) -> Block | None:
        """Allocate ``size`` bytes for use on ``stream``.

        Parameters
        ----------
        size : int
            Bytes requested (>= 0).  Zero returns None, as c10 returns a null pointer.
        stream : int
            The stream handle the memory is used on (0 = default stream).

        Returns
        -------
        Block or None

        Raises
        ------
        OutOfMemoryError
            When neither the cache nor the device can satisfy the request.
        """
        if size.__class__ is not int or size <= 0 or size >= _ONE_EB:
            if self._check_size(size):
                return None
        ctx = self._gather(2) if self._context_level >= 2 else None
        lock = self._lock
        lock.acquire()  # Note [Lock calls]
        try:
            if self._events or self._deferred or self._recycle or self._late:
                if self._late:
                    self._free_late()
                if not self._captures:
                    self._process_events(ctx)
            if size < 512:
                rsize = 512
            elif self._any_divisions:
                rsize = round_size(size, self.config.roundup_divisions(size))
            else:
                rsize = (size + 511) & -512
            if self._captures:
                pool = self._get_pool(rsize, stream)
            else:
                pool = self.small_blocks if rsize <= K_SMALL_SIZE else self.large_blocks
            # Note [Free-set layout]: the best fit is the first key >= size << KEY_SHIFT
            fl = pool.free.get(stream)
            if fl is not None and not self._limited:
                keys = fl.keys
                i = bisect_left(keys, rsize << KEY_SHIFT)
                if i < len(keys):
                    block = fl.blocks[i]
                    if block.segment is None:
                        return self._alloc_found_block(block, pool, rsize, size, stream, ctx, fl, i)
            block = self._get_free_block(pool, rsize, stream)
            if block is None:
                block = self._malloc_miss(pool, rsize, size, stream, ctx)
            return self._alloc_found_block(block, pool, rsize, size, stream, ctx, None, -1)
        finally:
            lock.release()

    def _check_size(self, size: object) -> bool:
        """Slow-path argument check of malloc; True means "return None" (size 0)."""
        if isinstance(size, bool) or not isinstance(size, int):
            raise TypeError(f"malloc: size must be an int, got {type(size).__name__}")
        if size < 0:
            raise ValueError(f"malloc: size must be non-negative, got {size}")
        if size == 0:
            return True
        if size >= _ONE_EB:
            self.stats.num_ooms += 1
            raise OutOfMemoryError(
                "CUDA out of memory. Tried to allocate more than 1EB memory.",
                requested=size,
                device=self.device,
            )
        return False

    # -- queries and settings --------------------------------------------------------------
    def get_block(self, ptr: int) -> Block:
        """The allocated block starting at ``ptr`` (for ``caching_allocator_delete(ptr)``)."""
        with self._lock:
            block = self._active.get(ptr)
            if block is None or not block.allocated:
                raise ValueError(f"get_block: no allocation starts at {ptr:#x} on device {self.device}")
            return block

    def raw_alloc(self, size: int, stream: int = 0) -> int:
        """``caching_allocator_alloc``: allocate and return the address (0 for size 0)."""
        block = self.malloc(size, stream)
        return 0 if block is None else block.ptr

    def raw_delete(self, ptr: int) -> None:
        """``caching_allocator_delete``: free the allocation that starts at ``ptr``."""
        self.free(self.get_block(ptr))

    def try_raw_delete(self, ptr: int) -> bool:
        """Free the allocation that starts at ``ptr`` if this allocator made it; False if not."""
        with self._lock:
            block = self._active.get(ptr)
            if block is None or not block.allocated:
                return False
            self.free(block)
            return True

    def set_memory_fraction(self, fraction: float) -> None:
        """Cap this allocator's reserved memory at ``fraction`` of the device's total memory.

        As in c10 the cap is checked only against this allocator's own reserved bytes, when it
        asks the device for more.
        """
        if not isinstance(fraction, float):
            raise TypeError(f"set_memory_fraction: invalid type {type(fraction).__name__}, must be float")
        if not 0.0 <= fraction <= 1.0:
            raise ValueError(f"set_memory_fraction: fraction {fraction} must be in [0, 1]")
        _, total = self.provider.mem_get_info()
        with self._lock:
            self._allowed_max = int(fraction * total)
            self._set_fraction = True
            self._fraction = fraction
        self._refresh_config()

    def get_memory_fraction(self) -> float:
        """The fraction set by :meth:`set_memory_fraction` (1.0 when none)."""
        return self._fraction if self._set_fraction else 1.0

    def attach_oom_observer(self, fn: Callable[[int, int, int, int], None]) -> None:
        """Call ``fn(device, alloc_size, allowed_or_total, device_free)`` before raising an OOM."""
        self._oom_observers.append(fn)

    def memory_stats(self) -> dict:
        """PyTorch's flattened, sorted ``memory_stats()`` dict."""
        with self._lock:
            out = self.stats.as_flat()
            if self._graph_pools:
                self._add_pool_stats(out)
                out = OrderedDict(sorted(out.items()))
            return out

    def memory_summary(self, abbreviated: bool = False) -> str:
        """``torch.cuda.memory_summary()``'s table."""
        return format_summary(self.memory_stats(), self.device, abbreviated)

    def reset_peak_memory_stats(self) -> None:
        """Every peak becomes its current value."""
        with self._lock:
            self.stats.reset_peak()

    def reset_accumulated_memory_stats(self) -> None:
        """Allocated/freed totals and the event counters go to zero."""
        with self._lock:
            self.stats.reset_accumulated()

    def memory_allocated(self) -> int:
        """``allocated_bytes.all.current``."""
        return self.stats.cur[ALLOCATED_BYTES]

    def memory_reserved(self) -> int:
        """``reserved_bytes.all.current``."""
        return self.stats.cur[RESERVED_BYTES]

    def cache_info(self) -> int:
        """Size of the largest cached free block (c10 ``cacheInfo``)."""
        with self._lock:
            pools = [self.small_blocks, self.large_blocks]
            for pp in self._graph_pools.values():
                pools += [pp.small, pp.large]
            return max((b.size for p in pools for b in p.all_blocks()), default=0)

    def __repr__(self) -> str:
        return (
            f"CachingAllocator(device={self.device}, allocated={self.memory_allocated()}, "
            f"reserved={self.memory_reserved()})"
        )
