"""Autocast around the functions strided composes in Python where torch has native kernels (``strided.linalg``).

Note [Autocast around composed functions]
Most of torch.linalg is native kernels. Under autocast such a function's inputs are cast by its own policy (torch's
CPU float32 list holds inv, solve, cholesky, qr, svd, eigh, lstsq, cond ...; the CUDA lists hold none of them) and
nothing inside it is cast again: an Autocast kernel runs the op below Autocast. strided composes those functions of
ops above the dispatcher, so unguarded, the matmuls inside one would be autocast to the low dtype: precision torch
does not lose, and an error where the next step takes no bfloat16 (``strided.linalg.inv(x)`` under CPU autocast).
:func:`as_native` wraps such a function: while autocast is on for its input's device, eligible inputs are cast to
float32 (or the low dtype) where torch's lists say so, and the body runs with that device's autocast off, as a native
kernel would. The functions torch itself composes (pinv, matrix_norm, multi_dot, matrix_power ...) stay unwrapped:
their inner ops autocast in torch as well. Outside autocast the wrapper costs one thread-local read.
"""

from __future__ import annotations

import functools

from .. import dtypes as _dt
from ..dispatch.dispatcher import autocast_state
from .autocast_mode import _DEVICE_BITS, _local
from .policies import _cast, _device_type

__all__ = ["as_native", "wrap_native"]


def as_native(fn, casts: dict | None = None):
    """``fn`` run as a native kernel under autocast (Note [Autocast around composed functions]); ``casts`` maps a
    device type to torch's policy for it: "fp32" (eligible inputs to float32) or "low" (to the autocast dtype)."""
    tls = autocast_state.tls
    casts = casts or {}

    @functools.wraps(fn)
    def native(*args, **kwargs):
        mask = tls.mask
        if not mask:
            return fn(*args, **kwargs)
        device_type = _device_type(args, kwargs)
        bit = _DEVICE_BITS.get(device_type, 0)
        if not mask & bit:
            return fn(*args, **kwargs)
        policy = casts.get(device_type)
        if policy is not None:
            target = _dt.float32 if policy == "fp32" else _local.dtype[device_type]
            args = _cast(args, target, device_type)
            kwargs = {k: _cast(v, target, device_type) for k, v in kwargs.items()}
        tls.mask = mask & ~bit
        try:
            return fn(*args, **kwargs)
        finally:
            tls.mask = mask

    return native


def wrap_native(namespace: dict, names, cpu_fp32=(), low=(), fp32=()) -> None:
    """Replace each function ``names`` of a module's ``namespace`` by :func:`as_native` of it; those in ``cpu_fp32``
    also cast eligible CPU inputs to float32 (torch's CPU float32 list), those in ``fp32`` on either device (both
    lists), those in ``low`` eligible inputs on either device to the autocast dtype (torch's lower-precision
    lists)."""
    for name in names:
        if name in fp32:
            casts = {"cpu": "fp32", "cuda": "fp32"}
        elif name in cpu_fp32:
            casts = {"cpu": "fp32"}
        else:
            casts = {"cpu": "low", "cuda": "low"} if name in low else {}
        namespace[name] = as_native(namespace[name], casts)
