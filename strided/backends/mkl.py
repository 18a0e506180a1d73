"""``strided.backends.mkl``: torch's MKL query; strided does not link MKL (Note [Backends strided lacks])."""

from __future__ import annotations

__all__ = ["is_available"]


def is_available() -> bool:
    """Whether strided is built with MKL support: it is not (Note [Backends strided lacks])."""
    return False
