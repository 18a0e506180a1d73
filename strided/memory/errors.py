"""Errors raised by the caching allocator, with PyTorch's message text.

Note [OOM message text]
~~~~~~~~~~~~~~~~~~~~~~~
A PyTorch user greps logs for "CUDA out of memory. Tried to allocate" and knows what
"reserved by PyTorch but unallocated" means, so :class:`OutOfMemoryError` keeps the
current c10 wording byte for byte (including its two double spaces) and adds the numbers
as attributes, so callers never have to parse the message.
"""

from __future__ import annotations

__all__ = ["OutOfMemoryError", "format_size"]

_KIB = 1024
_MIB = 1024 * 1024
_GIB = 1024 * 1024 * 1024


def format_size(nbytes: int) -> str:
    """Format a byte count the way c10's ``format_size`` does.

    Parameters
    ----------
    nbytes : int
        Number of bytes.

    Returns
    -------
    str
        ``"N bytes"`` up to 1 KiB, then ``"%.2f KiB"``, ``"%.2f MiB"`` or ``"%.2f GiB"``.
    """
    if nbytes <= _KIB:
        return f"{nbytes} bytes"
    if nbytes <= _MIB:
        return f"{nbytes / _KIB:.2f} KiB"
    if nbytes <= _GIB:
        return f"{nbytes / _MIB:.2f} MiB"
    return f"{nbytes / _GIB:.2f} GiB"


_ADVICE = (
    " If reserved but unallocated memory is large try setting"
    " PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid"
    " fragmentation.  See documentation for Memory Management "
    " (https://docs.pytorch.org/docs/stable/notes/cuda.html"
    "#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)"
)


class OutOfMemoryError(RuntimeError):
    """The device allocator could not satisfy a request (``torch.OutOfMemoryError``).

    Attributes
    ----------
    requested : int
        Bytes the caller asked for.
    alloc_size : int
        Bytes the allocator tried to obtain from the device (the segment size).
    device : int
        Device index.
    total, free : int
        Device capacity and free memory as reported by the provider.
    allocated, reserved : int
        ``allocated_bytes.all.current`` and ``reserved_bytes.all.current``.
    private_pool_bytes : int
        Free bytes cached in private pools (e.g. CUDA graphs).
    allowed : int or None
        The per-process limit when a memory fraction is set.
    """

    def __init__(
        self,
        message: str,
        *,
        requested: int = 0,
        alloc_size: int = 0,
        device: int = 0,
        total: int = 0,
        free: int = 0,
        allocated: int = 0,
        reserved: int = 0,
        private_pool_bytes: int = 0,
        allowed: int | None = None,
    ) -> None:
        super().__init__(message)
        self.requested = requested
        self.alloc_size = alloc_size
        self.device = device
        self.total = total
        self.free = free
        self.allocated = allocated
        self.reserved = reserved
        self.private_pool_bytes = private_pool_bytes
        self.allowed = allowed

    @classmethod
    def from_state(
        cls,
        *,
        requested: int,
        alloc_size: int,
        device: int,
        total: int,
        free: int,
        allocated: int,
        reserved: int,
        private_pool_bytes: int = 0,
        allowed: int | None = None,
        process_info: str = "",
    ) -> OutOfMemoryError:
        """Build the error with c10's exact message for these numbers."""
        allowed_info = f"{format_size(allowed)} allowed; " if allowed is not None else ""
        private_msg = ""
        if private_pool_bytes > 0:
            private_msg = (
                f"with {format_size(private_pool_bytes)} allocated in private pools (e.g., CUDA Graphs), "
            )
        message = (
            f"CUDA out of memory. Tried to allocate {format_size(alloc_size)}. GPU {device} has a total "
            f"capacity of {format_size(total)} of which {format_size(free)} is free. {process_info}"
            f"{allowed_info}Of the allocated memory {format_size(allocated + private_pool_bytes)} is "
            f"allocated by PyTorch, {private_msg}and "
            f"{format_size(reserved - allocated - private_pool_bytes)} is reserved by PyTorch but "
            f"unallocated.{_ADVICE}"
        )
        return cls(
            message,
            requested=requested,
            alloc_size=alloc_size,
            device=device,
            total=total,
            free=free,
            allocated=allocated,
            reserved=reserved,
            private_pool_bytes=private_pool_bytes,
            allowed=allowed,
        )
