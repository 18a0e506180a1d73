"""torch's Python-binding type checks of an argument, in its words.

Functions that strided writes in Python where torch has a generated binding (the ATen forms, torch.linalg)
check their arguments' types before any work, so a wrong type fails as torch's does --
``conv_tbc(): argument 'pad' (position 4) must be int, not float`` -- not as an ``AttributeError`` deep
inside. The schema-driven dispatcher makes the same checks for the ops of the YAML (matching.py).
"""

from __future__ import annotations

import numbers

import numpy as np

from ..tensor import Tensor

__all__ = ["check_args", "arg_tensor", "arg_bool", "type_name", "NUMBERS", "refuse_tensor_argument",
           "refuse_tensor_list", "refuse_list_element"]


def type_name(value) -> str:
    """A type as torch's binding errors name it: ``str``, ``NoneType``, ``numpy.ndarray``."""
    t = type(value)
    own = t.__module__ == "builtins" or t.__module__.startswith("strided")  # strided's Tensor is "Tensor", as torch's
    return t.__name__ if own else f"{t.__module__}.{t.__qualname__}"


# Note [Non-tensor arguments]
# A kernel reads ``.dtype`` / ``.shape`` of its Tensor arguments, so ``strided.exp("a")`` or
# ``strided.dot(x, None)`` would fail deep inside with an AttributeError. The dispatcher's ``OpOverload._keyset``
# refuses, in torch's
# binding words (torch's Python binding calls ``self`` ``input``), a plain ``Tensor`` argument that is
# neither a tensor nor a number (a number is wrapped as a scalar where the op allows it) and an element of
# a ``Tensor[]`` that is not a tensor (None is allowed in ``Tensor?[]``). The keyset fast path sends a
# second or third argument that is neither a tensor nor a plain Python number there, so the common calls
# pay one set lookup, and only when an argument is a number. When no argument is a tensor at all, the
# first plain Tensor argument must be a tensor (``OpOverload._check_required_tensor`` in dispatcher.py).

# what a plain ``Tensor`` argument of an operator takes besides a tensor (wrapped as a scalar where the op allows)
NUMBERS = (numbers.Number, np.generic)


def _shown(name: str) -> str:
    return "input" if name == "self" else name  # torch's Python binding calls ``self`` ``input``


def refuse_tensor_argument(op: str, i: int, name: str, value) -> None:
    """An operator's plain Tensor argument ``i`` got neither a tensor nor a number (Note [Non-tensor arguments])."""
    raise TypeError(f"{op}(): argument '{_shown(name)}' (position {i + 1}) must be Tensor, not {type_name(value)}")


def refuse_tensor_list(op: str, i: int, name: str, value) -> None:
    """An operator's ``Tensor[]`` argument ``i`` got something that is not a list or tuple."""
    raise TypeError(f"{op}(): argument '{_shown(name)}' (position {i + 1}) must be tuple of Tensors, not "
                    f"{type_name(value)}")


def refuse_list_element(i: int, j: int, value) -> None:
    """Element ``j`` of an operator's ``Tensor[]`` argument ``i`` is not a tensor."""
    raise TypeError(f"expected Tensor as element {j} in argument {i}, but got {type_name(value)}")


def _fail(fn: str, name: str, position: int | None, kind: str, value) -> None:
    where = f" (position {position})" if position is not None else ""
    raise TypeError(f"{fn}(): argument '{name}'{where} must be {kind}, not {type_name(value)}")


def arg_tensor(fn: str, name: str, position: int | None, value) -> None:
    """A Tensor argument (``position`` None: a keyword-only one)."""
    if not isinstance(value, Tensor):
        _fail(fn, name, position, "Tensor", value)


def arg_bool(fn: str, name: str, value) -> None:
    """A keyword-only bool argument."""
    if not isinstance(value, bool):
        _fail(fn, name, None, "bool", value)


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


_KINDS = {  # kind -> (test, torch's word for it)
    "Tensor": (lambda v: isinstance(v, Tensor), "Tensor"),
    "int": (_is_int, "int"),
    "bool": (lambda v: isinstance(v, bool), "bool"),
    "float": (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool), "float"),
    "Number": (lambda v: isinstance(v, numbers.Number) and not isinstance(v, Tensor), "Number"),
    "int[]": (lambda v: isinstance(v, (tuple, list)) and all(_is_int(x) for x in v), "tuple of ints"),
}


def check_args(fn: str, *checks) -> None:
    """Each ``(name, position, value, kind)``: kind one of "Tensor", "int", "bool", "float", "Number", "int[]", with a
    trailing "?" allowing None; ``position`` None for a keyword-only argument."""
    for name, position, value, kind in checks:
        if value.__class__ is Tensor and kind[0] == "T" or value is None and kind[-1] == "?":
            continue  # the common cases, without a test call (the nn.functional forms check on every call)
        test, word = _KINDS[kind.rstrip("?")]
        if not test(value):
            _fail(fn, name, position, word, value)
