"""``strided.Stream`` and ``strided.Event``: torch's device-generic stream and event classes.

Note [Device-generic streams]
Code written against ``torch.accelerator`` makes streams and events without naming CUDA: ``torch.Stream(device)``,
``torch.Event(device, enable_timing=True)``, and tests ``isinstance(s, torch.Stream)``. Here calling either class
makes the device's own kind: a ``strided.cuda.Stream`` / ``strided.cuda.Event`` (subclasses of these, so the
isinstance test holds) for CUDA -- the current accelerator, and so the default, as in a CUDA build of torch --, and
a host stream or event for the CPU and meta devices. A host device runs work as it is issued, as torch's CPU
"stream" does: a host stream is always complete and waiting on an event is a no-op, but recording an event (and so
``wait_stream`` and ``record_event``) is refused in torch's words, "cpu backend doesn't support events.". The
metaclass dispatches the call, so the CUDA classes construct exactly as before.
"""

from __future__ import annotations

from .device import device as _device
from .dispatch.argument_checks import check_args

__all__ = ["Stream", "Event"]


def _device_of(fn: str, device):
    if isinstance(device, bool) or (device is not None and not isinstance(device, (str, int, _device))):
        raise TypeError(f"{fn}(): argument 'device' must be strided.device, not {type(device).__name__}")
    if device is None:
        from .accelerator import current_accelerator

        device = current_accelerator() or "cpu"
    return _device(device)


class _DeviceGeneric(type):
    """Calling ``Stream`` / ``Event`` themselves makes the device's kind (Note [Device-generic streams])."""

    def __call__(cls, *args, **kwargs):
        if cls is Stream:
            return _new_stream(*args, **kwargs)
        if cls is Event:
            return _new_event(*args, **kwargs)
        return super().__call__(*args, **kwargs)


class Stream(metaclass=_DeviceGeneric):
    """``Stream(device=None, *, priority=0)``: a new stream on ``device`` (default: the current accelerator)."""

    __slots__ = ()

    @property
    def device_type(self) -> str:
        return self.device.type

    def is_capturing(self) -> bool:
        """Whether a CUDA graph capture is recording this stream's work (never, on a host device)."""
        return False


class Event(metaclass=_DeviceGeneric):
    """``Event(device=None, *, enable_timing=False, blocking=False, interprocess=False)``: an event of ``device``
    (default: the current accelerator)."""

    __slots__ = ()


def _new_stream(device=None, *, priority: int = 0) -> Stream:
    check_args("Stream", ("priority", None, priority, "int"))
    dev = _device_of("Stream", device)
    if dev.type == "cuda":
        from .cuda import Stream as CudaStream

        return CudaStream(dev, priority=priority)
    return _HostStream(dev)


def _new_event(device=None, *, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False):
    check_args("Event", ("enable_timing", None, enable_timing, "bool"), ("blocking", None, blocking, "bool"),
               ("interprocess", None, interprocess, "bool"))
    dev = _device_of("Event", device)
    if dev.type == "cuda":
        from .cuda import Event as CudaEvent

        return CudaEvent(enable_timing=enable_timing, blocking=blocking, interprocess=interprocess)
    return _HostEvent(dev, enable_timing)


class _HostStream(Stream):
    """The one stream of a host device (Note [Device-generic streams])."""

    __slots__ = ("device",)

    def __init__(self, dev):
        self.device = dev

    device_index = property(lambda self: -1 if self.device.index is None else self.device.index)
    stream_id = property(lambda self: 0)

    @property
    def native_handle(self):
        raise RuntimeError("Backend doesn't support getting stream native handle.")

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        return None

    def wait_event(self, event) -> None:
        return None

    def wait_stream(self, other) -> None:
        self.record_event()  # as torch's: waiting records an event on ``other``, which a host device refuses

    def record_event(self, event=None):
        raise RuntimeError(f"{self.device.type} backend doesn't support events.")

    def __eq__(self, other) -> bool:
        return isinstance(other, _HostStream) and other.device == self.device

    def __hash__(self) -> int:
        return hash(("stream", str(self.device)))

    def __repr__(self) -> str:
        return f"strided.Stream device_type={self.device.type}, device_index={self.device_index}, stream_id=0"


class _HostEvent(Event):
    """An event of a host device, which torch's host backends cannot record (Note [Device-generic streams])."""

    __slots__ = ("device", "enable_timing")

    def __init__(self, dev, enable_timing: bool):
        self.device, self.enable_timing = dev, enable_timing

    def record(self, stream=None) -> None:
        raise RuntimeError(f"{self.device.type} backend doesn't support events.")

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        return None

    def wait(self, stream=None) -> None:
        return None

    def elapsed_time(self, end) -> float:
        raise ValueError("Both events must be recorded before calculating elapsed time.")

    def __repr__(self) -> str:
        return f"strided.Event device_type={self.device.type}, device_index=-1, event_flag=0, event_id=0"
