"""Operator schemas in torch's schema language, parsed strictly into frozen dataclasses.

``add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor`` parses into a
``FunctionSchema`` and prints back to the same string: ``str(parse(s)) == s`` is checked for
every schema (Note [Schema round trip]), so the YAML file is always in canonical form.

Note [Schema round trip]
As in torchgen's ``FunctionSchema.parse``, the parser ends by printing what it parsed and
comparing with the input. A schema that parses but does not print back (extra spaces, an
unknown spelling of a type) is rejected, so there is exactly one way to write each schema.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Type", "Annotation", "Argument", "Return", "FunctionSchema", "SchemaError", "parse_schema"]

BASE_TYPES = frozenset({
    "Tensor", "Scalar", "int", "SymInt", "float", "bool", "str", "ScalarType", "Layout", "Device",
    "MemoryFormat", "Generator", "Storage",
})

# Identifier defaults that torch's schema language allows, and their Python values.
_NAMED_DEFAULTS = {
    "None": None, "True": True, "False": False,
    "Mean": 1, "Sum": 2,  # at::Reduction::Reduction (None is 0 and spelled as the int)
    "contiguous_format": "contiguous_format", "channels_last": "channels_last",
    "channels_last_3d": "channels_last_3d",
    "preserve_format": "preserve_format", "long": "int64",
}


class SchemaError(ValueError):
    """A schema string (or YAML entry) that does not follow the schema language."""


@dataclass(frozen=True)
class Annotation:
    """An alias annotation: ``(a)``, ``(a!)``, ``(a -> *)``."""

    alias_set: str
    is_write: bool
    alias_after: str = ""

    def __str__(self) -> str:
        after = f" -> {self.alias_after}" if self.alias_after else ""
        return f"({self.alias_set}{'!' if self.is_write else ''}{after})"


@dataclass(frozen=True)
class Type:
    """A schema type: a base name, optionally a list (``int[2]``) and optional (``Tensor?``)."""

    base: str
    is_list: bool = False
    list_size: int | None = None
    optional: bool = False
    elem_optional: bool = False  # Tensor?[]

    @property
    def is_tensor_like(self) -> bool:
        return self.base == "Tensor"

    def __str__(self) -> str:
        s = self.base + ("?" if self.elem_optional else "")
        if self.is_list:
            s += f"[{self.list_size if self.list_size is not None else ''}]"
        return s + ("?" if self.optional else "")


@dataclass(frozen=True)
class Argument:
    """A named argument with its type, optional alias annotation and default."""

    name: str
    type: Type
    annotation: Annotation | None
    default: str | None  # the default as written; ``default_value`` is its Python value
    kwarg_only: bool

    @property
    def default_value(self):
        return _default_value(self.default) if self.default is not None else _NO_DEFAULT

    @property
    def has_default(self) -> bool:
        return self.default is not None

    def __str__(self) -> str:
        t = str(self.type)
        if self.annotation is not None:  # annotation goes between base type and list/optional marks
            base = self.type.base + ("?" if self.type.elem_optional else "")
            t = base + str(self.annotation) + t[len(base):]
        s = f"{t} {self.name}"
        return s if self.default is None else f"{s}={self.default}"


@dataclass(frozen=True)
class Return:
    """One returned value, optionally named: ``Tensor values``."""

    type: Type
    annotation: Annotation | None
    name: str | None

    def __str__(self) -> str:
        t = str(self.type)
        if self.annotation is not None:
            base = self.type.base + ("?" if self.type.elem_optional else "")
            t = base + str(self.annotation) + t[len(base):]
        return t if self.name is None else f"{t} {self.name}"


@dataclass(frozen=True)
class FunctionSchema:
    """``name.overload(arguments) -> returns``."""

    name: str
    overload: str
    arguments: tuple[Argument, ...]
    returns: tuple[Return, ...]

    @property
    def qualified_name(self) -> str:
        return f"{self.name}.{self.overload}" if self.overload else self.name

    @property
    def is_inplace(self) -> bool:
        return self.name.endswith("_") and not self.name.startswith("_")

    @property
    def is_out(self) -> bool:
        return any(a.kwarg_only and a.annotation is not None and a.annotation.is_write for a in self.arguments)

    def __str__(self) -> str:
        parts, star_done = [], False
        for a in self.arguments:
            if a.kwarg_only and not star_done:
                parts.append("*")
                star_done = True
            parts.append(str(a))
        if len(self.returns) == 1 and self.returns[0].name is None:
            rets = str(self.returns[0])
        else:
            rets = "(" + ", ".join(str(r) for r in self.returns) + ")"
        return f"{self.qualified_name}({', '.join(parts)}) -> {rets}"


class _NoDefault:
    def __repr__(self) -> str:
        return "<no default>"


_NO_DEFAULT = _NoDefault()

_TYPE_RE = re.compile(
    r"^(?P<base>[A-Za-z]+)(?P<eopt>\?)?(?P<ann>\([a-z][a-z0-9]*!?(?: -> [a-z*]+)?\))?"
    r"(?:\[(?P<size>\d*)\])?(?P<opt>\?)?$"
)
_ANN_RE = re.compile(r"^\((?P<set>[a-z][a-z0-9]*)(?P<w>!)?(?: -> (?P<after>[a-z*]+))?\)$")


def _parse_type(text: str) -> tuple[Type, Annotation | None]:
    m = _TYPE_RE.match(text)
    if m is None or m["base"] not in BASE_TYPES:
        raise SchemaError(f"unknown type '{text}' (base types: {', '.join(sorted(BASE_TYPES))})")
    ann = None
    if m["ann"]:
        a = _ANN_RE.match(m["ann"])
        ann = Annotation(a["set"], bool(a["w"]), a["after"] or "")
    is_list = m["size"] is not None
    if m["eopt"] and not is_list:  # "Tensor?" without a list: the ? is the optional mark
        return Type(m["base"], optional=True), ann
    return (
        Type(m["base"], is_list, int(m["size"]) if m["size"] else None, bool(m["opt"]), bool(m["eopt"])),
        ann,
    )


def _split_top(text: str) -> list[str]:
    """Split on commas that are not inside brackets or parentheses."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def _default_value(text: str):
    if text in _NAMED_DEFAULTS:
        return _NAMED_DEFAULTS[text]
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1].strip()
        return tuple(_default_value(x.strip()) for x in inner.split(",")) if inner else ()
    if text.startswith(("'", '"')) and text.endswith(text[0]) and len(text) >= 2:
        return text[1:-1]
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        pass
    from ..dtypes import _BY_NAME

    if text in _BY_NAME:  # a ScalarType default written by its name ("float32"), kept as the name as "long" is
        return _BY_NAME[text].name
    raise SchemaError(f"unknown default value '{text}'") from None


def _parse_argument(text: str, kwarg_only: bool) -> Argument:
    decl, eq, default = text.partition("=")
    type_text, _, name = decl.strip().rpartition(" ")
    if not type_text or not name.isidentifier():
        raise SchemaError(f"malformed argument '{text}': expected '<Type> <name>[=<default>]'")
    typ, ann = _parse_type(type_text)
    if eq:
        _default_value(default)  # validate now, so errors point at the schema
    return Argument(name, typ, ann, default if eq else None, kwarg_only)


def _parse_return(text: str) -> Return:
    type_text, _, name = text.partition(" ")
    typ, ann = _parse_type(type_text)
    return Return(typ, ann, name or None)


def parse_schema(text: str) -> FunctionSchema:
    """Parse a schema string; raises ``SchemaError`` with the reason if it is malformed."""
    head, arrow, rets = text.partition(") -> ")
    if not arrow or "(" not in head:
        raise SchemaError(f"malformed schema '{text}': expected 'name.overload(args) -> returns'")
    qual, _, args_text = head.partition("(")
    name, _, overload = qual.partition(".")
    if not name.isidentifier() or (overload and not overload.isidentifier()):
        raise SchemaError(f"malformed operator name '{qual}' in '{text}'")
    arguments, kwarg_only, seen = [], False, set()
    for part in _split_top(args_text):
        if part == "*":
            if kwarg_only:
                raise SchemaError(f"'*' appears twice in '{text}'")
            kwarg_only = True
            continue
        arg = _parse_argument(part, kwarg_only)
        if arg.name in seen:
            raise SchemaError(f"argument '{arg.name}' appears twice in '{text}'")
        seen.add(arg.name)
        arguments.append(arg)
    if rets.startswith("(") and rets.endswith(")"):
        returns = tuple(_parse_return(r) for r in _split_top(rets[1:-1]))
    else:
        returns = (_parse_return(rets),)
    schema = FunctionSchema(name, overload, tuple(arguments), returns)
    if str(schema) != text:
        raise SchemaError(f"schema is not in canonical form: '{text}' prints back as '{schema}'")
    return schema
