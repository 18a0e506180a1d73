"""Automatic mixed precision: ``autocast`` regions and ``GradScaler`` (torch.amp)."""

from __future__ import annotations

from .autocast_mode import (
    autocast,
    get_autocast_dtype,
    is_autocast_available,
    is_autocast_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)
from .custom_functions import custom_bwd, custom_fwd
from .grad_scaler import GradScaler
from .policies import register_autocast_kernels

register_autocast_kernels()

__all__ = [
    "autocast", "GradScaler", "is_autocast_available", "is_autocast_enabled", "set_autocast_enabled",
    "get_autocast_dtype", "set_autocast_dtype", "custom_fwd", "custom_bwd",
]
