"""``strided.cuda.amp``: torch's deprecated spellings of ``strided.amp`` for CUDA.

``strided.cuda.amp.autocast(...)`` is ``strided.amp.autocast("cuda", ...)`` and
``strided.cuda.amp.GradScaler(...)`` is ``strided.amp.GradScaler("cuda", ...)``, and
``custom_fwd`` / ``custom_bwd`` are ``strided.amp``'s with ``device_type="cuda"``; each warns as
torch's does (FutureWarning), so scripts written against them run and learn the new name.
"""

from __future__ import annotations

import warnings

from .. import dtypes as _dt
from ..amp import GradScaler as _GradScaler
from ..amp import autocast as _autocast
from ..amp import custom_bwd as _custom_bwd
from ..amp import custom_fwd as _custom_fwd

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


class autocast(_autocast):  # noqa: N801 - torch's name
    """``strided.amp.autocast("cuda", dtype, enabled)``; ``cache_enabled`` is accepted as torch's
    (strided's autocast keeps no cast cache, so there is nothing to switch)."""

    def __init__(self, enabled: bool = True, dtype: _dt.dtype = _dt.float16, cache_enabled: bool = True):
        warnings.warn("`strided.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`strided.amp.autocast('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", dtype=dtype, enabled=enabled)


class GradScaler(_GradScaler):
    """``strided.amp.GradScaler("cuda", ...)`` under torch's deprecated name."""

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True):
        warnings.warn("`strided.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`strided.amp.GradScaler('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """``strided.amp.custom_fwd(device_type="cuda")`` under torch's deprecated name."""
    warnings.warn("`strided.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
                  "`strided.amp.custom_fwd(args..., device_type='cuda')` instead.", FutureWarning, stacklevel=2)
    return _custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd):
    """``strided.amp.custom_bwd(device_type="cuda")`` under torch's deprecated name."""
    warnings.warn("`strided.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
                  "`strided.amp.custom_bwd(args..., device_type='cuda')` instead.", FutureWarning, stacklevel=2)
    return _custom_bwd(bwd, device_type="cuda")
