"""``strided.autocast``: run eligible ops in lower precision inside a region (torch.autocast).

The state is per thread and per device type ("cpu", "cuda"): enabled or not, and the lower
precision dtype (CPU: bfloat16 by default, CUDA: float16). While it is enabled, the dispatcher
adds the Autocast bit to the keyset of every op whose tensors are on that device (Note [Autocast
state] in strided/dispatch/dispatcher.py), and ops that have an Autocast kernel
(``strided.amp.policies``) cast their floating inputs before running below Autocast.
"""

from __future__ import annotations

import functools
import threading
import warnings

from .. import dtypes as _dt
from ..dispatch.dispatcher import autocast_state
from ..dispatch.keys import DispatchKey
from .cast_cache import (
    autocast_decrement_nesting,
    autocast_increment_nesting,
    clear_autocast_cache,
    is_autocast_cache_enabled,
    set_autocast_cache_enabled,
)

__all__ = [
    "autocast", "is_autocast_available", "is_autocast_enabled", "set_autocast_enabled",
    "get_autocast_dtype", "set_autocast_dtype", "DEPRECATED_FUNCTIONS",
]

# Backend key bit of each device type that supports autocast (bit k = DispatchKey k).
_DEVICE_BITS = {"cpu": 1 << DispatchKey.CPU, "cuda": 1 << DispatchKey.CUDA}
_DEFAULT_DTYPES = {"cpu": _dt.bfloat16, "cuda": _dt.float16}
_SUPPORTED = {"cpu": (_dt.bfloat16, _dt.float16), "cuda": (_dt.float16, _dt.bfloat16)}
_UNSUPPORTED_MSG = {
    "cpu": "In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
           "CPU Autocast only supports dtypes of strided.bfloat16, strided.float16 currently.",
    "cuda": "In CUDA autocast, but the target dtype is not supported. Disabling autocast.\n"
            "CUDA Autocast only supports dtypes of strided.float16 and strided.bfloat16 currently.",
}
_count_lock = threading.Lock()


class _Dtypes(threading.local):
    def __init__(self):
        self.dtype = dict(_DEFAULT_DTYPES)
        self.counted = False  # whether this thread adds 1 to autocast_state.active


_local = _Dtypes()


def _check_device_type(device_type: str) -> str:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if device_type not in _DEVICE_BITS:
        raise RuntimeError(
            f"User specified an unsupported autocast device_type '{device_type}'; strided supports "
            f"autocast on {', '.join(_DEVICE_BITS)}"
        )
    return device_type


def _set_mask(mask: int) -> None:
    """Set this thread's device mask and keep the process-wide count of autocasting threads."""
    autocast_state.tls.mask = mask
    if bool(mask) != _local.counted:
        with _count_lock:
            autocast_state.active += 1 if mask else -1
        _local.counted = bool(mask)


def is_autocast_available(device_type: str) -> bool:
    """Whether ``device_type`` supports autocast ("cpu" and "cuda")."""
    return device_type in _DEVICE_BITS


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether autocast is enabled for ``device_type`` in this thread."""
    return bool(autocast_state.tls.mask & _DEVICE_BITS[_check_device_type(device_type)])


def set_autocast_enabled(device_type: str, enabled: bool) -> None:
    """Enable or disable autocast for ``device_type`` in this thread (prefer ``with autocast``)."""
    bit = _DEVICE_BITS[_check_device_type(device_type)]
    mask = autocast_state.tls.mask
    _set_mask(mask | bit if enabled else mask & ~bit)


def get_autocast_dtype(device_type: str) -> _dt.dtype:
    """The lower-precision dtype autocast uses for ``device_type`` in this thread."""
    return _local.dtype[_check_device_type(device_type)]


def set_autocast_dtype(device_type: str, dtype: _dt.dtype) -> None:
    """Set the lower-precision dtype for ``device_type`` in this thread."""
    _local.dtype[_check_device_type(device_type)] = dtype


class autocast:  # noqa: N801 - torch's name
    """Context manager (and decorator) enabling mixed precision for one device type.

    Parameters
    ----------
    device_type : str
        "cpu" or "cuda".
    dtype : strided.dtype, optional
        The lower precision: float16 or bfloat16 (default: bfloat16 on CPU, float16 on CUDA).
    enabled : bool
        ``False`` disables autocast inside the region (nesting restores the outer state).
    cache_enabled : bool, optional
        Whether the region casts each float32 weight to ``dtype`` once and reuses the copy (Note [Autocast cast
        cache]); default: :func:`strided.is_autocast_cache_enabled` (True unless turned off).

    Inside the region, matmul-like ops (mm, bmm, addmm, baddbmm, matmul, linear) run in ``dtype``;
    ops that need range or precision (softmax, log_softmax, layer_norm, sums, losses, exp, log,
    pow ... per torch's lists for the device) run in float32; float64 and non-floating tensors
    are never cast. Backward passes run the ops autograd recorded, in the dtypes they ran in.

    Examples
    --------
    >>> with strided.autocast("cpu"):
    ...     y = model(x)          # linear layers in bfloat16
    ...     loss = F.cross_entropy(y, target)  # float32
    """

    def __init__(self, device_type: str, dtype: _dt.dtype | None = None, enabled: bool = True,
                 cache_enabled: bool | None = None):
        self.device = _check_device_type(device_type)
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        if not isinstance(self.fast_dtype, _dt.dtype):
            raise TypeError(f"autocast: dtype must be a strided.dtype, got {dtype!r}")
        self._enabled = bool(enabled)
        if self._enabled and self.fast_dtype not in _SUPPORTED[self.device]:
            warnings.warn(_UNSUPPORTED_MSG[self.device], stacklevel=2)
            self._enabled = False
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None else bool(cache_enabled)
        self._saved: list[tuple[int, _dt.dtype, bool]] = []

    def __enter__(self) -> autocast:
        mask = autocast_state.tls.mask
        self._saved.append((mask, _local.dtype[self.device], is_autocast_cache_enabled()))
        _local.dtype[self.device] = self.fast_dtype
        bit = _DEVICE_BITS[self.device]
        _set_mask(mask | bit if self._enabled else mask & ~bit)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, *exc) -> None:
        mask, dtype, cache_enabled = self._saved.pop()
        if autocast_decrement_nesting() == 0:  # left the outermost region: drop the cached casts
            clear_autocast_cache()
        _local.dtype[self.device] = dtype
        _set_mask(mask)
        set_autocast_cache_enabled(cache_enabled)

    def __call__(self, func):
        """Use as a decorator: each call of ``func`` runs inside a fresh region."""

        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return func(*args, **kwargs)

        return decorated

    def __repr__(self) -> str:
        return (f"autocast(device_type={self.device!r}, dtype={self.fast_dtype}, enabled={self._enabled}, "
                f"cache_enabled={self._cache_enabled})")


def _deprecated(old: str, new: str, fn):
    """torch's per-device autocast functions of before 2.4: ``fn`` with torch's DeprecationWarning."""
    def deprecated(*args):
        warnings.warn(f"strided.{old} is deprecated. Please use strided.{new} instead.", DeprecationWarning,
                      stacklevel=2)
        return fn(*args)

    deprecated.__name__ = old.partition("(")[0]
    deprecated.__doc__ = f"Deprecated: ``strided.{new}``."
    return deprecated


# torch.get_autocast_cpu_dtype() and friends: bound on ``strided`` by its __init__
DEPRECATED_FUNCTIONS = {f.__name__: f for f in (
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')", lambda: get_autocast_dtype("cpu")),
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')", lambda: get_autocast_dtype("cuda")),
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')", lambda: is_autocast_enabled("cpu")),
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)",
                lambda enabled: set_autocast_enabled("cpu", enabled)),
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)",
                lambda dtype: set_autocast_dtype("cpu", dtype)),
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)",
                lambda dtype: set_autocast_dtype("cuda", dtype)),
)}
