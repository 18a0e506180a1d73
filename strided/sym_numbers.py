"""torch's ``sym_*`` helpers (``sym_int``, ``sym_max``, ``sym_ite`` ...), for code written against torch.compile's
symbolic shapes: strided's sizes are always concrete Python ints (there is no SymInt), so each helper is its eager
meaning, with torch's type rules (``sym_max`` / ``sym_min`` return a float when either argument is one) and checks.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

__all__ = ["sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "sym_sqrt", "sym_ite", "sym_sum"]

_ALL_TYPES = (np.integer, np.floating, int, float)
_FLOAT_TYPES = (np.floating, float)


def sym_int(a) -> int:
    """``int(a)`` (a float truncates toward zero)."""
    return builtins.int(a)


def sym_float(a) -> float:
    """``float(a)``."""
    return builtins.float(a)


def _check_numbers(a, b) -> bool:
    for v in (a, b):
        if not isinstance(v, _ALL_TYPES):
            raise AssertionError(f"expected {_ALL_TYPES}, got {type(v)}")
    return isinstance(a, _FLOAT_TYPES) or isinstance(b, _FLOAT_TYPES)


def sym_max(a, b):
    """``max(a, b)`` of two numbers, a float when either is one."""
    return builtins.float(builtins.max(a, b)) if _check_numbers(a, b) else builtins.max(a, b)


def sym_min(a, b):
    """``min(a, b)`` of two numbers, a float when either is one."""
    return builtins.float(builtins.min(a, b)) if _check_numbers(a, b) else builtins.min(a, b)


def sym_not(a) -> bool:
    """``not a``."""
    return not a


def sym_sqrt(a) -> float:
    """``math.sqrt(a)``."""
    return math.sqrt(a)


def sym_ite(b, t, f):
    """``t if b else f``: ``b`` a bool, ``t`` and ``f`` of one type."""
    if not isinstance(b, builtins.bool):
        raise AssertionError(f"expected SymBool or bool, got {type(b)}")
    if type(t) is not type(f):
        raise AssertionError(f"type mismatch: {type(t)} vs {type(f)}")
    return t if b else f


def sym_sum(*args):
    """The sum of ``sym_sum(a, b, c)`` or ``sym_sum([a, b, c])``."""
    items = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
    return builtins.sum(items)
