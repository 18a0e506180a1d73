"""Blocks, pools of free blocks, and the size rules (``round_size``, ``get_allocation_size``).

Note [Free-set layout]
~~~~~~~~~~~~~~~~~~~~~~
c10 keeps each pool's free blocks in one ``std::set`` ordered by ``(stream, size, ptr)`` and
finds a best fit with ``lower_bound``.  Here each pool holds one :class:`FreeList` per stream
(so the stream part of the key is a dict lookup) and a FreeList is two parallel Python lists
kept sorted by ``key = size << 64 | ptr``: a single int compares in C inside ``bisect``, the
first key ``>= size << 64`` is the smallest block that fits with ties broken by the lowest
address, exactly c10's order.  Insert and remove are a bisect plus a ``memmove`` of pointers,
which beats a balanced tree written in Python for the few thousand free blocks a real
workload caches.
"""

from __future__ import annotations

from bisect import bisect_left

__all__ = [
    "Block",
    "BlockPool",
    "FreeList",
    "K_MIN_BLOCK_SIZE",
    "K_SMALL_SIZE",
    "K_SMALL_BUFFER",
    "K_LARGE_BUFFER",
    "K_MIN_LARGE_ALLOC",
    "K_ROUND_LARGE",
    "round_size",
    "roundup_power2_next_division",
    "get_allocation_size",
]

K_MIN_BLOCK_SIZE = 512  # every size is rounded to at least 512 bytes
K_SMALL_SIZE = 1048576  # largest "small" request: 1 MiB
K_SMALL_BUFFER = 2097152  # small requests are packed in 2 MiB segments
K_LARGE_BUFFER = 20971520  # 1-10 MiB requests share 20 MiB segments
K_MIN_LARGE_ALLOC = 10485760  # below this a large request gets a K_LARGE_BUFFER segment
K_ROUND_LARGE = 2097152  # larger requests are rounded to 2 MiB multiples
KEY_SHIFT = 64  # free-set key = size << KEY_SHIFT | ptr


def roundup_power2_next_division(size: int, divisions: int) -> int:
    """Round ``size`` up to the next of ``divisions`` equal steps between powers of two.

    c10 example: 1200 with 4 divisions lies in [1024, 2048) whose steps are 1024, 1280, 1536,
    1792, so the result is 1280.
    """
    if size & (size - 1) == 0:
        return size
    floor2 = 1 << (size.bit_length() - 1)
    step = floor2 >> (divisions.bit_length() - 1)
    if step == 0:
        return floor2 << 1
    floor = size & ~(step - 1)
    return size if floor == size else floor + step


def round_size(size: int, divisions: int = 0) -> int:
    """The block size served for a request of ``size`` bytes (c10 ``round_size``).

    Parameters
    ----------
    size : int
        Requested bytes.
    divisions : int
        ``roundup_power2_divisions`` for this size (``AllocatorConfig.roundup_divisions``).
    """
    if size < K_MIN_BLOCK_SIZE:
        return K_MIN_BLOCK_SIZE
    if divisions > 1 and size > K_MIN_BLOCK_SIZE * divisions:
        return roundup_power2_next_division(size, divisions)
    return (size + 511) & ~511


def get_allocation_size(size: int, large_segment_size: int = K_LARGE_BUFFER) -> int:
    """Bytes to request from the device for a new segment serving a ``size`` block."""
    if size <= K_SMALL_SIZE:
        return K_SMALL_BUFFER
    if size < K_MIN_LARGE_ALLOC:
        return large_segment_size
    return (size + K_ROUND_LARGE - 1) // K_ROUND_LARGE * K_ROUND_LARGE


class Block:
    """One contiguous range of a segment, allocated or free.

    A segment is a chain of Blocks linked by ``prev``/``next``.  The CUDA layer reads ``ptr``,
    ``size``, ``requested_size`` and ``stream``; everything else belongs to the allocator.
    """

    __slots__ = (
        "ptr",
        "size",
        "requested_size",
        "stream",
        "pool",
        "allocated",
        "mapped",
        "prev",
        "next",
        "event_count",
        "stream_uses",
        "gc_count_base",
        "segment",
        "context",
        "segment_context",
        "owner",
        "handed_out",
    )

    def __init__(self, ptr: int, size: int, stream: int, pool: BlockPool, owner: object = None) -> None:
        self.ptr = ptr
        self.size = size
        self.requested_size = 0
        self.stream = stream
        self.pool = pool
        self.allocated = False
        self.mapped = True  # False only for unmapped ranges of an expandable segment
        self.prev: Block | None = None
        self.next: Block | None = None
        self.event_count = 0  # outstanding events recorded on other streams at free
        self.stream_uses: set[int] | None = None  # streams from record_stream (None = none)
        self.gc_count_base = 0
        self.segment = None  # the ExpandableSegment this block lives in, if any
        self.context = None  # frames when last handed out (when history records them)
        self.segment_context = None  # frames when the segment was created (head block only)
        self.owner = owner  # the allocator this block belongs to (None once merged away)
        self.handed_out = False  # Note [Never hand out a Block twice]

    def is_split(self) -> bool:
        """True when the block is one of several in its segment."""
        return self.prev is not None or self.next is not None

    def __repr__(self) -> str:
        state = "allocated" if self.allocated else ("mapped" if self.mapped else "unmapped")
        return f"Block(ptr={self.ptr:#x}, size={self.size}, stream={self.stream}, {state})"


class FreeList:
    """Free blocks of one pool and one stream, sorted by ``(size, ptr)``."""

    __slots__ = ("keys", "blocks")

    def __init__(self) -> None:
        self.keys: list[int] = []
        self.blocks: list[Block] = []

    def insert(self, block: Block) -> None:
        key = block.size << KEY_SHIFT | block.ptr
        i = bisect_left(self.keys, key)
        self.keys.insert(i, key)
        self.blocks.insert(i, block)

    def remove(self, block: Block) -> None:
        keys = self.keys
        i = bisect_left(keys, block.size << KEY_SHIFT | block.ptr)
        if i == len(keys) or self.blocks[i] is not block:
            raise AssertionError(f"{block!r} is not in the free list")
        del keys[i]
        del self.blocks[i]

    def index_of(self, block: Block) -> int:
        i = bisect_left(self.keys, block.size << KEY_SHIFT | block.ptr)
        if i == len(self.keys) or self.blocks[i] is not block:
            raise AssertionError(f"{block!r} is not in the free list")
        return i

    def pop_at(self, i: int) -> None:
        del self.keys[i]
        del self.blocks[i]

    def replace_at(self, i: int, block: Block) -> None:
        """Put ``block`` in slot ``i`` if that keeps the order, else move it to its place."""
        keys = self.keys
        key = block.size << KEY_SHIFT | block.ptr
        if (i == 0 or keys[i - 1] < key) and (i + 1 == len(keys) or key < keys[i + 1]):
            keys[i] = key
            self.blocks[i] = block
            return
        del keys[i]
        del self.blocks[i]
        j = bisect_left(keys, key)
        keys.insert(j, key)
        self.blocks.insert(j, block)

    def __len__(self) -> int:
        return len(self.keys)


class BlockPool:
    """The free blocks of one size class (small or large) of one pool (default or private).

    ``free`` maps a stream to its :class:`FreeList` of mapped free blocks; ``unmapped`` maps a
    stream to the address-sorted unmapped ranges of its expandable segments.
    """

    __slots__ = ("is_small", "owner", "free", "unmapped", "get_free_blocks_call_count", "stat_type")

    def __init__(self, is_small: bool, owner: object = None) -> None:
        self.is_small = is_small
        self.owner = owner  # the PrivatePool this belongs to, None for the default pool
        self.free: dict[int, FreeList] = {}
        self.unmapped: dict[int, tuple[list[int], list[Block]]] = {}
        self.get_free_blocks_call_count = 0
        self.stat_type = 1 if is_small else 2  # index into stats: 0 all, 1 small, 2 large

    def insert(self, block: Block) -> None:
        """Add a free mapped block (c10 ``insert_into_blocks``: stamps its GC age base)."""
        block.gc_count_base = self.get_free_blocks_call_count
        fl = self.free.get(block.stream)
        if fl is None:
            fl = self.free[block.stream] = FreeList()
        fl.insert(block)

    def remove(self, block: Block) -> None:
        """Remove a free mapped block."""
        self.free[block.stream].remove(block)

    def all_blocks(self) -> list[Block]:
        """Every free mapped block, in c10's ``(stream, size, ptr)`` order."""
        out: list[Block] = []
        for stream in sorted(self.free):
            out.extend(self.free[stream].blocks)
        return out

    def insert_unmapped(self, block: Block) -> None:
        ptrs, blocks = self.unmapped.setdefault(block.stream, ([], []))
        i = bisect_left(ptrs, block.ptr)
        ptrs.insert(i, block.ptr)
        blocks.insert(i, block)

    def remove_unmapped(self, block: Block) -> None:
        ptrs, blocks = self.unmapped[block.stream]
        i = bisect_left(ptrs, block.ptr)
        if i == len(ptrs) or blocks[i] is not block:
            raise AssertionError(f"{block!r} is not in the unmapped set")
        del ptrs[i]
        del blocks[i]

    def total_free(self) -> int:
        """Bytes in free mapped blocks."""
        return sum(sum(b.size for b in fl.blocks) for fl in self.free.values())
