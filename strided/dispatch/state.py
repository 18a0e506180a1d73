"""The per-thread state every dispatch reads: grad mode and autocast (torch's thread-local
AutoGradMode / InferenceMode and autocast state), kept apart from the dispatcher that reads it."""

from __future__ import annotations

import threading

__all__ = ["GradMode", "grad_mode", "AutocastState", "autocast_state", "inference_threads", "set_inference"]


class GradMode(threading.local):
    """Per-thread grad mode read on every dispatch (``strided.autograd.grad_mode`` sets it).

    ``enabled``: record autograd graphs; ``inference``: inside ``inference_mode`` (torch's
    thread-local AutoGradMode / InferenceMode state: a new thread starts with grad enabled).
    """

    def __init__(self):
        self.enabled = True
        self.inference = False


grad_mode = GradMode()


class _Count:
    __slots__ = ("n",)

    def __init__(self):
        self.n = 0


# How many threads are inside inference mode now: a new storage reads this plain int, and this thread's
# ``grad_mode.inference`` only when it is not zero (a thread-local read costs several times more). Every
# change of ``grad_mode.inference`` goes through :func:`set_inference`.
inference_threads = _Count()
_count_lock = threading.Lock()  # threads enter and leave the mode at once; ``n += 1`` is not atomic


def set_inference(value: bool) -> None:
    """Set this thread's inference flag, keeping :data:`inference_threads` right."""
    if grad_mode.inference != value:
        with _count_lock:
            inference_threads.n += 1 if value else -1
        grad_mode.inference = value


# Note [Autocast state]
# torch keeps autocast per thread. A thread-local read on every dispatch would cost more than the
# rest of the keyset computation, so the hot path first reads ``active``: the number of threads
# with autocast enabled for some device (0 almost always, and then nothing else is read). Only when
# it is non-zero is this thread's ``tls.mask`` read: bit ``k`` set means the backend key ``k``
# (CPU, CUDA) is autocast in this thread. strided.amp.autocast_mode maintains both; an Autocast
# kernel clears ``tls.mask`` while it redispatches (torch's ExcludeDispatchKeyGuard).
class _AutocastTLS(threading.local):
    mask = 0  # every thread starts with autocast off


class AutocastState:
    """Process-wide count of autocasting threads plus the per-thread device mask."""

    __slots__ = ("active", "tls")

    def __init__(self):
        self.active = 0
        self.tls = _AutocastTLS()


autocast_state = AutocastState()
