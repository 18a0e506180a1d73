"""torch's Python-binding type checks of an argument, in its words.

Functions that strided writes in Python where torch has a generated binding (the ATen forms, torch.linalg)
check their arguments' types before any work, so a wrong type fails as torch's does --
``conv_tbc(): argument 'pad' (position 4) must be int, not float`` -- not as an ``AttributeError`` deep
inside. The schema-driven dispatcher makes the same checks for the ops of the YAML (matching.py).
"""

from __future__ import annotations

from ..tensor import Tensor

__all__ = ["check_args", "arg_tensor", "arg_bool"]


def _fail(fn: str, name: str, position: int | None, kind: str, value) -> None:
    where = f" (position {position})" if position is not None else ""
    raise TypeError(f"{fn}(): argument '{name}'{where} must be {kind}, not {type(value).__name__}")


def arg_tensor(fn: str, name: str, position: int | None, value) -> None:
    """A Tensor argument (``position`` None: a keyword-only one)."""
    if not isinstance(value, Tensor):
        _fail(fn, name, position, "Tensor", value)


def arg_bool(fn: str, name: str, value) -> None:
    """A keyword-only bool argument."""
    if not isinstance(value, bool):
        _fail(fn, name, None, "bool", value)


def check_args(fn: str, *checks) -> None:
    """Each ``(name, position, value, kind)`` with kind "Tensor", "Tensor?" (None allowed), "int" or "bool"."""
    for name, position, value, kind in checks:
        if kind == "int":
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif kind == "bool":
            ok = isinstance(value, bool)
        else:
            ok = isinstance(value, Tensor) or (kind == "Tensor?" and value is None)
        if not ok:
            _fail(fn, name, position, kind.rstrip("?"), value)
