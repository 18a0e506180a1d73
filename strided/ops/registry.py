"""Load ``native_functions.yaml`` once into OpOverloads; bind functions, methods and ``ops.aten``.

Entries are parsed strictly (as torchgen does): unknown keys, bad variants, bad dispatch keys and
malformed schemas are errors that name ``native_functions.yaml:<line>``.

Note [Autogen]
``autogen: add_.Tensor, add.out`` derives overloads from a functional op instead of writing them
out: the in-place form takes ``Tensor(a!) self`` and returns it; the out form appends
``*, Tensor(a!) out``. Their kernel (CompositeExplicitAutograd, so every backend gets it) calls the
functional op, checks the result can be cast to the destination dtype and, for in-place, that the
broadcast shape equals ``self``'s, then copies. A backend may register a direct kernel for the
derived overload, which the dispatcher prefers (Note [Dispatch order]).
"""

from __future__ import annotations

import dataclasses
import os

import yaml

from ..dispatch.dispatcher import OpOverload
from ..dispatch.keys import DispatchKey, parse_key
from ..dispatch.packet import OpOverloadPacket
from . import bound
from .memory_overlap import check_no_internal_overlap, check_no_partial_overlap, check_out_overlap
from .memory_overlap import is_pointwise as pointwise_op
from .schema import Annotation, Argument, FunctionSchema, Return, SchemaError, Type, parse_schema

__all__ = ["load", "parse_yaml", "namespace", "YAML_PATH", "Namespace", "ENTRY_KEYS"]

YAML_PATH = os.path.join(os.path.dirname(__file__), "native_functions.yaml")
ENTRY_KEYS = frozenset({"func", "variants", "dispatch", "autogen", "device_check", "python_module"})
VARIANTS = frozenset({"function", "method"})


class Namespace:
    """``strided.ops.<ns>``: attribute access to the namespace's packets."""

    def __init__(self, name: str):
        self._name = name
        self._packets: dict[str, OpOverloadPacket] = {}

    def _get(self, name: str) -> OpOverloadPacket | None:
        return self._packets.get(name)

    def _register(self, op: OpOverload) -> OpOverloadPacket:
        packet = self._packets.get(op.schema.name)
        if packet is None:
            packet = self._packets[op.schema.name] = OpOverloadPacket(op.schema.name, self._name)
            if not hasattr(Namespace, op.schema.name):  # Note [Overload attributes] in dispatch/packet.py
                self.__dict__[op.schema.name] = packet
        packet.add(op)
        return packet

    def __getattr__(self, name):
        try:
            return self.__dict__["_packets"][name]
        except KeyError:
            raise AttributeError(f"no operator '{self._name}::{name}'") from None

    def __iter__(self):
        return iter(self._packets.values())

    def __dir__(self):
        return list(self._packets)


_NAMESPACES: dict[str, Namespace] = {}


def namespace(name: str) -> Namespace:
    ns = _NAMESPACES.get(name)
    if ns is None:
        ns = _NAMESPACES[name] = Namespace(name)
    return ns


class _LineLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """A YAML loader that records each mapping's line (torchgen's LineLoader), on libyaml's parser when present
    (about 10x faster: the schema file is parsed at every ``import strided``)."""

    def construct_mapping(self, node, deep=False):
        mapping = super().construct_mapping(node, deep=deep)
        mapping["__line__"] = node.start_mark.line + 1
        return mapping


def _parse_dispatch(value, where: str) -> dict[DispatchKey, str]:
    if not isinstance(value, dict):
        raise SchemaError(f"{where}: 'dispatch' must be a mapping of backend keys to kernel names")
    out = {}
    for keys, name in value.items():
        if keys == "__line__":
            continue
        if not isinstance(name, str) or not name.isidentifier():
            raise SchemaError(f"{where}: dispatch kernel name {name!r} is not an identifier")
        for key in str(keys).split(","):
            try:
                k = parse_key(key.strip())
            except ValueError as e:
                raise SchemaError(f"{where}: {e}") from None
            if k in out:
                raise SchemaError(f"{where}: dispatch key {k.name} given twice")
            out[k] = name
    return out


def _derive(functional: FunctionSchema, spec: str, where: str) -> FunctionSchema:
    name, _, overload = spec.partition(".")
    write = Annotation("a", True)
    tensor = Type("Tensor")
    if name == functional.name + "_":
        first = functional.arguments[0]
        if first.type != tensor:
            raise SchemaError(f"{where}: autogen {spec}: the first argument must be a Tensor")
        args = (dataclasses.replace(first, annotation=write),) + functional.arguments[1:]
        return FunctionSchema(name, overload, args, (Return(tensor, write, None),))
    if name == functional.name and overload == "out":
        if len(functional.returns) != 1 or functional.returns[0].type != tensor:
            raise SchemaError(f"{where}: autogen {spec}: out= forms need a single Tensor return")
        args = functional.arguments + (Argument("out", tensor, write, None, True),)
        return FunctionSchema(name, "out", args, (Return(tensor, write, None),))
    raise SchemaError(
        f"{where}: autogen '{spec}' must be '{functional.name}_.<overload>' or '{functional.name}.out'"
    )


# torch's clamp_ names the output type as C++ does ("long int"), every other in-place op as its ScalarType ("Long")
_CPP_WORD_OPS = frozenset({"clamp", "clamp_min", "clamp_max"})


def _inplace_kernel(functional: OpOverload):
    from ..backends.meta.pointwise import scalar_type_name, type_meta_name
    from ..dtypes import can_cast

    cpp_words = functional.schema.name in _CPP_WORD_OPS

    def is_pointwise() -> bool:  # Note [Partial overlap]
        return pointwise_op(functional)

    def kernel(self, *args, **kwargs):
        check_no_internal_overlap(self)
        if pointwise_op(functional):
            check_no_partial_overlap(self, args, kwargs)
        return finish(self, functional(self, *args, **kwargs))

    def finish(self, result):
        """Write the functional op's ``result`` into ``self`` with torch's checks."""
        if not can_cast(result.dtype, self.dtype):
            target = type_meta_name(self.dtype) if cpp_words else scalar_type_name(self.dtype)
            raise RuntimeError(
                f"result type {scalar_type_name(result.dtype)} can't be cast to the desired output type {target}"
            )
        if result._sizes != self._sizes:
            raise RuntimeError(
                f"output with shape {list(self._sizes)} doesn't match the broadcast shape "
                f"{list(result._sizes)}"
            )
        return self.copy_(result)

    kernel.__name__ = functional.schema.name + "_"
    # for the direct kernels (backends/cpu/inplace.py, backends/cuda/kernels/inplace_ops.py)
    kernel.functional, kernel.finish, kernel.is_pointwise = functional, finish, is_pointwise
    return kernel


def _out_kernel(functional: OpOverload):

    from ..dispatch.out_arguments import write_out

    def kernel(*args, out, **kwargs):
        if pointwise_op(functional):  # Note [Partial overlap]
            check_no_partial_overlap(out, args, kwargs)
        else:
            check_out_overlap(functional.schema.name, out, args, kwargs)  # Note [Out overlap]
        return write_out(functional(*args, **kwargs), out, functional.schema.name)

    kernel.__name__ = functional.schema.name + "_out"
    return kernel


def load() -> Namespace:
    """Parse native_functions.yaml into ``strided.ops.aten`` and bind functions and methods (once)."""
    aten = namespace("aten")
    if aten._packets:
        return aten
    methods, functions = parse_yaml(YAML_PATH, aten)
    for name, packet in aten._packets.items():
        setattr(bound, name, packet)
    bound.FUNCTIONS = tuple(sorted(functions))
    _bind_methods(methods)
    return aten


def parse_yaml(path: str, aten: Namespace) -> tuple[dict, dict]:
    """Register the ops of an operator YAML file in ``aten``; returns the (methods, functions)
    packets to bind. Pure with respect to the rest of strided, so tests can parse other files."""
    fname = os.path.basename(path)
    with open(path, encoding="utf-8") as f:
        entries = yaml.load(f, Loader=_LineLoader)  # noqa: S506 - SafeLoader subclass
    methods, functions = {}, {}
    for entry in entries:
        entry = dict(entry)
        where = f"{fname}:{entry.pop('__line__', '?')}"
        unknown = set(entry) - ENTRY_KEYS
        if unknown:
            raise SchemaError(f"{where}: unknown key(s) {sorted(unknown)}; allowed: {sorted(ENTRY_KEYS)}")
        if "func" not in entry:
            raise SchemaError(f"{where}: entry has no 'func'")
        try:
            schema = parse_schema(entry["func"])
        except SchemaError as e:
            raise SchemaError(f"{where}: {e}") from None
        variants = {v.strip() for v in str(entry.get("variants", "function")).split(",")}
        if not variants <= VARIANTS:
            raise SchemaError(f"{where}: unknown variant(s) {sorted(variants - VARIANTS)}")
        dispatch = _parse_dispatch(entry.get("dispatch", {}), where)
        if not dispatch:
            raise SchemaError(f"{where}: {schema.qualified_name} has no dispatch entry")
        device_check = entry.get("device_check", "ExactSame")
        if device_check not in ("ExactSame", "NoCheck"):
            raise SchemaError(f"{where}: device_check must be ExactSame or NoCheck, got {device_check!r}")
        # torch's key: ``python_module: nn`` ops are reached as ``F.<name>`` and ``ops.aten``, not ``strided.<name>``
        module = entry.get("python_module")
        if module not in (None, "nn"):
            raise SchemaError(f"{where}: python_module must be nn, got {module!r}")
        if module == "nn":
            variants.discard("function")
        op = OpOverload(schema, "aten", where, dispatch, device_check=device_check == "ExactSame")
        packet = aten._register(op)
        if "function" in variants:
            functions[schema.name] = packet
        if "method" in variants:
            methods[schema.name] = packet
        for spec in (s.strip() for s in str(entry.get("autogen", "")).split(",") if s.strip()):
            derived = _derive(schema, spec, where)
            dop = OpOverload(derived, "aten", where, device_check=op.device_check)
            is_inplace = derived.name != schema.name
            dop.register(DispatchKey.CompositeExplicitAutograd,
                         _inplace_kernel(op) if is_inplace else _out_kernel(op))
            dpacket = aten._register(dop)
            if is_inplace and module != "nn":
                methods[derived.name] = dpacket
            elif "function" in variants:
                functions[schema.name] = packet
    return methods, functions


# Note [Tensor lists as tuples]
# An op returning ``Tensor[]`` gives a list through ``strided.ops.aten`` (as ``torch.ops.aten.split``), but
# a tuple through the public function and method (``strided.split``, ``x.unbind()``), as torch's Python
# bindings do: ``x[t.unbind()]`` indexes several dims and ``x.split(2) + (y,)`` concatenates. The kernels and
# the autograd layer keep lists.
def returns_tensor_list(packet: OpOverloadPacket) -> bool:
    """Whether every overload of ``packet`` returns one ``Tensor[]`` (Note [Tensor lists as tuples])."""
    return all(len(op.schema.returns) == 1 and op.schema.returns[0].type.base == "Tensor"
               and op.schema.returns[0].type.is_list for op in packet._ordered)


def as_tuple_function(packet: OpOverloadPacket):
    """``packet`` for the public API: its ``Tensor[]`` result as a tuple (Note [Tensor lists as tuples])."""
    def function(*args, _packet=packet, **kwargs):
        return tuple(_packet(*args, **kwargs))

    function.__name__ = function.__qualname__ = packet.__name__
    function.__doc__ = packet.__doc__
    return function


def updates_a_list(packet: OpOverloadPacket) -> bool:
    """Whether ``packet`` is an in-place ``_foreach_*_`` op (returns nothing; torch's binding gives ``self``)."""
    return packet.__name__.startswith("_foreach_") and packet.__name__.endswith("_") and all(
        not op.schema.returns for op in packet._ordered)


def returning_self(packet: OpOverloadPacket):
    """``packet`` for the public API: an in-place foreach op that returns the list it updated, as torch's."""
    def function(self, *args, _packet=packet, **kwargs):
        _packet(self, *args, **kwargs)
        return self

    function.__name__ = function.__qualname__ = packet.__name__
    function.__doc__ = packet.__doc__
    return function


def _bind_methods(methods: dict[str, OpOverloadPacket]) -> None:
    from ..tensor import Tensor

    for name, packet in methods.items():
        if any(name in klass.__dict__ for klass in Tensor.__mro__[:-1]):
            continue  # hand-written (e.g. to, size); the op stays reachable as strided.ops.aten.<name>
        if returns_tensor_list(packet):  # Note [Tensor lists as tuples]
            at = {next((i for i, a in enumerate(op.schema.arguments) if a.name == "self"), 0)
                  for op in packet._ordered}
            assert at == {0}, name

            def method(self, *args, _packet=packet, **kwargs):
                return tuple(_packet(self, *args, **kwargs))

            method.__name__ = method.__qualname__ = name
            method.__doc__ = packet.__doc__
            setattr(Tensor, name, method)
            continue

        # torch binds a method's ``self`` to the argument named self, wherever it is:
        # ``x.polygamma(n)`` is ``polygamma(n, x)``
        at = {next((i for i, a in enumerate(op.schema.arguments) if a.name == "self"), 0) for op in packet._ordered}
        pos = min(at) if len(at) == 1 else 0
        if pos:
            def method(self, *args, _packet=packet, _at=pos, **kwargs):
                return _packet(*args[:_at], self, *args[_at:], **kwargs)
        else:
            def method(self, *args, _packet=packet, **kwargs):
                return _packet(self, *args, **kwargs)

        method.__name__ = method.__qualname__ = name
        method.__doc__ = packet.__doc__
        setattr(Tensor, name, method)
