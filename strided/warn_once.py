"""Warnings given once per process, and ``set_warn_always`` / ``is_warn_always_enabled`` (torch's
``TORCH_WARN_ONCE`` and its switch).

Note [Warn once]
torch gives some warnings -- deprecations, memory it cannot write-protect -- once per process, so a loop does not
repeat them; ``torch.set_warn_always(True)`` makes them appear every time (for debugging), and turning it off
again goes back to once. strided's such warnings go through :func:`warn_once`, keyed by what they are about, so
the switch governs them all.
"""

from __future__ import annotations

import os
import sys
import warnings

__all__ = ["set_warn_always", "is_warn_always_enabled", "warn_once"]

_always = False
_given: set = set()


def set_warn_always(b: bool) -> None:
    """When False (the default) some warnings appear only once per process; True makes them appear every time."""
    global _always
    if not isinstance(b, bool):
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    _always = b


def is_warn_always_enabled() -> bool:
    """Whether :func:`set_warn_always` is on."""
    return _always


def warn_once(key, message: str, category: type[Warning] = UserWarning, stacklevel: int | None = 2) -> None:
    """``warnings.warn(message, category)`` the first time ``key`` is seen, or every time under
    ``set_warn_always(True)`` (Note [Warn once]). ``stacklevel`` counts from the caller of warn_once; None names
    the first frame outside strided (a kernel reached through the dispatcher, whose depth varies)."""
    if _always or key not in _given:
        _given.add(key)
        if stacklevel is None:
            frame, level = sys._getframe(1), 1
            while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
                frame, level = frame.f_back, level + 1
            stacklevel = level
        warnings.warn(message, category, stacklevel=stacklevel + 1)


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
