"""``strided.backends.openmp``: torch's OpenMP query; strided's CPU kernels do not use OpenMP
(Note [Backends strided lacks])."""

from __future__ import annotations

__all__ = ["is_available"]


def is_available() -> bool:
    """Whether strided is built with OpenMP support: it is not (Note [Backends strided lacks])."""
    return False
