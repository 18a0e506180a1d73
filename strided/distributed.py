"""``strided.distributed``: torch.distributed's availability queries; strided has no process groups.

Note [No process groups]
torch.distributed runs collectives over a process-group back end (NCCL, Gloo); strided has none, so
``is_available()`` is False, as in a torch build without the package, and ``is_initialized()`` is False.
Training scripts guard their distributed code with these two (``if dist.is_available() and
dist.is_initialized(): ...``), so they run here as one process. Any other name -- ``init_process_group``,
``get_rank``, ``all_reduce`` -- raises an AttributeError that says so, rather than the bare "no attribute"
of a build without the package (``hasattr`` still answers False). A DistributedSampler is given its
``num_replicas`` and ``rank`` (Note [Distributed sampling without torch.distributed]).
"""

from __future__ import annotations

__all__ = ["is_available", "is_initialized"]


def is_available() -> bool:
    """Whether a process-group back end exists: never in strided (Note [No process groups])."""
    return False


def is_initialized() -> bool:
    """Whether the default process group has been initialized: never in strided (Note [No process groups])."""
    return False


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError(
        f"strided.distributed.{name}: strided has no process-group back end (NCCL, Gloo), so "
        f"strided.distributed.is_available() is False; run as one process (Note [No process groups])"
    )
