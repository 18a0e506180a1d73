"""``strided.cuda.amp``: torch's deprecated spellings of ``strided.amp`` for CUDA.

``strided.cuda.amp.autocast(...)`` is ``strided.amp.autocast("cuda", ...)`` and
``strided.cuda.amp.GradScaler(...)`` is ``strided.amp.GradScaler("cuda", ...)``; each warns as
torch's does (FutureWarning), so scripts written against them run and learn the new name.
"""

from __future__ import annotations

import warnings

from .. import dtypes as _dt
from ..amp import GradScaler as _GradScaler
from ..amp import autocast as _autocast

__all__ = ["autocast", "GradScaler"]


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
