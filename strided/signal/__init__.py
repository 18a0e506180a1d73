"""``strided.signal``: torch.signal's window functions (``strided.signal.windows``)."""

from __future__ import annotations

from . import windows

__all__ = ["windows"]
