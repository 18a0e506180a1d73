"""``profile(profile_memory=True)``: every allocation and free while a profile records, charged to the op that made
it (torch's "CPU Mem" / "CUDA Mem" columns and ``[memory]`` trace events).

Note [Memory records]
As in torch, each allocation adds its bytes to the innermost open range of the thread that made it, each free
subtracts them from the range open when it happens (so an op that allocates its output shows that output's
bytes, and the op or block during which it is freed shows them negative); records outside every range become
``[memory]`` events of their own. CUDA memory is counted as torch counts it, in the caching allocator's block
sizes (rounded up to 512 bytes) with the allocator's allocated and reserved totals: each device's allocator has
its ``malloc`` and ``free`` replaced for the profile's duration (instance attributes, so no flag is tested on the
hot path when nobody profiles, Note [Profiler hooks]) and so frees of memory allocated before the profile count
too. CPU storages are counted in bytes requested; a CPU storage's free is seen through a weak reference to it,
so only CPU memory allocated during the profile is seen freed (torch warns the same of its CPU allocator).
"""

from __future__ import annotations

import threading
import weakref

from ..backends import STORAGE_ALLOCATORS

__all__ = ["MemoryRecord", "MemoryTracker"]


class MemoryRecord:
    """One allocation (``nbytes > 0``) or free (``nbytes < 0``) and the totals after it."""

    __slots__ = ("ts", "addr", "nbytes", "total_allocated", "total_reserved", "device_type", "device_index",
                 "thread")

    def __init__(self, ts, addr, nbytes, total_allocated, total_reserved, device_type, device_index, thread):
        self.ts, self.addr, self.nbytes = ts, addr, nbytes
        self.total_allocated, self.total_reserved = total_allocated, total_reserved
        self.device_type, self.device_index, self.thread = device_type, device_index, thread


class MemoryTracker:
    """Installs the allocation hooks for one recorder (Note [Memory records])."""

    def __init__(self, recorder):
        self.recorder = recorder
        self.records: list[MemoryRecord] = []
        self.cpu_allocated = 0
        self._cpu_refs: dict[int, weakref.ref] = {}  # id(ref) -> ref, kept until the storage dies or the profile ends
        self._saved_cpu = None
        self._saved_cuda = None
        self._hooked: list = []  # caching allocators whose malloc / free are replaced

    # -- recording ---------------------------------------------------------------------------
    def _record(self, addr, nbytes, allocated, reserved, device_type, index) -> None:
        rec = self.recorder
        self.records.append(MemoryRecord(rec.now(), addr, nbytes, allocated, reserved, device_type, index,
                                         threading.get_native_id()))
        rec.charge_memory(nbytes, device_type == "cuda")

    def _cpu_allocate(self, nbytes, device, pin_memory=False):
        storage = self._saved_cpu(nbytes, device, pin_memory)
        n = storage._nbytes
        if n:
            self.cpu_allocated += n
            addr = storage.data_ptr()
            self._record(addr, n, self.cpu_allocated, 0, "cpu", -1)
            refs = self._cpu_refs

            def freed(ref, n=n, addr=addr, refs=refs):
                if refs.pop(id(ref), None) is not None:  # the profile still records
                    self.cpu_allocated -= n
                    self._record(addr, -n, self.cpu_allocated, 0, "cpu", -1)

            ref = weakref.ref(storage, freed)
            refs[id(ref)] = ref
        return storage

    def _cuda_allocate(self, nbytes, device, pin_memory=False):
        """The CUDA storage allocator while profiling: a device's caching allocator made now is hooked first."""
        from ..backends.cuda import allocator

        i = device.index
        if allocator._pluggable is not None or allocator.NO_CACHING:  # raw memory: not counted
            return self._saved_cuda(nbytes, device, pin_memory)
        if i is None:
            from ..backends.cuda.device import current_device

            i = current_device()
        known = allocator._allocators
        if not 0 <= i < len(known) or known[i] is None or known[i] not in self._hooked:
            allocator.get_allocator(i)  # made now (or the invalid ordinal refused, as without the profiler)
            self._hook_cuda()
        return self._saved_cuda(nbytes, device, pin_memory)

    def _hook_allocator(self, alloc) -> None:
        malloc, free = alloc.malloc, alloc.free
        index = alloc.device

        def profiled_malloc(size, stream=0):
            block = malloc(size, stream)
            if block is not None:
                self._record(block.ptr, block.size, alloc.memory_allocated(), alloc.memory_reserved(), "cuda", index)
            return block

        def profiled_free(block):
            if block is None:
                return free(block)
            ptr, size = block.ptr, block.size
            free(block)
            self._record(ptr, -size, alloc.memory_allocated(), alloc.memory_reserved(), "cuda", index)

        alloc.malloc, alloc.free = profiled_malloc, profiled_free
        self._hooked.append(alloc)

    def _hook_cuda(self) -> None:
        from ..backends.cuda import allocator

        for alloc in allocator.initialized_allocators():
            if alloc not in self._hooked:
                self._hook_allocator(alloc)

    # -- install -----------------------------------------------------------------------------
    def install(self) -> None:
        self._saved_cpu = STORAGE_ALLOCATORS["cpu"]
        STORAGE_ALLOCATORS["cpu"] = self._cpu_allocate
        from .. import cuda

        if cuda.is_available():
            from ..backends.cuda import allocator  # registers the CUDA storage allocator

            self._saved_cuda = STORAGE_ALLOCATORS["cuda"]
            STORAGE_ALLOCATORS["cuda"] = self._cuda_allocate
            del allocator
            self._hook_cuda()

    def uninstall(self) -> None:
        STORAGE_ALLOCATORS["cpu"] = self._saved_cpu
        if self._saved_cuda is not None:
            STORAGE_ALLOCATORS["cuda"] = self._saved_cuda
        for alloc in self._hooked:
            for name in ("malloc", "free"):
                alloc.__dict__.pop(name, None)
        self._hooked.clear()
        self._cpu_refs.clear()  # later CPU frees are not recorded
