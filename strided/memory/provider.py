"""The seam between the caching allocator and a device: the :class:`Provider` protocol.

The allocator (``caching.py``) is pure bookkeeping over integers.  Everything that touches a
device goes through one ``Provider`` object per device:

* the simulated device (``simulate.py``) for tests and trace replay;
* the CUDA runtime (``backends/cuda``), which maps each method onto the driver call named in
  its docstring.

Addresses, sizes and stream handles are plain ``int`` (stream 0 is the legacy default
stream).  Event handles are opaque objects owned by the provider.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["Provider"]


@runtime_checkable
class Provider(Protocol):
    """What the caching allocator needs from a device.

    Attributes
    ----------
    device_index : int
        The device this provider serves.
    total_memory : int
        Device capacity in bytes (``cudaDeviceProp.totalGlobalMem``).
    supports_expandable : bool
        Whether the VMM methods below work (CUDA: driver API present and
        ``CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED``).  When False the allocator
        ignores ``expandable_segments:True`` with a warning, as PyTorch does.
    """

    device_index: int
    total_memory: int
    supports_expandable: bool

    # -- plain device memory ---------------------------------------------------------------
    def malloc(self, nbytes: int) -> int | None:
        """Allocate ``nbytes`` of device memory (``cuMemAlloc``/``cudaMalloc``).

        Returns the address, or ``None`` when the device is out of memory
        (``CUDA_ERROR_OUT_OF_MEMORY``).  Any other failure raises.
        """
        ...

    def free(self, ptr: int) -> None:
        """Return memory obtained from :meth:`malloc` (``cuMemFree``/``cudaFree``).

        Like ``cudaFree`` it must not return before work already queued on any stream that may
        use ``ptr`` has finished (``cudaFree`` synchronizes the device).
        """
        ...

    def mem_get_info(self) -> tuple[int, int]:
        """``(free, total)`` bytes of the device right now (``cuMemGetInfo``)."""
        ...

    # -- events and streams ----------------------------------------------------------------
    def record_event(self, stream: int) -> object:
        """Record a new event on ``stream`` and return its handle.

        CUDA: take an event from a pool (``cuEventCreate`` with ``CU_EVENT_DISABLE_TIMING`` when
        the pool is empty), then ``cuEventRecord(event, stream)``.
        """
        ...

    def query_event(self, event: object) -> bool:
        """True when all work captured by ``event`` is complete (``cuEventQuery``;
        ``CUDA_ERROR_NOT_READY`` means False, any other error raises)."""
        ...

    def synchronize_event(self, event: object) -> None:
        """Block until ``event`` completes (``cuEventSynchronize``)."""
        ...

    def release_event(self, event: object) -> None:
        """The allocator is done with ``event``; the provider may reuse it (back to its pool)."""
        ...

    def synchronize_stream(self, stream: int) -> None:
        """Block until all work on ``stream`` is complete (``cuStreamSynchronize``)."""
        ...

    # -- virtual memory (expandable segments) ----------------------------------------------
    def reserve_address(self, nbytes: int) -> int:
        """Reserve ``nbytes`` of virtual address space, no memory behind it
        (``cuMemAddressReserve``; ``nbytes`` is a multiple of the page size)."""
        ...

    def free_address(self, va: int, nbytes: int) -> None:
        """Release a range from :meth:`reserve_address` (``cuMemAddressFree``); every page in it
        has been unmapped first."""
        ...

    def map_page(self, va: int, nbytes: int) -> bool:
        """Back ``[va, va + nbytes)`` with one new physical allocation.

        CUDA: ``cuMemCreate(nbytes, pinned, device)`` then ``cuMemMap`` and ``cuMemSetAccess``
        (read-write for the device and its peers).  ``nbytes`` is a multiple of the 2 MiB
        granularity.  Returns False when the device is out of memory (nothing is left mapped);
        other failures raise.
        """
        ...

    def unmap_page(self, va: int, nbytes: int) -> None:
        """Undo :meth:`map_page` for the page at ``va`` (``cuMemUnmap`` + ``cuMemRelease``).

        The allocator synchronizes the page's stream first: unlike ``cudaFree``, unmapping does
        not wait for queued work.
        """
        ...
