"""``strided.library.infer_schema``: an operator schema from a Python function's type annotations.

Note [Schemas from annotations]
``custom_op`` defines its operator from the function it decorates, as torch's does: each parameter's
annotation maps to a schema type (``Tensor``, ``Tensor?``, ``Tensor[]``, ``Tensor?[]``; ``int`` to ``SymInt``
and its optional / list forms; ``float``, ``bool`` likewise; ``str``; ``int | float | bool`` to ``Scalar``;
``strided.dtype`` to ``ScalarType``; ``strided.device`` to ``Device``), keyword-only parameters follow a ``*``,
defaults are written as torch writes them (``1.0`` as ``1.0``, a dtype by its name, a string quoted), and each
argument named in ``mutates_args`` (or every Tensor argument for ``"unknown"``) becomes ``Tensor(a<i>!)``, ``i``
being its position. The return annotation gives ``Tensor``, ``Tensor[]``, a tuple of these, a number, or
``()`` for None. Anything else is refused with torch's words, naming the parameter.
"""

from __future__ import annotations

import collections.abc
import inspect
import typing
from types import GenericAlias

from ..device import device as _device
from ..dtypes import dtype as _dtype
from ..tensor import Tensor

__all__ = ["infer_schema"]

UNKNOWN_MUTATES = "unknown"


def _sequences(t) -> tuple:
    return (typing.Sequence[t], typing.List[t], GenericAlias(collections.abc.Sequence, (t,)),  # noqa: UP006
            GenericAlias(list, (t,)))


def _derived(base, name: str, lists: bool, optional_elements: bool, optional_lists: bool) -> list:
    """(annotation, schema type) pairs of one base type, as torch's ``derived_types``."""
    out = [(base, name), (typing.Optional[base], f"{name}?")]  # noqa: UP045
    if lists:
        out += [(s, f"{name}[]") for s in _sequences(base)]
    if optional_elements:
        out += [(s, f"{name}?[]") for s in _sequences(typing.Optional[base])]  # noqa: UP045
    if optional_lists:
        out += [(typing.Optional[s], f"{name}[]?") for s in _sequences(base)]  # noqa: UP045
    return out


_SCALAR = typing.Union[int, float, bool]  # noqa: UP007

PARAM_TYPES = dict(
    _derived(Tensor, "Tensor", True, True, False) + _derived(int, "SymInt", True, False, True)
    + _derived(float, "float", True, False, True) + _derived(bool, "bool", True, False, True)
    + _derived(str, "str", False, False, False) + _derived(_SCALAR, "Scalar", True, False, False)
    + _derived(_dtype, "ScalarType", False, False, False) + _derived(_device, "Device", False, False, False)
)
RETURN_TYPES = {None: "()", Tensor: "Tensor", typing.List[Tensor]: "Tensor[]",  # noqa: UP006
                list[Tensor]: "Tensor[]", int: "SymInt", float: "float", bool: "bool"}


def _resolve(annotation, fn):
    """A string annotation (``from __future__ import annotations``) evaluated in the function's module."""
    if not isinstance(annotation, str):
        return annotation
    scope = dict(getattr(fn, "__globals__", {}))
    import strided

    scope.setdefault("strided", strided)
    try:
        return eval(annotation, scope)  # noqa: S307 - the function's own annotation text
    except Exception as e:
        raise ValueError(f"infer_schema(func): Unsupported type annotation {annotation}. It is not a type. "
                         f"({type(e).__name__}: {e})") from None


def _default_text(value, name: str, fail) -> str:
    if value is None or isinstance(value, (bool, int, float)):
        return str(value)
    if isinstance(value, (str, _device)):
        return f'"{value}"'
    if isinstance(value, _dtype):
        return str(value).removeprefix("strided.")
    fail(f"Parameter {name} has an unsupported default value type {type(value)}.")
    return ""


def _return_text(annotation, fail) -> str:
    if annotation is inspect.Parameter.empty:
        fail("No return type annotation was provided. Please add one.")
    if typing.get_origin(annotation) is not tuple:
        if annotation not in RETURN_TYPES:
            fail(f"Return has unsupported type {annotation}. The valid types are: {list(RETURN_TYPES)}.")
        return RETURN_TYPES[annotation]
    parts = typing.get_args(annotation)
    for a in parts:
        if a not in RETURN_TYPES or a is None:
            fail(f"Return has unsupported type {annotation}. The valid types are: {list(RETURN_TYPES)}.")
    return "(" + ", ".join(RETURN_TYPES[a] for a in parts) + ")"


def infer_schema(prototype_function, /, *, mutates_args, op_name: str | None = None) -> str:
    """The schema torch would infer for ``prototype_function`` (Note [Schemas from annotations]):
    ``"(Tensor x, SymInt n) -> Tensor"``, or ``"name(...) -> ..."`` with ``op_name``."""
    sig = inspect.signature(prototype_function)

    def fail(what: str):
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

    if isinstance(mutates_args, str):
        if mutates_args != UNKNOWN_MUTATES:
            raise ValueError("mutates_args must either be a sequence of the names of the arguments that are "
                             "mutated or the string 'unknown'. ")
    elif not isinstance(mutates_args, collections.abc.Iterable):
        raise TypeError(f"mutates_args must be a sequence of argument names or 'unknown', "
                        f"not {type(mutates_args).__name__}")
    else:
        mutates_args = tuple(mutates_args)
    params, seen, star = [], set(), False
    for idx, (name, param) in enumerate(sig.parameters.items()):
        if param.kind not in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY):
            fail("We do not support positional-only args, varargs, or varkwargs.")
        if param.kind == inspect.Parameter.KEYWORD_ONLY and not star:
            params.append("*")
            star = True
        if param.annotation is inspect.Parameter.empty:
            fail(f"Parameter {name} must have a type annotation.")
        annotation = _resolve(param.annotation, prototype_function)
        schema_type = PARAM_TYPES.get(annotation)
        if schema_type is None:
            hint = (" We do not support Tuple inputs in schema. As a workaround, please try to use List instead."
                    if typing.get_origin(annotation) is tuple else "")
            fail(f"Parameter {name} has unsupported type {param.annotation}.{hint} "
                 f"The valid types are: {list(PARAM_TYPES)}.")
        mutated = (schema_type.startswith("Tensor") if mutates_args == UNKNOWN_MUTATES
                   else name in mutates_args)
        if mutated:
            if not schema_type.startswith("Tensor"):
                fail(f"Parameter {name} is in mutable_args but only Tensors or collections of Tensors can be "
                     "mutated")
            schema_type = f"Tensor(a{idx}!){schema_type[len('Tensor'):]}"
        seen.add(name)
        if param.default is inspect.Parameter.empty:
            params.append(f"{schema_type} {name}")
        else:
            params.append(f"{schema_type} {name}={_default_text(param.default, name, fail)}")
    if mutates_args != UNKNOWN_MUTATES and (missing := set(mutates_args) - seen):
        fail(f"{missing} in mutates_args were not found in the custom op's signature. mutates_args should "
             "contain the names of all args that the custom op mutates, or just the string 'unknown' if you "
             "don't know.")
    returns = _return_text(_resolve(sig.return_annotation, prototype_function), fail)
    return f"{op_name or ''}({', '.join(params)}) -> {returns}"
