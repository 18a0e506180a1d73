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
           "StreamContext", "get_stream_from_external"]


def get_stream_from_external(data_ptr: int, device=None) -> Stream:
    """A :class:`Stream` for a ``cudaStream_t`` made by another library (torch.cuda.get_stream_from_external):
    strided queues work on it and never destroys it; the caller keeps it alive while it is used."""
    return ExternalStream(data_ptr, device)
