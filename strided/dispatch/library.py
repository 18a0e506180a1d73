"""Registering kernels: the backends' ``@kernel`` decorator and the public ``strided.library``.

Backends register *named* kernels (``@kernel("CPU")`` over ``def add(...)``); the YAML's
``dispatch:`` map binds names to operators. ``strided.library`` is the user-facing API, as
``torch.library``: define a new operator from a schema string and register a kernel per backend::

    lib = strided.library.Library("mylib", "DEF")
    lib.define("scale(Tensor self, float factor) -> Tensor")

    @strided.library.impl("mylib::scale", "CPU")
    def scale_cpu(self, factor): ...

    strided.ops.mylib.scale(x, 2.0)

``Library("aten", "IMPL").impl("gelu", fn, "CUDA")`` replaces an existing kernel while the library lives
(Note [Kernel overrides]), e.g. with a jiterator function (``strided.cuda.jiterator``).
"""

from __future__ import annotations

import weakref

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


# Note [Kernel overrides]
# ``Library(ns, "IMPL").impl(op, fn, key)`` replaces the kernel ``op`` has at ``key`` (a YAML kernel, a composite,
# another library's override), as torch's does, until the library is destroyed: ``lib._destroy()``, or when it is
# garbage collected (keep a reference, as with torch). Each (op, key) keeps the kernel from before the first
# override and one entry per live registration; destroying a library removes its entries wherever they are in that
# list, and the op's kernel becomes the newest entry left (or the original again). Every change clears the op's
# dispatch cache, which drops the Autograd kernels resolved against the replaced kernel (Note [Autograd redispatch]).
# Kernels that captured another op's kernel when they were built (the direct in-place kernels capture their
# functional op's) keep it: overriding ``add.Tensor`` leaves ``add_`` as it was, as torch's separate ``add_`` kernel.
_OVERRIDES: dict = {}  # (op, key) -> [the kernel before any override or None, [(token, fn), ...]]
_RESERVED = ("aten", "prim", "prims")


def _override(op: OpOverload, key: DispatchKey, fn, token) -> None:
    entry = _OVERRIDES.get((op, key))
    if entry is None:
        entry = _OVERRIDES[(op, key)] = [op.kernel(key), []]
    entry[1].append((token, fn))
    op._kernels[key] = fn
    op._cache.clear()


def _remove_overrides(token, registered: list) -> None:
    """Undo the overrides made under ``token`` (a library's finalizer: it must not reference the library)."""
    for op, key in registered:
        entry = _OVERRIDES.get((op, key))
        if entry is None:
            continue
        entry[1][:] = [(t, f) for t, f in entry[1] if t is not token]
        if entry[1]:
            op._kernels[key] = entry[1][-1][1]
        else:
            del _OVERRIDES[(op, key)]
            if entry[0] is None:
                op._kernels.pop(key, None)
            else:
                op._kernels[key] = entry[0]
        op._cache.clear()
    registered.clear()


# Note [Python kernel arguments]
# torch calls a Python kernel with the call's arguments in one normal form, whatever form the caller used
# (``parseIValuesToPyArgsKwargs``): the positional arguments by position up to the last one that is not at its
# default, the keyword-only ones by name and only those not at their default. So ``F.gelu(x)`` calls a gelu
# override as ``fn(x)``, not ``fn(x, approximate='none')``, and torch's documented example (a jiterator function,
# which refuses undeclared keywords, as gelu's CUDA kernel) works. ``python_kernel`` puts a function behind that
# form; ``Library.impl`` registers through it (the ``impl`` decorator, which strided's own backends use, does not).
_MISSING = object()


def _at_default(arg, value) -> bool:
    if not arg.has_default:
        return False
    default = arg.default_value
    if default is None or value is None:
        return default is None and value is None
    if isinstance(value, (list, tuple)) or isinstance(default, tuple):
        n = arg.type.list_size or 1
        value = tuple(value) if isinstance(value, (list, tuple)) else (value,) * n
        default = default if isinstance(default, tuple) else (default,) * n
        return len(value) == len(default) and all(_plain_equal(arg.type.base, v, d) for v, d in zip(value, default))
    return _plain_equal(arg.type.base, value, default)


def _plain_equal(base: str, value, default) -> bool:
    """torch's IValue equality: an int 1 is not a float 1.0 in a Scalar (a ``float`` argument holds floats)."""
    if not isinstance(value, (int, float, complex, str)):
        return False  # tensors, dtypes, devices: passed on as given
    if base == "float" and not isinstance(value, bool):
        value, default = float(value), float(default)
    return type(value) is type(default) and value == default


def schema_default(arg):
    """An argument's default as a kernel gets it: a ScalarType default, kept in the schema by its name, as the
    dtype (torch passes ``torch.float32``, not a string)."""
    value = arg.default_value
    if arg.type.base == "ScalarType" and isinstance(value, str):
        from ..dtypes import _BY_NAME

        return _BY_NAME[value]
    return value


def _normal(arg, value):
    """A positional value as torch passes it: a default filled in, an int for an ``int[N]`` as a list."""
    if value is _MISSING:
        return schema_default(arg)
    if arg.type.is_list and arg.type.base in ("int", "SymInt") and isinstance(value, int):
        return [value] * (arg.type.list_size or 1)
    return value


def python_kernel(op: OpOverload, fn):
    """``fn`` called with ``op``'s arguments in torch's normal form (Note [Python kernel arguments])."""
    positional = [a for a in op.schema.arguments if not a.kwarg_only]
    by_name = {a.name: a for a in op.schema.arguments}

    def kernel(*args, **kwargs):
        values = list(args) + [kwargs.pop(a.name, _MISSING) for a in positional[len(args):]]
        n = len(values)
        while n and (values[n - 1] is _MISSING or _at_default(positional[n - 1], values[n - 1])):
            n -= 1
        values = [_normal(positional[i], v) for i, v in enumerate(values[:n])]
        extra = {k: v for k, v in kwargs.items() if k not in by_name or not _at_default(by_name[k], v)}
        return fn(*values, **extra)

    kernel.__name__ = getattr(fn, "__name__", "python_kernel")
    kernel.__wrapped__ = fn
    return kernel


class Library:
    """A handle for one namespace, as ``torch.library.Library(ns, "DEF" | "IMPL" | "FRAGMENT")``; its ``impl``
    registrations last as long as it does (Note [Kernel overrides])."""

    def __init__(self, ns: str, kind: str = "DEF", dispatch_key: str = ""):
        if kind not in ("DEF", "IMPL", "FRAGMENT"):
            raise ValueError(f"Unsupported kind: {kind}")
        if ns in _RESERVED and kind in ("DEF", "FRAGMENT"):
            raise ValueError(f"{ns} is a reserved namespace. Please try creating a library with another name.")
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._token = object()
        self._registered: list = []  # (op, key) of this library's impl calls
        self._finalizer = weakref.finalize(self, _remove_overrides, self._token, self._registered)

    def define(self, schema: str) -> OpOverload:
        return define(f"{self.ns}::{schema}")

    def impl(self, op_name, fn, dispatch_key: str = "", *, allow_override: bool = True) -> None:
        """Make ``fn`` the kernel of ``op_name`` (``"add.Tensor"`` or an OpOverload) at ``dispatch_key`` (the
        library's, else CompositeImplicitAutograd) while this library lives."""
        if not callable(fn):
            raise TypeError(f"Input function is required to be a callable but found type {type(fn)}")
        if not self._finalizer.alive:
            raise RuntimeError(f"Library('{self.ns}'): impl() after _destroy()")
        if isinstance(op_name, OpOverload):
            op = op_name
        else:
            op = get_op(op_name if "::" in op_name else f"{self.ns}::{op_name}")
        key = parse_key(dispatch_key or self.dispatch_key or "CompositeImplicitAutograd")
        if not allow_override and (op, key) in _OVERRIDES:
            raise RuntimeError(
                f"This is not allowed since there's already a kernel registered from python overriding "
                f"{op.name.split('::')[-1]}.{op.overload_name}'s behavior for {key.name} dispatch key and "
                f"{self.ns} namespace.")
        _override(op, key, python_kernel(op, fn), self._token)
        self._registered.append((op, key))

    def _destroy(self) -> None:
        """Undo this library's ``impl`` registrations now (torch's ``Library._destroy``)."""
        self._finalizer()


__all__ += ["DispatchKey", "OpOverloadPacket"]

# torch.library's operator-from-a-function API (Note [Custom ops]); imported last: it builds on the above
from .custom_ops import CustomOpDef, custom_op, register_autograd, register_fake, register_kernel  # noqa: E402
from .infer_schema import infer_schema  # noqa: E402

__all__ += ["CustomOpDef", "custom_op", "register_fake", "register_kernel", "register_autograd", "infer_schema"]


def __getattr__(name: str):
    if name in ("opcheck", "OpCheckError"):  # testing support (Note [Operator checks]), loaded on first use
        from ..testing import opcheck as checks

        return getattr(checks, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
