"""``strided.cuda`` streams and events (torch.cuda.Stream / Event)."""

from __future__ import annotations

from ..backends.cuda.streams import (  # noqa: F401
    Event,
    ExternalStream,
    Stream,
    StreamContext,
    current_stream,
    default_stream,
    set_stream,
    stream,
)

__all__ = ["Stream", "ExternalStream", "Event", "current_stream", "default_stream", "set_stream", "stream",
           "StreamContext"]
