"""``strided.backends.mkldnn``: torch's oneDNN flags, for scripts that set them (Note [Backends strided lacks]).

strided has no oneDNN: ``is_available()`` is False; ``enabled``, ``deterministic`` and the float32 precision
flags are kept, with torch's defaults, so a script may set and read them back, but they select nothing.
"""

from __future__ import annotations

import contextlib

__all__ = ["is_available", "flags"]

# torch's defaults (torch/backends/mkldnn/__init__.py)
enabled = True
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    """Whether strided is built with oneDNN (MKL-DNN) support: it is not (Note [Backends strided lacks])."""
    return False


@contextlib.contextmanager
def flags(enabled=False, deterministic=False, allow_tf32=True):
    """Set the flags inside a ``with`` block and restore them after (torch.backends.mkldnn.flags)."""
    module = globals()
    names = ("enabled", "deterministic", "allow_tf32")
    saved = {n: module[n] for n in names}
    module.update(zip(names, (enabled, deterministic, allow_tf32)))
    try:
        yield
    finally:
        module.update(saved)
