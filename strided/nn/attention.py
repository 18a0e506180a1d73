"""``strided.nn.attention``: which scaled-dot-product-attention implementations may run (torch's API).

Note [One attention implementation]
torch chooses among fused kernels (flash, memory-efficient, cuDNN) and the math reference for
``scaled_dot_product_attention``; ``sdpa_kernel`` and ``strided.backends.cuda.enable_*_sdp`` switch
them on and off. strided has one implementation, the math one (softmax(QKᵀ·scale + mask)·V in
strided ops, nn/functional.py). The switches are kept with torch's defaults and meanings: while the
math backend is switched off, attention raises torch's "No viable backend" error, because nothing
strided has may run; switching a fused backend on changes nothing, since strided has none to run.
"""

from __future__ import annotations

import contextlib
from enum import IntEnum

__all__ = ["SDPBackend", "sdpa_kernel"]


class SDPBackend(IntEnum):
    """An attention implementation, with torch's values."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


# switched on or off; torch's defaults: everything on
_enabled = {b: True for b in SDPBackend if b is not SDPBackend.ERROR}


def backend_enabled(backend: SDPBackend) -> bool:
    return _enabled[backend]


def set_backend_enabled(backend: SDPBackend, on: bool) -> None:
    _enabled[backend] = bool(on)


def check_math_enabled() -> None:
    """Raise torch's error when strided's one implementation is off (Note [One attention implementation])."""
    if not _enabled[SDPBackend.MATH]:
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This is likely due to "
                           "turning off both the math kernel and the fused kernels.")


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority: bool = False):
    """Allow only ``backends`` (one SDPBackend or a list) inside the block, then restore the switches.

    ``set_priority`` orders torch's choice among several fused kernels; strided has none, so the
    order changes nothing (Note [One attention implementation])."""
    chosen = [backends] if isinstance(backends, SDPBackend) else backends
    if not isinstance(chosen, (list, tuple)) or not all(isinstance(b, SDPBackend) for b in chosen):
        raise TypeError("Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
                        f"{type(backends).__name__}")
    saved = dict(_enabled)
    for b in _enabled:
        _enabled[b] = b in chosen
    try:
        yield
    finally:
        _enabled.update(saved)
