"""``OpOverloadPacket``: all overloads of one operator name, and the choice among them per call.

``strided.ops.aten.sum`` is a packet; calling it matches the arguments against each overload's
schema (``matching.py``, torch's PythonArgParser) and calls the first that fits
(``sum.dim_IntList``), which dispatches (``dispatcher.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .dispatcher import OpOverload

__all__ = ["OpOverloadPacket"]

# Note [Numbers as tensors] (numbers_as_tensors.py): torch's list, each name with its in-place form (the out
# forms are overloads of these packets); its copy_ is Tensor.copy_'s own test (tensor_extras.py)
NUMBERS_AS_TENSORS = frozenset(
    n + s for n in ("add", "sub", "mul", "div", "divide", "multiply", "subtract", "true_divide", "floor_divide")
    for s in ("", "_"))


# Note [Overload match cache]
# Matching a call against a packet's schemas (``matching.matches``) costs several µs, and it
# depends only on each argument's type — for a list or tuple argument, on its elements' types
# (``sum(x, [0, 1])`` is ``sum.dim_IntList``, ``cat([a, b])`` takes ``Tensor[]``). The cache key
# is the argument types, keyword names and keyword value types, with the element types of list
# and tuple arguments; a call with nested sequences is matched every time. Bounded: cleared past
# 256 signatures (a varying list length makes new keys).
def _sequence_key(args, kwargs):
    out = []
    for v in (*args, *kwargs.values()):
        c = v.__class__
        if c is list or c is tuple:
            inner = tuple(map(type, v))
            if list in inner or tuple in inner:
                return None
            out.append((c, inner))
        else:
            out.append(c)
    return tuple(out), tuple(kwargs)


def _tensor_in(slots, args, kwargs) -> bool:
    """Whether a tensor sits in one of the Scalar argument ``slots`` of this call (numbers are the rule: their
    classes are tested first, a few tens of ns)."""
    pos, names = slots
    n = len(args)
    for i in pos:
        if i < n and args[i].__class__ not in _NUMBERS and _is_tensor(args[i]):
            return True
    if kwargs:
        for k, v in kwargs.items():
            if k in names and v.__class__ not in _NUMBERS and _is_tensor(v):
                return True
    return False


_NUMBERS = frozenset((int, float, bool, complex))
# the schema types a 0-dim tensor may stand for (Note [Tensors as Scalars]) -> torch's word for them in its errors
NUMBER_TYPES = {"Scalar": "Number", "float": "float"}


def _is_tensor(v) -> bool:
    from ..tensor import Tensor

    return isinstance(v, Tensor)


def _reading_ints(op):
    """``op`` called with the 0-dim integer tensors of its int arguments read as ints (Note [Tensors as ints])."""
    from .matching import ints_from_tensors, scalars_from_tensors

    call = scalars_from_tensors(op)  # a 0-dim tensor in a Scalar argument of the same call, as torch reads it

    def reading(*args, **kwargs):
        converted = ints_from_tensors(op.schema, args, kwargs)
        return call(*converted[0], **converted[1]) if converted is not None else call(*args, **kwargs)

    return reading


class OpOverloadPacket:
    """All overloads of one operator name; calling it picks the overload from the arguments."""

    __slots__ = ("name", "namespace", "overloads", "_ordered", "_match_cache", "_scalar_slots", "_generic_out",
                 "__name__", "__qualname__", "__dict__")

    def __init__(self, name: str, namespace: str = "aten"):
        self.name = name
        self.namespace = namespace
        self.overloads: dict[str, OpOverload] = {}
        self._ordered: list[OpOverload] = []
        self._match_cache: dict = {}
        self._scalar_slots = None  # a lone overload's Scalar / float arguments: (positions, names) (Note [Tensors
        # as Scalars])
        self._generic_out = False  # out= written by out_arguments.py (Note [Out arguments])
        self.__name__ = name
        self.__qualname__ = name
        self.__doc__ = None

    def add(self, op: OpOverload) -> None:
        if op.overload_name in self.overloads:
            raise RuntimeError(f"{op.location}: duplicate overload {op.name}.{op.overload_name}")
        self.overloads[op.overload_name] = op
        if not hasattr(OpOverloadPacket, op.overload_name):  # Note [Overload attributes]
            self.__dict__[op.overload_name] = op
        self._ordered.append(op)
        op.packet = self
        # Note [Out arguments]: not where an overload takes out= itself, nor for views, in-place ops and _like factories
        self._generic_out = not (self.name.endswith("_like") or any(
            any(a.name == "out" for a in o.schema.arguments) or any(r.annotation is not None for r in o.schema.returns)
            for o in self._ordered))
        self._match_cache.clear()
        self._scalar_slots = None
        self.__dict__.pop("_lone", None)
        if len(self._ordered) == 1:
            args = op.schema.arguments
            pos = tuple(i for i, a in enumerate(a for a in args if not a.kwarg_only) if a.type.base in NUMBER_TYPES)
            names = frozenset(a.name for a in args if a.type.base in NUMBER_TYPES)
            if names:
                self._scalar_slots = (pos, names)
        self.__doc__ = "\n".join(f"{self.namespace}::{o.schema}" for o in self._ordered)

    # Note [Overload attributes]
    # ``ops.sum.dim_IntList`` is read on hot paths (optimizers, derivative formulas). Reaching
    # ``__getattr__`` costs a failed slot lookup first (0.4 µs), so each overload is also put in the
    # instance dict, where attribute lookup finds it directly — unless its name is a class
    # attribute (``add``, ``name``): those are still reached through ``overloads``.
    def __getattr__(self, name):
        try:
            return self.overloads[name]
        except KeyError:
            raise AttributeError(f"'{self.namespace}::{self.name}' has no overload '{name}'") from None

    def __repr__(self) -> str:
        return f"<OpOverloadPacket {self.namespace}::{self.name}>"

    def __call__(self, *args, **kwargs):
        if kwargs and "out" in kwargs and self._generic_out:
            from .out_arguments import call_with_out

            return call_with_out(self, args, kwargs)
        ordered = self._ordered
        if len(ordered) == 1:
            try:
                if (slots := self._scalar_slots) is not None and _tensor_in(slots, args, kwargs):
                    return self._lone_converter()(*args, **kwargs)  # Note [Tensors as Scalars]
                return ordered[0](*args, **kwargs)
            except (TypeError, AttributeError, ValueError) as e:  # a kernel tripping over an argument's type
                from .matching import ints_from_tensors

                converted = ints_from_tensors(ordered[0].schema, args, kwargs)  # Note [Tensors as ints]
                if converted is not None:
                    return self(*converted[0], **converted[1])
                from .deprecated_forms import deprecated_form

                if (old := deprecated_form(self, args, kwargs)) is not None:  # Note [Deprecated argument orders]
                    return old(*args, **kwargs)
                if not isinstance(e, ValueError):
                    self._refuse_arguments(e, args, kwargs)  # Note [One plausible overload]
                raise
        # Note [Overload match cache]: an overload is chosen by the arguments' types only (and by
        # the element types of list arguments), so the choice is cached per type signature
        key = tuple(map(type, args))
        if kwargs:
            key = (key, tuple(kwargs), tuple(map(type, kwargs.values())))
            seq = list in key[0] or tuple in key[0] or list in key[2] or tuple in key[2]
        else:
            seq = list in key or tuple in key
        if seq:
            key = _sequence_key(args, kwargs)
        op = self._match_cache.get(key) if key is not None else None
        if op is None:
            op = self._match(args, kwargs)
            if key is not None:
                if len(self._match_cache) > 256:
                    self._match_cache.clear()
                self._match_cache[key] = op
        return op(*args, **kwargs)

    def _refuse_arguments(self, error, args, kwargs) -> None:
        """After the lone overload raised ``error`` (a TypeError or AttributeError): torch's parser error instead
        when an argument's type does not fit the schema (Note [One plausible overload])."""
        from .matching import argument_error, plausible

        schema = self._ordered[0].schema
        if not plausible(schema, args, kwargs):
            return
        if isinstance(error, TypeError) and f"{self.name}(): argument '" in str(error):
            return  # the kernel named the argument itself (an inner op's words yield to this op's, below)
        better = argument_error(self.name, schema, args, kwargs)
        if better is not None:
            raise better from None

    def _lone_converter(self):
        """The lone overload behind its Scalar-argument converter, made once (the match cache's role)."""
        conv = self.__dict__.get("_lone")
        if conv is None:
            from .matching import scalars_from_tensors

            conv = self.__dict__["_lone"] = scalars_from_tensors(self._ordered[0], lone=True)
        return conv

    def _match(self, args, kwargs) -> OpOverload:
        from .matching import matches

        for op in self._ordered:
            if matches(op.schema, args, kwargs):
                return op
        for op in self._ordered:  # Note [Tensors as Scalars]: only when nothing fits the strict way
            if matches(op.schema, args, kwargs, scalar_tensors=True):
                from .matching import scalars_from_tensors

                return scalars_from_tensors(op)
        from .matching import ints_from_tensors

        for op in self._ordered:  # Note [Tensors as ints]
            converted = ints_from_tensors(op.schema, args, kwargs)
            if converted is not None and matches(op.schema, *converted, scalar_tensors=True):
                return _reading_ints(op)
        if self.name in NUMBERS_AS_TENSORS:  # Note [Numbers as tensors]: after every other reading
            for op in self._ordered:
                if matches(op.schema, args, kwargs, numbers=True):
                    from .numbers_as_tensors import numbers_to_tensors

                    return numbers_to_tensors(op)
        if kwargs.get("out") is not None:  # Note [Out arguments]: e.g. add(tensor, 2, out=o), whose out overload
            rest = {k: v for k, v in kwargs.items() if k != "out"}  # takes a Tensor other: compute, then write
            if any(matches(op.schema, args, rest, scalar_tensors=True) for op in self._ordered):
                from .out_arguments import call_with_out

                return lambda *a, **k: call_with_out(self, a, k)
        from .deprecated_forms import deprecated_form

        if (old := deprecated_form(self, args, kwargs)) is not None:  # Note [Deprecated argument orders]
            return old
        from .matching import argument_error, describe_call, plausible

        fitting = [op for op in self._ordered if plausible(op.schema, args, kwargs)]
        if len(fitting) == 1:  # Note [One plausible overload]
            error = argument_error(self.name, fitting[0].schema, args, kwargs)
            if error is not None:
                raise error
        expected = "\n".join(
            f" * ({', '.join(str(a) for a in op.schema.arguments)})" for op in self._ordered
        )
        raise TypeError(
            f"{self.name}() received an invalid combination of arguments - got {describe_call(args, kwargs)}, "
            f"but expected one of:\n{expected}"
        )
