"""Registering kernels: the backends' ``@kernel`` decorator and the public ``strided.library``.

Backends register *named* kernels (``@kernel("CPU")`` over ``def add(...)``); the YAML's
``dispatch:`` map binds names to operators. ``strided.library`` is the user-facing API, as
``torch.library``: define a new operator from a schema string and register a kernel per backend::

    lib = strided.library.Library("mylib", "DEF")
    lib.define("scale(Tensor self, float factor) -> Tensor")

    @strided.library.impl("mylib::scale", "CPU")
    def scale_cpu(self, factor): ...

    strided.ops.mylib.scale(x, 2.0)
"""

from __future__ import annotations

from .dispatcher import KERNEL_TABLES, OpOverload
from .keys import DispatchKey, parse_key
from .packet import OpOverloadPacket

__all__ = ["kernel", "Library", "impl", "define", "get_op"]


def kernel(*keys: str, name: str | None = None):
    """Decorator: put a function in the named-kernel table of each key (``@kernel("CPU", "Meta")``)."""
    parsed = [parse_key(k) for k in keys]

    def register(fn):
        kname = name or fn.__name__
        for key in parsed:
            table = KERNEL_TABLES[key]
            if kname in table and table[kname] is not fn:
                raise RuntimeError(f"kernel '{kname}' is defined twice for {key.name}")
            table[kname] = fn
        return fn

    return register


def get_op(qualified: str) -> OpOverload:
    """``"aten::add.Tensor"`` (or ``"mylib::foo"``) -> the OpOverload."""
    from ..ops import registry

    ns, sep, rest = qualified.partition("::")
    if not sep:
        ns, rest = "aten", qualified
    name, _, overload = rest.partition(".")
    packet = registry.namespace(ns)._get(name)
    if packet is None:
        raise ValueError(f"unknown operator '{qualified}'")
    op = packet.overloads.get(overload or "default")
    if op is None:
        raise ValueError(
            f"operator '{ns}::{name}' has no overload '{overload or 'default'}'; it has "
            f"{sorted(packet.overloads)}"
        )
    return op


def impl(qualified: str, key: str):
    """Decorator registering a kernel for an existing op at a dispatch key (torch.library.impl)."""
    op = get_op(qualified)
    k = parse_key(key)

    def register(fn):
        op.register(k, fn)
        return fn

    return register


def define(qualified_schema: str) -> OpOverload:
    """Define a new operator ``"ns::name.overload(args) -> returns"``; returns its OpOverload."""
    from ..ops import registry
    from ..ops.schema import parse_schema

    ns, sep, schema_text = qualified_schema.partition("::")
    if not sep:
        raise ValueError(f"define(): expected 'namespace::schema', got '{qualified_schema}'")
    if ns == "aten":
        raise ValueError("define(): the 'aten' namespace is reserved for native_functions.yaml")
    schema = parse_schema(schema_text)
    op = OpOverload(schema, namespace=ns, location=f"strided.library.define('{qualified_schema}')")
    registry.namespace(ns)._register(op)
    return op


class Library:
    """A handle for one namespace, as ``torch.library.Library(ns, "DEF" | "IMPL")``."""

    def __init__(self, ns: str, kind: str = "DEF"):
        if kind not in ("DEF", "IMPL", "FRAGMENT"):
            raise ValueError(f"Library(): kind must be DEF, IMPL or FRAGMENT, got {kind!r}")
        self.ns = ns
        self.kind = kind

    def define(self, schema: str) -> OpOverload:
        return define(f"{self.ns}::{schema}")

    def impl(self, name: str, fn, key: str) -> None:
        get_op(f"{self.ns}::{name}").register(parse_key(key), fn)


__all__ += ["DispatchKey", "OpOverloadPacket"]
