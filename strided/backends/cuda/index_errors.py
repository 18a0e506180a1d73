"""Deferred CUDA index errors: an out-of-range index found by a kernel, reported without a sync.

Note [Deferred index errors]
index_select, gather, scatter, scatter_add, index_add, embedding and advanced indexing
(``x[idx]``, ``x[idx] = v``) -- and, through a check kernel launched first, the compositions whose error
is their own (take, put_, index_copy_, index_fill_, index_reduce_, masked_scatter_: Note [Index bounds in
compositions]) and one_hot with a class count -- on CUDA used to check their indices before the main launch and read
the result back, a device synchronization per call (six per GPT training step: the embeddings,
their backward, the loss's backward). torch does not
synchronize there either: its kernels device-assert, which kills the context. Here the main
kernel itself checks every index it reads (``index_offsets`` in index.cu), skips an element whose
index is out of range (so nothing outside the tensor is ever read or written) and writes the bad
value and the launch's *tag* into a small record in host-mapped pinned memory of the device:
value first, a system-wide fence, then the tag (a launch with several index arrays registers one
tag per array, so the message names the right one). The host reads that record, a plain memory read,

* at the start of the next checked indexing op on the device,
* after every synchronizing call: ``strided.cuda.synchronize``, ``Stream.synchronize``,
  ``Event.synchronize``, and device-to-host copies (``.cpu()``, ``.item()``, printing),
* right after the launch under ``CUDA_LAUNCH_BLOCKING=1`` (the launch is synchronous there),
* at interpreter exit, where it is printed to stderr (so no error is silently lost),

and raises the op's own error (the CPU kernel's type and words, with the bad value), saying that
it was found by a kernel launched earlier. The context stays usable and the record is cleared, so
each error is raised once. The elements with bad indices are left unwritten, as with any failed
op. Under CUDA graph capture the index kernels do not report (a tag baked into a graph would be
stale at replay); the bounds check there traps instead (Note [CUDA index bounds]).

Two launches failing at once may mix one's value with the other's tag: both are errors, and the
value is still one that some launch found out of range.
"""

from __future__ import annotations

import atexit
import ctypes
import sys
import threading
from collections import OrderedDict

from . import driver
from .driver import check, cu

__all__ = ["expect", "raise_pending"]

_MAX_PENDING = 4096  # tags remembered per device (a report for an older one gets a generic message)


class _Record:
    """One device's record: ``words[0]`` = tag of the failing launch (0: none), ``words[1]`` = its value."""

    __slots__ = ("host_ptr", "device_ptr", "words", "pending")

    def __init__(self, index: int):
        driver.ensure_context(index)
        d = cu()
        flags = d.CU_MEMHOSTALLOC_PORTABLE | d.CU_MEMHOSTALLOC_DEVICEMAP
        self.host_ptr = int(check(d.cuMemHostAlloc(16, flags)))
        self.device_ptr = int(check(d.cuMemHostGetDevicePointer(self.host_ptr, 0)))
        self.words = (ctypes.c_int64 * 2).from_address(self.host_ptr)
        self.words[0] = self.words[1] = 0
        self.pending: OrderedDict = OrderedDict()  # tag -> (exception type, message with {index})


_records: dict[int, _Record] = {}
_next_tag = [1]
_tag_lock = threading.Lock()


def expect(index: int, exc_type: type, messages, op: str) -> tuple[int, int]:
    """``(record device pointer, first tag)`` for one launch of ``op`` on device ``index``.

    ``messages``: the error to raise if the launch finds a bad index, with ``{index}`` where the
    value goes; or a list of them, one per index array of the launch (array ``k`` reports tag
    ``first + k``). An error found by an earlier launch on the device is raised first.
    """
    rec = _records.get(index)
    if rec is None:
        if not _records:
            atexit.register(_report_at_exit)
        rec = _records[index] = _Record(index)
    elif rec.words[0]:
        _raise(index, rec)
    if isinstance(messages, str):
        messages = (messages,)
    with _tag_lock:
        first = _next_tag[0]
        _next_tag[0] = first + len(messages)
    pending = rec.pending
    for k, message in enumerate(messages):
        pending[first + k] = (exc_type, message, op)
    while len(pending) > _MAX_PENDING:
        pending.popitem(last=False)
    return rec.device_ptr, first


def raise_pending(index: int | None = None) -> None:
    """Raise the error a kernel on device ``index`` (None: any device) reported, if any."""
    if not _records:
        return
    if index is not None:
        rec = _records.get(index)
        if rec is not None and rec.words[0]:
            _raise(index, rec)
        return
    for i, rec in list(_records.items()):
        if rec.words[0]:
            _raise(i, rec)


def _report_at_exit() -> None:
    """An error no synchronizing call raised before the interpreter exits is printed, not lost."""
    for index, rec in list(_records.items()):
        try:
            driver.ensure_context(index)
            cu().cuCtxSynchronize()
            if rec.words[0]:
                _raise(index, rec)
        except Exception as e:  # noqa: BLE001 - report whatever the record says, never fail the exit
            sys.stderr.write(f"strided: an error was pending at exit: {type(e).__name__}: {e}\n")


def _raise(index: int, rec: _Record) -> None:
    tag, value = int(rec.words[0]), int(rec.words[1])
    rec.words[0] = rec.words[1] = 0
    exc_type, message, op = rec.pending.pop(tag, (RuntimeError, "index {index} is out of range", "indexing op"))
    text = message.format(index=value)
    if driver.LAUNCH_BLOCKING:
        raise exc_type(f"{text} ({op} on cuda:{index}, CUDA_LAUNCH_BLOCKING=1)")
    raise exc_type(f"{text} (found by a CUDA {op} launched earlier on cuda:{index} and reported at the next "
                   "synchronizing call; CUDA_LAUNCH_BLOCKING=1 raises it at the op)")
