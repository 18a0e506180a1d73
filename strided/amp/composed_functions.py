"""Autocast around the functions strided composes in Python where torch has native kernels (``strided.linalg``).

Note [Autocast around composed functions]
Most of torch.linalg is native kernels. Under autocast such a function's inputs are cast by its own policy (torch's
CPU float32 list holds inv, solve, cholesky, qr, svd, eigh, lstsq, cond ...; the CUDA lists hold none of them) and
nothing inside it is cast again: an Autocast kernel runs the op below Autocast. strided composes those functions of
ops above the dispatcher, so unguarded, the matmuls inside one would be autocast to the low dtype: precision torch
does not lose, and an error where the next step takes no bfloat16 (``strided.linalg.inv(x)`` under CPU autocast).
:func:`as_native` wraps such a function: while autocast is on for its input's device, eligible inputs are cast to
float32 (or the low dtype) where torch's lists say so, and the body runs with that device's autocast off, as a native
kernel would. The functions torch itself composes (pinv, multi_dot, matrix_power ...) stay unwrapped: their inner
ops autocast in torch as well. Beyond linalg the same holds for torch's native pooling, padding, upsampling, grid
sampling, FFT, pdist and vector-norm kernels, wrapped where strided composes them (:func:`wrap_policies`, with
each device's policy: torch's CPU and CUDA lists differ, and a torch composite on one device -- cosine_similarity,
matrix_norm on the CPU -- is left to autocast inside there). Outside autocast the wrapper costs one thread-local
read.
"""

from __future__ import annotations

import functools

from .. import dtypes as _dt
from ..dispatch.dispatcher import autocast_state
from .autocast_mode import _DEVICE_BITS, _local
from .policies import _cast, _device_type, _eligible, _widest

__all__ = ["as_native", "wrap_native", "wrap_policies", "NATIVE", "CPU_FP32"]

NATIVE = {"cpu": "native", "cuda": "native"}  # a native kernel of torch's on neither list
CPU_FP32 = {"cpu": "fp32", "cuda": "native"}  # on torch's CPU float32 list only


def _apply(policy: str, args, kwargs, device_type: str):
    """``args`` and ``kwargs`` as torch's ``policy`` passes them to the kernel below Autocast
    (Note [Autocast policies] in policies.py)."""
    if policy == "fp32_set_opt_dtype":  # the functions wrapped here take ``dtype`` keyword-only
        if args and _eligible(args[0], device_type) and kwargs.get("dtype") is None:
            kwargs = {**kwargs, "dtype": _dt.float32}
        return args, kwargs
    if policy == "fp32":
        target = _dt.float32
    elif policy == "low":
        target = _local.dtype[device_type]
    elif policy == "promote":
        target = _widest(args, kwargs, device_type)
    else:  # "native": no cast, only autocast off inside
        return args, kwargs
    return _cast(args, target, device_type), {k: _cast(v, target, device_type) for k, v in kwargs.items()}


def as_native(fn, casts: dict | None = None):
    """``fn`` run as a native kernel under autocast (Note [Autocast around composed functions]); ``casts`` maps a
    device type to torch's policy for it -- "fp32", "low" (the autocast dtype), "promote", "fp32_set_opt_dtype"
    or "native" (no cast) -- or to a function of the call's arguments returning one (F.pad: by mode). On a device
    with no policy (or None) ``fn`` runs as a composite: its inner ops autocast, as torch's do."""
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
        if callable(policy):
            policy = policy(*args, **kwargs)
        if policy is None:  # composite on this device, as torch's: its inner ops autocast
            return fn(*args, **kwargs)
        args, kwargs = _apply(policy, args, kwargs, device_type)
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
        elif name in low:
            casts = {"cpu": "low", "cuda": "low"}
        else:
            casts = {"cpu": "fp32" if name in cpu_fp32 else "native", "cuda": "native"}
        namespace[name] = as_native(namespace[name], casts)


def wrap_policies(namespace: dict, table: dict) -> None:
    """Replace each function of a module's ``namespace`` named in ``table`` by :func:`as_native` of it with the casts
    ``table[name]`` (a device type -> policy mapping as :func:`as_native` takes)."""
    for name, casts in table.items():
        namespace[name] = as_native(namespace[name], casts)
