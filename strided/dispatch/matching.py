"""Overload resolution: does a call's arguments fit a schema? (torch's PythonArgParser, small)."""

from __future__ import annotations

import numbers

import numpy as np

from ..dtypes import dtype as _dtype
from ..tensor import Tensor

__all__ = ["matches", "describe_call"]


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _is_scalar(x) -> bool:
    return isinstance(x, (numbers.Number, np.bool_, np.number)) and not isinstance(x, Tensor)


def _fits(value, typ) -> bool:
    if value is None:
        return typ.optional
    base = typ.base
    if typ.is_list:
        if base == "int" or base == "SymInt":
            if _is_int(value):
                return True  # int[1] accepts a bare int, as torch does
            if isinstance(value, Tensor):
                return False
        if not isinstance(value, (list, tuple)):
            return False
        if base == "Tensor":
            return all(isinstance(v, Tensor) or (v is None and typ.elem_optional) for v in value)
        return all(_fits(v, type(typ)(base)) for v in value)
    if base == "Tensor":
        return isinstance(value, Tensor)
    if base == "Scalar":
        return _is_scalar(value)
    if base in ("int", "SymInt"):
        return _is_int(value) or (isinstance(value, Tensor) and value.dim() == 0 and
                                  value.dtype.category == 1)
    if base == "float":
        return _is_scalar(value) and not isinstance(value, (bool, np.bool_))
    if base == "bool":
        return isinstance(value, (bool, np.bool_))
    if base == "str":
        return isinstance(value, str)
    if base == "ScalarType":
        return isinstance(value, _dtype)
    if base == "Device":
        from ..device import device

        return isinstance(value, (str, device, int))
    if base == "MemoryFormat":
        return isinstance(value, str)
    return True  # Generator, Storage, Layout: checked by the kernel


# Note [Optional without default]
# ``int? to`` with no default (random_.from's) may be None but must be passed, as in torch's
# Python argument parser: only a default makes an argument omissible. So ``x.random_(5)`` binds
# ``random_.to`` instead of ``random_.from`` with ``to`` missing.
def matches(schema, args, kwargs) -> bool:
    """True if ``args``/``kwargs`` bind to ``schema``'s arguments with compatible types."""
    arguments = schema.arguments
    positional = [a for a in arguments if not a.kwarg_only]
    if len(args) > len(positional):
        return False
    for value, arg in zip(args, positional):
        if not _fits(value, arg.type):
            return False
    names = {a.name: a for a in arguments}
    for k, v in kwargs.items():
        arg = names.get(k)
        if arg is None or (not arg.kwarg_only and positional.index(arg) < len(args)):
            return False
        if not _fits(v, arg.type):
            return False
    for i, arg in enumerate(arguments):
        given = (not arg.kwarg_only and i < len(args)) or arg.name in kwargs
        if not given and not arg.has_default:  # Note [Optional without default]
            return False
    return True


def describe_call(args, kwargs) -> str:
    def name(v):
        if isinstance(v, Tensor):
            return "Tensor"
        if isinstance(v, (list, tuple)):
            return f"{type(v).__name__} of [{', '.join(name(x) for x in v)}]"
        return type(v).__name__

    parts = [name(a) for a in args] + [f"{k}={name(v)}" for k, v in kwargs.items()]
    return f"({', '.join(parts)})"
