"""The CUDA streams of a backward pass (Note [Backward streams] in engine.py): which stream produced each
gradient, the waits between streams, and the caller's stream joining them at the end."""

from __future__ import annotations

import weakref

from ..tensor import Tensor

__all__ = ["mark_producer", "wait_producers", "wait_on_caller_stream", "sum_on_stream", "current_on_device_of",
           "join_streams"]

# The registry holds gradients weakly: a gradient summed into an input buffer, or consumed by a
# stream-less AccumulateGrad, must die (and free its memory) when the engine drops it, and
# AccumulateGrad can steal only a gradient nothing else references (Note [Accumulation]).
_PRODUCER: dict = {}  # id(grad) -> (stream that produced it, weakref to grad)
_CALLER: dict = {}  # device index -> the caller's current stream when backward started


def mark_producer(g: Tensor, stream) -> None:
    _PRODUCER[id(g)] = (stream, weakref.ref(g))


def wait_producers(buf: list, stream) -> None:
    """``stream`` waits for the streams that produced its input gradients (the caller's current
    stream for gradients the engine did not produce: the seeds of backward()), and each such
    gradient is recorded on ``stream`` so its memory is not reused on the producer's stream
    before ``stream`` has read it (torch's InputBuffer does the same)."""
    for g in buf:
        if g is None:
            continue
        entry = _PRODUCER.pop(id(g), None)
        if entry is not None and entry[1]() is g:
            producer = entry[0]
        else:
            from ..cuda import current_stream

            producer = _CALLER.setdefault(stream.device_index, current_stream(stream.device))
        if producer != stream:
            stream.wait_stream(producer)
            if g.device.type == "cuda":
                g.record_stream(stream)


# Note [Stream-less nodes]
# With more than one stream in play, two things run outside a CUDA node's stream: a node that
# has none (a leaf's AccumulateGrad made while the leaf was on the CPU and moved since, custom
# nodes) runs on the caller's current stream after it waited for the streams that produced its
# gradients; and the sum of two gradients meeting in one input buffer runs on the producing
# node's stream after it waited for the earlier gradient's producer, and counts as produced there.
def wait_on_caller_stream(buf: list) -> None:
    g = next((x for x in buf if x is not None), None)
    if g is not None and g.device.type == "cuda":
        from ..cuda import current_stream

        wait_producers(buf, current_stream(g.device))


def sum_on_stream(old: Tensor, g: Tensor, stream) -> Tensor:
    from ..cuda import stream as use_stream

    with use_stream(stream):
        wait_producers([old], stream)
        total = old + g
    mark_producer(total, stream)
    return total


# Note [One stream]
# The common CUDA case: every node recorded the same stream, and it is the caller's current one.
# Then there is nothing to order (one stream runs everything in issue order): nodes run without a
# stream guard and gradients are not registered. The first node on another stream ends that mode
# for the rest of the walk; gradients produced before it count as the caller stream's, which they are.
def current_on_device_of(stream):
    """The current stream of ``stream``'s device."""
    from ..cuda import current_stream

    return current_stream(stream.device)


def join_streams(streams: dict) -> None:
    from ..cuda import current_stream

    _PRODUCER.clear()
    _CALLER.clear()
    for s in streams.values():
        cur = current_stream(s.device)
        if cur != s:
            cur.wait_stream(s)
