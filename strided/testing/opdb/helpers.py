"""Helpers shared by the view, copy and factory OpInfos.

Note [Factory probes]
The runner moves a sample's *tensors* to each backend; a ``device=`` keyword would stay put. So a
factory sample's first argument is a tiny probe tensor and ``on_probe_device`` calls the factory
with ``device=probe.device``: the same samples then run on cpu, meta and cuda.
"""

from __future__ import annotations

import re

from ... import dtypes as dt
from ...ops import bound
from ..opinfo import ErrorInput, SampleInput, make_arg

__all__ = ["aliasing", "err", "on_probe_device", "probe"]


def err(args, exc, message, kwargs=None) -> ErrorInput:
    """An ErrorInput matching ``message`` literally."""
    return ErrorInput(SampleInput(tuple(args), kwargs or {}), exc, re.escape(message))


def aliasing(name: str):
    """The OpOverload ``name``, wrapped to assert that its results alias the input (any backend).

    A view shares its input's storage object and names the input's root tensor as ``_base``.
    """
    base, _, overload = name.partition(".")
    op = getattr(getattr(bound, base), overload or "default")

    def call(x, *args, **kwargs):
        out = op(x, *args, **kwargs)
        root = x if x._base is None else x._base
        for r in out if isinstance(out, list) else (out,):
            assert r.untyped_storage() is x.untyped_storage(), f"{name}: the result does not alias its input"
            assert r._base is root, f"{name}: the view's _base is not the input's root tensor"
        return out

    call.__name__ = name
    call.overloads = {op.overload_name: op}  # test_ops reads it to skip ops without a CUDA kernel
    return call


def on_probe_device(name: str):
    """The factory overload ``name`` called on the device of a leading probe tensor."""
    base, _, overload = name.partition(".")
    op = getattr(getattr(bound, base), overload or "default")

    def call(probe, *args, **kwargs):
        return op(*args, device=probe.device, **kwargs)

    call.__name__ = name
    call.overloads = {op.overload_name: op}  # test_ops reads it to skip ops without a CUDA kernel
    return call


def probe():
    """A 0-dim probe tensor (Note [Factory probes])."""
    return make_arg((), dt.float32)
