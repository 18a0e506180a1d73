"""Dispatch keys, in resolution order (Note [Dispatch order] in dispatcher.py)."""

from __future__ import annotations

from enum import IntEnum

__all__ = ["DispatchKey", "BACKEND_KEYS", "BACKEND_NAMES", "parse_key"]


class DispatchKey(IntEnum):
    """A slot in an operator's kernel table. Lower values are tried first."""

    Autocast = 0
    Autograd = 1
    CUDA = 2
    CPU = 3
    Meta = 4
    CompositeExplicitAutograd = 5
    CompositeImplicitAutograd = 6


BACKENDS = (DispatchKey.CUDA, DispatchKey.CPU, DispatchKey.Meta)
BACKEND_KEYS = {"cuda": DispatchKey.CUDA, "cpu": DispatchKey.CPU, "meta": DispatchKey.Meta}
BACKEND_NAMES = {DispatchKey.CUDA: "cuda", DispatchKey.CPU: "cpu", DispatchKey.Meta: "meta"}

# Bits above the backend key in a keyset integer (see OpOverload.__call__).
AUTOGRAD_BIT = 1 << 4
AUTOCAST_BIT = 1 << 5
COMPLEX_BIT = 1 << 6  # a complex tensor among the arguments (Note [Complex operators] in ops/complex_support.py)


def parse_key(name: str) -> DispatchKey:
    """``"CPU"`` -> ``DispatchKey.CPU``; a clear error for unknown names."""
    try:
        return DispatchKey[name]
    except KeyError:
        raise ValueError(
            f"unknown dispatch key '{name}'; expected one of {', '.join(k.name for k in DispatchKey)}"
        ) from None
