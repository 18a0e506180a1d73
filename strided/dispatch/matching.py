"""Overload resolution: does a call's arguments fit a schema? (torch's PythonArgParser, small)."""

from __future__ import annotations

import numbers
import operator

import numpy as np

from ..dtypes import dtype as _dtype
from ..tensor import Tensor
from .packet import NUMBER_TYPES

__all__ = ["matches", "describe_call", "scalars_from_tensors", "argument_error", "plausible", "ints_from_tensors"]


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
    if base == "Generator":
        from ..random import Generator

        return isinstance(value, Generator)
    if base == "Storage":  # set_'s overloads: a storage (typed or not) here, a Tensor in source_Tensor
        from ..storage import UntypedStorage
        from ..typed_storage import TypedStorage

        return isinstance(value, (UntypedStorage, TypedStorage))
    return True  # Layout: checked by the kernel


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


# Note [One plausible overload]
# torch's argument parser names the offending argument when exactly one signature fits the call's arity and
# keyword names (``cat(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor``, ``expected Tensor
# as element 1 in argument 0, but got NoneType``), and lists the signatures only when several do. A packet's
# failed match does the same; so does a lone overload whose kernel raised on an argument of the wrong type
# (``gather(x, 0, 5)``: the kernel's AttributeError becomes the parser's TypeError), which costs nothing until a
# call fails.
_KINDS = {"Tensor": "Tensor", "int": "int", "SymInt": "int", "float": "float", "bool": "bool", "Scalar": "Number",
          "str": "str", "ScalarType": "strided.dtype", "Device": "strided.device", "MemoryFormat": "memory_format",
          "Generator": "strided.Generator"}


def plausible(schema, args, kwargs) -> bool:
    """Whether the call fits ``schema`` by the number of positional arguments and the keyword names alone."""
    arguments = schema.arguments
    positional = [a for a in arguments if not a.kwarg_only]
    if len(args) > len(positional):
        return False
    names = {a.name for a in arguments}
    given = {a.name for a in positional[:len(args)]}
    if any(k not in names or k in given for k in kwargs):
        return False
    return all(a.has_default or a.name in given or a.name in kwargs for a in arguments)


def argument_error(op_name: str, schema, args, kwargs) -> TypeError | None:
    """torch's parser error for the first argument of a call that does not fit ``schema``'s type (Note [One
    plausible overload]); None when every argument fits (Python numbers in Tensor arguments do not)."""
    from .argument_checks import type_name

    positional = [a for a in schema.arguments if not a.kwarg_only]
    named = {a.name: a for a in schema.arguments}
    bound = [(v, a, i) for i, (v, a) in enumerate(zip(args, positional))]
    bound += [(v, named[k], None) for k, v in kwargs.items() if k in named]
    for value, arg, i in bound:
        if _fits(value, arg.type, scalar_tensors=True) or (arg.type.base == "ScalarType" and isinstance(value, str)):
            continue  # a dtype's name is strided's own spelling of one (``dtype="float32"``)
        if arg.type.base in NUMBER_TYPES and isinstance(value, Tensor) and schema.name in _TENSOR_SCALARS:
            continue
        shown = "input" if arg.name == "self" else arg.name
        where = "" if i is None else f" (position {i + 1})"
        typ = arg.type
        if typ.is_list and isinstance(value, (list, tuple)) and typ.base == "Tensor":
            j = next(j for j, v in enumerate(value) if not (isinstance(v, Tensor) or (v is None and typ.elem_optional)))
            return TypeError(f"expected Tensor as element {j} in argument {i if i is not None else 0}, but got "
                             f"{type_name(value[j])}")
        kind = _KINDS.get(typ.base, typ.base)
        if typ.is_list and typ.base in ("int", "SymInt") and value is None:  # torch's parser words for None
            return TypeError(f"{op_name}(): argument '{shown}'{where} must be tuple of ints, but found element of "
                             "type NoneType at pos 0")
        if typ.is_list and typ.base in ("int", "SymInt") and isinstance(value, (list, tuple)):
            j = next(j for j, v in enumerate(value) if not _is_int(v))
            return TypeError(f"{op_name}(): argument '{shown}'{where} must be tuple of ints, but found element of "
                             f"type {type_name(value[j])} at pos {j}")
        if typ.is_list:
            kind = {"Tensor": "tuple of Tensors", "int": "tuple of ints", "float": "tuple of floats"}.get(
                "int" if typ.base == "SymInt" else typ.base, f"tuple of {kind}")
        return TypeError(f"{op_name}(): argument '{shown}'{where} must be {kind}, not {type_name(value)}")
    return None


# Note [Tensors as ints]
# torch's parser reads an int argument from a 0-dim integer tensor (``__index__``): ``topk(x, torch.tensor(2))``,
# ``sum(x, torch.tensor(1))`` for an ``int[1]`` dim, ``x.view(torch.tensor(3), 2)``. strided's strict matching
# already lets such a tensor into an ``int`` argument, and most kernels read it as an int; where an overload only
# fits once the tensors are ints (an ``int[]`` argument), or a lone overload's kernel fails on one (topk's NumPy
# call), the call is made again with the tensors read as Python ints (a device tensor's read waits for the device,
# as torch's does). Nothing changes, and nothing is paid, for a call that works as it is.
def _index_of(value):
    if isinstance(value, Tensor) and value.dim() == 0 and value.dtype.category == 1:
        return operator.index(value), True
    return value, False


def ints_from_tensors(schema, args, kwargs):
    """``(args, kwargs)`` with the 0-dim integer tensors in ``schema``'s int / int[] arguments read as ints, or None
    when there are none (Note [Tensors as ints])."""
    positional = [a for a in schema.arguments if not a.kwarg_only]
    named = {a.name: a for a in schema.arguments}
    changed = False

    def convert(value, typ):
        nonlocal changed
        if typ.base not in ("int", "SymInt"):
            return value
        if not typ.is_list:
            value, done = _index_of(value)
            changed |= done
            return value
        value_, done = _index_of(value)
        if done:
            changed = True
            return [value_]
        if isinstance(value, (list, tuple)):
            items = [_index_of(v) for v in value]
            if any(done for _, done in items):
                changed = True
                return type(value)(v for v, _ in items)
        return value

    new_args = tuple(convert(v, a.type) for v, a in zip(args, positional)) + tuple(args[len(positional):])
    new_kwargs = {k: (convert(v, named[k].type) if k in named else v) for k, v in kwargs.items()}
    return (new_args, new_kwargs) if changed else None
