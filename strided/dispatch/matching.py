"""Overload resolution: does a call's arguments fit a schema? (torch's PythonArgParser, small)."""

from __future__ import annotations

import numbers

import numpy as np

from ..dtypes import dtype as _dtype
from ..tensor import Tensor
from .packet import NUMBER_TYPES

__all__ = ["matches", "describe_call", "scalars_from_tensors"]


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _is_scalar(x) -> bool:
    return isinstance(x, (numbers.Number, np.bool_, np.number)) and not isinstance(x, Tensor)


def _fits(value, typ, scalar_tensors: bool = False, numbers: bool = False) -> bool:
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
    if base == "Tensor":  # Note [Numbers as tensors] (numbers_as_tensors.py) for ``numbers``
        return isinstance(value, Tensor) or (numbers and _is_scalar(value))
    if base == "Scalar":  # Note [Tensors as Scalars]
        return _is_scalar(value) or (scalar_tensors and isinstance(value, Tensor) and value.dim() == 0
                                     and not value._requires_grad)
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
def matches(schema, args, kwargs, scalar_tensors: bool = False, numbers: bool = False) -> bool:
    """True if ``args``/``kwargs`` bind to ``schema``'s arguments with compatible types (with
    ``scalar_tensors``, a 0-dim tensor binds to a Scalar too: Note [Tensors as Scalars]; with ``numbers``, a
    Python number to a Tensor other than ``out``: Note [Numbers as tensors])."""
    arguments = schema.arguments
    positional = [a for a in arguments if not a.kwarg_only]
    if len(args) > len(positional):
        return False
    for value, arg in zip(args, positional):
        if not _fits(value, arg.type, scalar_tensors, numbers):
            return False
    names = {a.name: a for a in arguments}
    for k, v in kwargs.items():
        arg = names.get(k)
        if arg is None or (not arg.kwarg_only and positional.index(arg) < len(args)):
            return False
        if not _fits(v, arg.type, scalar_tensors, numbers and k != "out"):
            return False
    for i, arg in enumerate(arguments):
        given = (not arg.kwarg_only and i < len(args)) or arg.name in kwargs
        if not given and not arg.has_default:  # Note [Optional without default]
            return False
    return True


# Note [Tensors as Scalars]
# torch's argument parser lets a 0-dim tensor that does not require grad stand for a Scalar or a float (``x.add(y,
# alpha=torch.tensor(2.))``), reading its value with ``item()``. strided matches the strict way first, so every
# call that binds today binds the same overload (``clamp(x, min=t)`` keeps clamp.Tensor and reads nothing from
# the device); only when no overload fits is the call matched again with 0-dim tensors allowed as Scalars, and
# the chosen overload is called with their values (``scalars_from_tensors``; a CUDA tensor's read waits for
# the device, as torch's does). A packet's lone overload is called without matching; there a 0-dim CPU tensor
# in a Scalar argument is read (``arange(lengths.max())``) and a 0-dim device tensor reaches the kernel. Any other
# tensor is refused as torch's parser refuses it (``F.elu(x, alpha=t)``: "argument 'alpha' (position 2) must be
# Number, not Tensor"), except by the lone overloads whose Scalar argument torch also takes as a Tensor in an
# overload strided folds into the Scalar one (clamp_min.Tensor, fill_.Tensor, lerp_.Tensor, ...): their kernels
# take the tensor.
_TENSOR_SCALARS = frozenset({"_foreach_addcdiv_", "clamp_max", "clamp_max_", "clamp_min", "clamp_min_", "fill_",
                             "lerp_", "linspace", "masked_fill_"})


def scalars_from_tensors(op, lone: bool = False):
    """``op`` behind a converter: the 0-dim tensors its call binds to Scalar arguments become Python numbers.

    ``lone``: ``op`` is its packet's only overload; there only 0-dim CPU tensors are read, 0-dim device tensors
    pass through, and other tensors pass only into the overloads of ``_TENSOR_SCALARS`` (``fill_``,
    ``masked_fill_``, ``clamp_min`` stand in for torch's ``.Tensor`` overloads).
    """
    arguments = op.schema.arguments
    names = [a.name for a in arguments if not a.kwarg_only]
    positional = [i for i, a in enumerate(a for a in arguments if not a.kwarg_only) if a.type.base in NUMBER_TYPES]
    named = {a.name for a in arguments if a.type.base in NUMBER_TYPES}
    words = {a.name: NUMBER_TYPES[a.type.base] for a in arguments if a.type.base in NUMBER_TYPES}

    def value(t, name):
        # the match is cached by argument types, so each call checks its own tensors as torch's parser does
        if t.dim() != 0 or t._requires_grad:
            if lone and op.schema.name in _TENSOR_SCALARS:
                return t
            position = f" (position {names.index(name) + 1})" if name in names else ""
            raise TypeError(f"{op.schema.name}(): argument '{name}'{position} must be {words[name]}, not Tensor")
        if lone and t.device.type != "cpu":
            return t
        return t.item()

    def call(*args, **kwargs):
        if any(i < len(args) and isinstance(args[i], Tensor) for i in positional):
            args = tuple(value(a, names[i]) if i in positional and isinstance(a, Tensor) else a
                         for i, a in enumerate(args))
        for k, v in kwargs.items():
            if k in named and isinstance(v, Tensor):
                kwargs[k] = value(v, k)
        return op(*args, **kwargs)

    return call


def describe_call(args, kwargs) -> str:
    def name(v):
        if isinstance(v, Tensor):
            return "Tensor"
        if isinstance(v, (list, tuple)):
            return f"{type(v).__name__} of [{', '.join(name(x) for x in v)}]"
        return type(v).__name__

    parts = [name(a) for a in args] + [f"{k}={name(v)}" for k, v in kwargs.items()]
    return f"({', '.join(parts)})"
