"""``custom_fwd`` / ``custom_bwd``: autocast for a custom ``autograd.Function`` (torch.amp's).

A ``Function``'s backward runs outside the autocast region its forward ran in, so ops inside it would
run in other dtypes than the forward's. ``custom_fwd`` records the forward's autocast state on
``ctx`` (or, with ``cast_inputs``, casts the floating inputs of ``device_type`` to that dtype and
runs the forward with autocast off); ``custom_bwd`` runs the backward under the recorded state.
"""

from __future__ import annotations

import functools

from .autocast_mode import autocast, get_autocast_dtype, is_autocast_enabled
from .policies import _cast

__all__ = ["custom_fwd", "custom_bwd"]


def _check_device_type(device_type) -> None:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


def _cast_all(value, dtype, device_type: str):
    if isinstance(value, dict):
        return {k: _cast_all(v, dtype, device_type) for k, v in value.items()}
    return _cast(value, dtype, device_type)


def custom_fwd(fwd=None, *, device_type: str, cast_inputs=None):
    """Decorate a ``Function.forward`` (see the module docstring); usable with or without arguments."""
    _check_device_type(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if not is_autocast_enabled(device_type):
            return fwd(*args, **kwargs)
        with autocast(device_type, enabled=False):
            return fwd(*_cast_all(args, cast_inputs, device_type), **_cast_all(kwargs, cast_inputs, device_type))

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type: str):
    """Decorate a ``Function.backward`` to run under the autocast state its forward recorded."""
    _check_device_type(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd
