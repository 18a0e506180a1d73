"""torch.backends.cuda's attention switches (``enable_flash_sdp`` ...), over ``strided.nn.attention``'s
state (Note [One attention implementation]). Importing this never touches the driver."""

from __future__ import annotations

import contextlib
import warnings

from ...nn.attention import SDPBackend, backend_enabled, set_backend_enabled

__all__ = [
    "enable_flash_sdp", "flash_sdp_enabled", "enable_mem_efficient_sdp", "mem_efficient_sdp_enabled",
    "enable_math_sdp", "math_sdp_enabled", "enable_cudnn_sdp", "cudnn_sdp_enabled", "sdp_kernel",
]


def enable_flash_sdp(enabled: bool) -> None:
    """Allow or forbid flash attention (strided has none to run)."""
    set_backend_enabled(SDPBackend.FLASH_ATTENTION, enabled)


def flash_sdp_enabled() -> bool:
    return backend_enabled(SDPBackend.FLASH_ATTENTION)


def enable_mem_efficient_sdp(enabled: bool) -> None:
    """Allow or forbid memory-efficient attention (strided has none to run)."""
    set_backend_enabled(SDPBackend.EFFICIENT_ATTENTION, enabled)


def mem_efficient_sdp_enabled() -> bool:
    return backend_enabled(SDPBackend.EFFICIENT_ATTENTION)


def enable_math_sdp(enabled: bool) -> None:
    """Allow or forbid the math implementation, the one strided has."""
    set_backend_enabled(SDPBackend.MATH, enabled)


def math_sdp_enabled() -> bool:
    return backend_enabled(SDPBackend.MATH)


def enable_cudnn_sdp(enabled: bool) -> None:
    """Allow or forbid cuDNN attention (strided has no cuDNN)."""
    set_backend_enabled(SDPBackend.CUDNN_ATTENTION, enabled)


def cudnn_sdp_enabled() -> bool:
    return backend_enabled(SDPBackend.CUDNN_ATTENTION)


@contextlib.contextmanager
def sdp_kernel(enable_flash: bool = True, enable_math: bool = True, enable_mem_efficient: bool = True,
               enable_cudnn: bool = True):
    """torch's deprecated switch block; use ``strided.nn.attention.sdpa_kernel``."""
    warnings.warn("`strided.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager will be "
                  "removed. Please see `strided.nn.attention.sdpa_kernel()` for the new context manager, with updated "
                  "signature.", FutureWarning, stacklevel=3)
    switches = ((SDPBackend.FLASH_ATTENTION, enable_flash), (SDPBackend.MATH, enable_math),
                (SDPBackend.EFFICIENT_ATTENTION, enable_mem_efficient), (SDPBackend.CUDNN_ATTENTION, enable_cudnn))
    saved = [(b, backend_enabled(b)) for b, _ in switches]
    for b, on in switches:
        set_backend_enabled(b, on)
    try:
        yield
    finally:
        for b, on in saved:
            set_backend_enabled(b, on)
