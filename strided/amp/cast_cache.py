"""The autocast cast cache: a float32 weight's lower-precision copy, made once per autocast region.

Note [Autocast cast cache]
torch (``cached_cast`` in aten/src/ATen/autocast_mode.cpp) keeps, while an autocast region is open, the casts to
the autocast dtype of float32 leaves that require grad and are not views -- model weights. A weight used more than
once in a region (an RNN's weights at every time step, tied embeddings, several micro-batches under one region) is
cast once, autograd records one ToCopy node for it, and backward casts its gradient back once. The cache is
dropped when the thread leaves its outermost region (torch's nesting count: ``autocast`` increments it on entry and
clears the cache when its exit brings it back to 0), so no copy outlives the region, and ``cache_enabled=False``
(or :func:`set_autocast_cache_enabled`) turns it off.

Deviations, toward safety: torch keys the cache by the tensor alone, so a weight first cast under ``no_grad`` is
later handed back without history to a region that records gradients (its gradient silently lost), and a nested
region of another dtype gets the outer dtype's copy; here the key holds the target dtype and the grad mode too. A
weight changed in place inside the region (an optimizer step there) is cast again: an entry remembers the weight's
version counter (torch hands back the stale copy). And torch's map is one per process under a mutex; here each
thread has its own, as its nesting count. And no cast is taken from or put in the cache while a CUDA graph is being
captured: a graph that read a copy made before its capture would read freed memory at its replays once the region
dropped the copy (torch has this hazard; its make_graphed_callables refuses the cache, as strided's does). An entry
holds the source tensor itself beside the copy, so the ``id`` it is keyed by cannot be reused while it lives (torch
holds a weak pointer to the TensorImpl for that).
"""

from __future__ import annotations

import sys
import threading

from .. import dtypes as _dt
from ..dispatch.state import grad_mode

__all__ = ["cached_cast", "is_autocast_cache_enabled", "set_autocast_cache_enabled", "clear_autocast_cache",
           "autocast_increment_nesting", "autocast_decrement_nesting"]


class _CacheState(threading.local):
    def __init__(self):
        self.enabled = True
        self.nesting = 0
        self.casts: dict = {}


_state = _CacheState()


def _capturing() -> bool:
    """Whether a CUDA graph capture is underway (never, while strided's CUDA backend is not loaded)."""
    capture = sys.modules.get("strided.backends.cuda.capture")
    return capture is not None and capture.underway.n > 0


def cached_cast(x, dtype):
    """``x.to(dtype)`` for an eligible ``x`` and the autocast dtype, from the cache where torch's rule allows."""
    if (_state.enabled and x._requires_grad and x.dtype is _dt.float32 and x._base is None
            and (x._autograd is None or x._autograd.grad_fn is None) and not x._storage.inference
            and not _capturing()):
        key = (id(x), dtype, grad_mode.enabled)
        version = x._storage._version
        hit = _state.casts.get(key)
        if hit is not None and hit[2] == version:
            return hit[1]
        y = x.to(dtype)
        _state.casts[key] = (x, y, version)
        return y
    return x.to(dtype)


def is_autocast_cache_enabled() -> bool:
    """Whether autocast caches the casts of weights in this thread (torch.is_autocast_cache_enabled)."""
    return _state.enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Turn this thread's cast cache on or off (prefer ``autocast(..., cache_enabled=...)``)."""
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled must be a bool (got {type(enabled).__name__})")
    _state.enabled = enabled


def clear_autocast_cache() -> None:
    """Drop this thread's cached casts (``autocast`` does when its outermost region exits)."""
    _state.casts.clear()


def autocast_increment_nesting() -> int:
    """One more open autocast region in this thread; the new depth."""
    _state.nesting += 1
    return _state.nesting


def autocast_decrement_nesting() -> int:
    """One region fewer in this thread; the new depth (0: outside every region -- and, as torch's, below 0 when
    called more often than its counterpart)."""
    _state.nesting -= 1
    return _state.nesting
