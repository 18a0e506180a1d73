"""Private memory pools: where CUDA graphs and ``MemPool`` route their allocations.

c10 Note [Interaction with CUDA graph capture]: while a capture (or ``use_mem_pool``) is
underway, mallocs on streams accepted by its filter are served from the private pool's own
small/large BlockPools, so their addresses are never reused by ordinary allocations.  A pool
lives while its ``use_count`` is positive; after :meth:`release_pool` drops it to zero, its
cached memory is freed by the next ``empty_cache`` / OOM retry, and the pool disappears once
it holds no device memory.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Protocol

from .blocks import K_SMALL_SIZE, BlockPool
from .stats import TYPE_NAMES

__all__ = ["PrivatePool", "PoolsMixin", "MempoolId", "SegmentAllocator"]

MempoolId = tuple[int, int]
_user_ids = itertools.count(1)  # MemPool / graph_pool_handle ids: (0, n)
_graph_ids = itertools.count(1)  # ids made by a capture with no pool given: (n, 0)


class SegmentAllocator(Protocol):
    """Where a pool's segments come from instead of the provider (``MemPool(allocator=...)``).

    Note [Pool allocators]
    c10 gives a ``PrivatePool`` an optional ``CUDAAllocator``: its ``raw_alloc`` makes the pool's
    segments and its ``raw_delete`` returns them, while blocks inside them are still split,
    cached and reused by the caching allocator.  ``malloc`` returns None when it is out of
    memory; ``free`` must not return before queued work on the segment has finished, as
    :meth:`~.provider.Provider.free`.  Such pools never use expandable segments.
    """

    def malloc(self, nbytes: int, stream: int) -> int | None: ...

    def free(self, ptr: int, nbytes: int, stream: int) -> None: ...


class PrivatePool:
    """A pool of blocks reserved for one graph or ``MemPool`` (c10 ``PrivatePool``)."""

    __slots__ = ("id", "use_count", "malloc_count", "cur", "peak", "acc", "fre", "small", "large",
                 "allocator")

    def __init__(self, pool_id: MempoolId, allocator: SegmentAllocator | None = None) -> None:
        self.id = pool_id
        self.allocator = allocator  # Note [Pool allocators]; None: the provider's malloc/free
        self.use_count = 1
        self.malloc_count = 0  # device allocations not yet returned
        # reserved bytes of this pool, per pool type (all, small, large)
        self.cur = [0, 0, 0]
        self.peak = [0, 0, 0]
        self.acc = [0, 0, 0]
        self.fre = [0, 0, 0]
        self.small = BlockPool(True, self)
        self.large = BlockPool(False, self)

    def reserve(self, t: int, nbytes: int) -> None:
        """Count ``nbytes`` (negative: returned) of device memory in pool type ``t``."""
        for i in (0, t):
            self.cur[i] += nbytes
            if nbytes >= 0:
                self.acc[i] += nbytes
                self.peak[i] = max(self.peak[i], self.cur[i])
            else:
                self.fre[i] -= nbytes


def new_pool_id(graph: bool = False) -> MempoolId:
    """A fresh pool id: ``(0, n)`` for user pools, ``(n, 0)`` for capture-created ones."""
    return (next(_graph_ids), 0) if graph else (0, next(_user_ids))


def _check_id(op: str, pool_id: object) -> MempoolId:
    if (
        not isinstance(pool_id, tuple)
        or len(pool_id) != 2
        or not all(isinstance(x, int) and x >= 0 for x in pool_id)
        or pool_id == (0, 0)
    ):
        raise ValueError(
            f"{op}: pool id must be a pair of non-negative ints other than (0, 0), got {pool_id!r}"
        )
    return pool_id


class PoolsMixin:
    """Private-pool methods of the allocator."""

    def _init_pools(self) -> None:
        self._graph_pools: dict[MempoolId, PrivatePool] = {}
        self._graph_pools_freeable: dict[MempoolId, PrivatePool] = {}
        self._captures: list[tuple[MempoolId, Callable[[int], bool]]] = []
        self._capture_stream_uses: dict = {}

    def create_pool(self, pool_id: MempoolId | None = None,
                    allocator: SegmentAllocator | None = None) -> MempoolId:
        """Create a private pool, or add a user to an existing one (c10 ``createOrIncrefPool``).

        Parameters
        ----------
        pool_id : tuple of int, optional
            An id from :func:`new_pool_id`; a new ``(0, n)`` id when omitted.
        allocator : SegmentAllocator, optional
            Makes and frees the new pool's segments (Note [Pool allocators]).

        Returns
        -------
        tuple of int
            The pool id.
        """
        pool_id = new_pool_id() if pool_id is None else _check_id("create_pool", pool_id)
        with self._lock:
            self._create_or_incref(pool_id, allocator)
        return pool_id

    def _create_or_incref(self, pool_id: MempoolId, allocator: SegmentAllocator | None = None) -> None:
        pp = self._graph_pools.get(pool_id)
        if pp is None:
            self._graph_pools[pool_id] = PrivatePool(pool_id, allocator)
        else:
            if pp.use_count <= 0:
                raise RuntimeError(f"create_pool: pool {pool_id} was already released")
            pp.use_count += 1

    def begin_allocate_to_pool(self, pool_id: MempoolId, stream_filter: Callable[[int], bool]) -> None:
        """Route mallocs on streams where ``stream_filter(stream)`` is true to ``pool_id``.

        Creates the pool (or adds a use).  While any routing is active, cross-stream frees are
        deferred and ``empty_cache`` is refused, as during CUDA graph capture.
        """
        pool_id = _check_id("begin_allocate_to_pool", pool_id)
        if not callable(stream_filter):
            raise TypeError("begin_allocate_to_pool: stream_filter must be callable")
        with self._lock:
            for pid, _ in self._captures:
                if pid == pool_id:
                    raise RuntimeError("beginAllocateToPool: already recording to mempool_id")
            self._create_or_incref(pool_id)
            self._captures.append((pool_id, stream_filter))

    def end_allocate_to_pool(self, pool_id: MempoolId) -> None:
        """Stop routing allocations to ``pool_id``."""
        with self._lock:
            for k, (pid, _) in enumerate(self._captures):
                if pid == pool_id:
                    del self._captures[k]
                    return
            raise RuntimeError("endAllocatePool: not currently recording to mempool_id")

    def release_pool(self, pool_id: MempoolId) -> None:
        """Drop one use of ``pool_id``; at zero its cached memory becomes releasable."""
        with self._lock:
            pp = self._graph_pools.get(pool_id)
            if pp is None or pp.use_count <= 0:
                raise ValueError(f"release_pool: no live pool {pool_id!r}")
            pp.use_count -= 1
            if pp.use_count == 0:
                self._graph_pools_freeable[pool_id] = pp

    def pool_use_count(self, pool_id: MempoolId) -> int:
        """``MemPool.use_count()``: live uses of ``pool_id`` (0 when unknown)."""
        pp = self._graph_pools.get(pool_id)
        return 0 if pp is None else pp.use_count

    def _get_pool(self, size: int, stream: int) -> BlockPool:
        for pid, stream_filter in self._captures:
            if stream_filter(stream):
                pp = self._graph_pools[pid]
                return pp.small if size <= K_SMALL_SIZE else pp.large
        return self.small_blocks if size <= K_SMALL_SIZE else self.large_blocks

    def _pool_ids(self) -> dict[int, MempoolId]:
        """``id(BlockPool) -> pool id`` for snapshot segments."""
        out = {}
        for pid, pp in self._graph_pools.items():
            out[id(pp.small)] = pid
            out[id(pp.large)] = pid
        return out

    def _add_pool_stats(self, out: dict) -> None:
        """``reserved_bytes_by_private_pools.<a>_<b>.<type>.<field>`` for each live pool."""
        for (a, b), pp in self._graph_pools.items():
            for t, tname in enumerate(TYPE_NAMES):
                for field, arr in (
                    ("current", pp.cur),
                    ("peak", pp.peak),
                    ("allocated", pp.acc),
                    ("freed", pp.fre),
                ):
                    out[f"reserved_bytes_by_private_pools.{a}_{b}.{tname}.{field}"] = arr[t]
