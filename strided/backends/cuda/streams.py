"""Streams and events, and the current stream of each device (per thread).

Note [Stream handles]
A :class:`Stream` is a device index plus the raw ``CUstream`` address as an ``int`` (0 is the
legacy default stream).  The allocator, the copy engine and the launcher only ever see that
int, so the hot path does no attribute lookups beyond ``stream.handle``.  Streams made with
:meth:`Stream.from_handle` are borrowed (another library owns them) and are never destroyed.
"""

from __future__ import annotations

import threading

from ...device_streams import Event as _DeviceEvent
from ...device_streams import Stream as _DeviceStream
from . import capture as _capture
from . import driver, index_errors
from .device import _index, current_device
from .driver import check, cu
from .sync_debug import stream_synchronize

__all__ = ["Stream", "ExternalStream", "Event", "current_stream", "default_stream", "set_stream", "stream",
           "StreamContext", "current_stream_handle", "current_stream_at"]


class _StreamTLS(threading.local):
    """This thread's current streams (device index -> Stream), None until one is set.

    Note [Thread-local defaults]: a class attribute gives every thread the default without the
    AttributeError that ``getattr(local, name, default)`` raises and swallows on each miss (about
    0.5 µs, paid on every launch by a thread that never set a stream).
    """

    streams: dict | None = None


_tls = _StreamTLS()
_free_streams: dict[tuple[int, int], list[int]] = {}


class Stream(_DeviceStream):
    """A CUDA stream on one device (``Stream(device=None, priority=0)``); a ``strided.Stream``
    (Note [Device-generic streams])."""

    __slots__ = ("device_index", "handle", "_owned", "priority", "__weakref__")

    def __init__(self, device=None, priority: int = 0):
        i = _index(device)
        driver.ensure_context(i)
        d = cu()
        lo, hi = check(d.cuCtxGetStreamPriorityRange())  # (least, greatest); greatest is numerically lower
        prio = max(int(hi), min(int(lo), int(priority)))
        pool = _free_streams.get((i, prio))
        if pool:
            s = pool.pop()
        else:
            s = int(check(d.cuStreamCreateWithPriority(d.CUstream_flags.CU_STREAM_NON_BLOCKING, prio)))
        self.device_index = i
        self.handle = int(s)
        self._owned = True
        self.priority = prio

    @classmethod
    def from_handle(cls, handle: int, device=None) -> Stream:
        """Wrap a stream created elsewhere (borrowed: never destroyed by strided)."""
        s = cls.__new__(cls)
        s.device_index = _index(device)
        s.handle = int(handle)
        s._owned = False
        s.priority = 0
        return s

    @classmethod
    def _default(cls, i: int) -> Stream:
        return cls.from_handle(0, i)

    @property
    def cuda_stream(self) -> int:
        return self.handle

    @property
    def device(self):
        from ...device import device as _device

        return _device("cuda", self.device_index)

    @property
    def stream_id(self) -> int:
        return self.handle

    @property
    def native_handle(self) -> int:
        return self.handle

    def is_capturing(self) -> bool:
        """Whether a CUDA graph capture is recording this stream's work."""
        driver.ensure_context(self.device_index)
        return _capture.stream_is_capturing(self.handle)

    def __cuda_stream__(self) -> tuple[int, int]:
        return (0, self.handle)

    def wait_event(self, event: Event) -> None:
        """Make future work on this stream wait for ``event``."""
        driver.ensure_context(self.device_index)
        if event.handle is not None:
            check(cu().cuStreamWaitEvent(self.handle, event.handle, 0))

    def wait_stream(self, other: Stream) -> None:
        """Make future work on this stream wait for the work queued on ``other`` so far."""
        self.wait_event(other.record_event())

    def record_event(self, event: Event | None = None) -> Event:
        event = Event() if event is None else event
        event.record(self)
        return event

    def query(self) -> bool:
        """True when all work on the stream is complete."""
        driver.ensure_context(self.device_index)
        r = cu().cuStreamQuery(self.handle)[0]
        if r == 0:
            return True
        if int(r) == 600:  # CUDA_ERROR_NOT_READY
            return False
        check((r,))
        return False

    def synchronize(self) -> None:
        driver.ensure_context(self.device_index)
        stream_synchronize(self.handle, self.device_index)  # Note [Synchronizing calls]

    def __eq__(self, other) -> bool:
        return (isinstance(other, Stream) and self.handle == other.handle
                and self.device_index == other.device_index)

    def __hash__(self) -> int:
        return hash((self.handle, self.device_index))

    def __del__(self):
        # Note [Streams are recycled, never destroyed]: allocator and pinned-memory events may
        # still be recorded on this handle after the Python object dies (record_stream, async
        # copies), so the CUstream goes back to a pool for the next Stream(), as torch's pool does.
        if getattr(self, "_owned", False) and self.handle:
            _free_streams.setdefault((self.device_index, self.priority), []).append(self.handle)

    def __repr__(self) -> str:
        return f"<strided.cuda.{type(self).__name__} device=cuda:{self.device_index} cuda_stream={self.handle:#x}>"


class Event(_DeviceEvent):
    """A CUDA event (``Event(enable_timing=False, blocking=False)``), created on first record; a ``strided.Event``
    (Note [Device-generic streams])."""

    __slots__ = ("enable_timing", "blocking", "handle", "device_index", "__weakref__")

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False):
        self.enable_timing = enable_timing
        self.blocking = blocking
        self.handle = None
        self.device_index = -1

    def _create(self, i: int) -> None:
        d = cu()
        flags = 0
        if not self.enable_timing:
            flags |= int(d.CUevent_flags.CU_EVENT_DISABLE_TIMING)
        if self.blocking:
            flags |= int(d.CUevent_flags.CU_EVENT_BLOCKING_SYNC)
        driver.ensure_context(i)
        self.handle = int(check(d.cuEventCreate(flags)))
        self.device_index = i

    def record(self, stream: Stream | None = None) -> None:
        """Record on ``stream`` (default: the current stream)."""
        if stream is None:
            stream = current_stream()
        if self.handle is None:
            self._create(stream.device_index)
        elif stream.device_index != self.device_index:
            raise RuntimeError(f"Event device cuda:{self.device_index} does not match recording stream's "
                               f"device cuda:{stream.device_index}.")
        driver.ensure_context(self.device_index)
        check(cu().cuEventRecord(self.handle, stream.handle))

    def wait(self, stream: Stream | None = None) -> None:
        (current_stream() if stream is None else stream).wait_event(self)

    def query(self) -> bool:
        if self.handle is None:
            return True
        r = cu().cuEventQuery(self.handle)[0]
        if r == 0:
            return True
        if int(r) == 600:
            return False
        check((r,))
        return False

    def synchronize(self) -> None:
        if self.handle is not None:
            check(cu().cuEventSynchronize(self.handle))
            index_errors.raise_pending()  # Note [Deferred index errors]

    def elapsed_time(self, end: Event) -> float:
        """Milliseconds between this event and ``end`` (both recorded, timing enabled)."""
        if self.handle is None or end.handle is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        if not (self.enable_timing and end.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        return float(check(cu().cuEventElapsedTime(self.handle, end.handle)))

    @property
    def cuda_event(self) -> int:
        return self.handle or 0

    @property
    def device(self):
        """``cuda:i`` once recorded on device i, else ``cuda``."""
        from ...device import device as _device

        return _device("cuda", self.device_index) if self.device_index >= 0 else _device("cuda")

    def __del__(self):
        if getattr(self, "handle", None):
            try:  # Note [Finalizers during capture]: destroyed once no capture is underway
                _capture.run_or_defer(cu().cuEventDestroy, self.handle)
            except Exception:  # noqa: BLE001 - interpreter shutdown
                pass

    def __repr__(self) -> str:
        return f"<strided.cuda.Event {self.handle or 0:#x}>"


def _streams() -> dict:
    s = _tls.streams
    if s is None:
        s = _tls.streams = {}
    return s


def current_stream(device=None) -> Stream:
    """This thread's current stream on ``device`` (the default stream unless set)."""
    i = current_device() if device is None else _index(device)
    s = _streams().get(i)
    if s is None:
        s = _streams()[i] = Stream._default(i)
    return s


def current_stream_at(i: int) -> Stream:
    """Hot path of :func:`current_stream` for a device index (autograd records it per node)."""
    s = _tls.streams
    if s is not None:
        st = s.get(i)
        if st is not None:
            return st
    return current_stream(i)


def current_stream_handle(i: int) -> int:
    """Hot path: the raw handle of this thread's current stream on device ``i``."""
    s = _tls.streams
    if s is None:
        return 0
    st = s.get(i)
    return 0 if st is None else st.handle


def default_stream(device=None) -> Stream:
    return Stream._default(current_device() if device is None else _index(device))


def set_stream(stream: Stream | None) -> None:
    """Make ``stream`` the current stream of its device in this thread."""
    if stream is None:
        return
    _streams()[stream.device_index] = stream


class ExternalStream(Stream):
    """A stream made by another library, wrapped by its handle (torch.cuda.ExternalStream): strided
    queues work on it but never destroys it; the caller keeps it alive while it is used."""

    __slots__ = ()

    def __init__(self, stream_ptr: int, device=None):
        if isinstance(stream_ptr, bool) or not isinstance(stream_ptr, int):
            raise TypeError(f"ExternalStream(): stream_ptr must be an int (a cudaStream_t), "
                            f"got {type(stream_ptr).__name__}")
        self.device_index = _index(device)
        self.handle = stream_ptr
        self._owned = False
        self.priority = 0


class StreamContext:
    """Context manager: ``with strided.cuda.stream(s):`` makes ``s`` current (and its device); a no-op
    for ``None`` (torch.cuda.StreamContext)."""

    def __init__(self, stream: Stream | None):
        self.s = stream
        self.prev = None
        self.prev_dev = None

    def __enter__(self):
        if self.s is None:
            return self.s
        from . import device as devmod

        self.prev_dev = current_device()
        self.prev = current_stream(self.s.device_index)
        devmod._tls.index = self.s.device_index
        set_stream(self.s)
        return self.s

    def __exit__(self, *exc):
        if self.s is None:
            return False
        from . import device as devmod

        set_stream(self.prev)
        devmod._tls.index = self.prev_dev
        return False


def stream(stream: Stream | None) -> StreamContext:
    """``with strided.cuda.stream(s):`` runs the block with ``s`` as the current stream (torch.cuda.stream)."""
    return StreamContext(stream)
