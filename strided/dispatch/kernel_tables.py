"""The tables of named kernels per dispatch key, the modules that fill them (imported on first use), the
backends' kernel wrappers and the tracing hook: the state ``OpOverload`` resolves kernels from
(``dispatcher.py``)."""

from __future__ import annotations

import importlib

from .keys import DispatchKey

__all__ = ["KERNEL_TABLES", "KERNEL_MODULES", "BACKEND_KERNEL_WRAPPERS", "backend_loaded", "clear_all_caches"]

# Where the named kernels of each key live (imported on first use: CUDA never at import time).
KERNEL_MODULES = {
    DispatchKey.CPU: "strided.backends.cpu",
    DispatchKey.Meta: "strided.backends.meta",
    DispatchKey.CUDA: "strided.backends.cuda.kernels.ops",  # ImportError there = no usable GPU
    DispatchKey.CompositeExplicitAutograd: "strided.ops.composite",
    DispatchKey.CompositeImplicitAutograd: "strided.ops.composite",
}
# name -> function, per key; filled by ``strided.dispatch.library.kernel`` decorators.
KERNEL_TABLES: dict[DispatchKey, dict[str, object]] = {k: {} for k in DispatchKey}

# Note [Backend kernel wrappers]
# A backend may wrap every kernel of its own as the dispatcher resolves it (once per op and keyset, then cached):
# the CPU backend runs its NumPy kernels with NumPy's floating-point warnings off (Note [Floating-point warnings]
# in backends/cpu/pointwise.py), since torch never warns about an overflow or a NaN.
BACKEND_KERNEL_WRAPPERS: dict = {}


# Note [Zero-cost tracing]
# Tools such as strided.utils.profiler.count_ops set this to a function (op, keyset, fn) -> fn and
# clear every op's cache; newly resolved kernels are then wrapped. The hot path never checks a flag.
# The autograd engine likewise runs each backward node inside ``node_scope(node._name)`` while it is set
# (strided.profiler's ranges; Note [Profiler hooks]).
class _Tracing:
    __slots__ = ("wrapper", "node_scope")

    def __init__(self):
        self.wrapper = None
        self.node_scope = None


_tracing = _Tracing()


def clear_all_caches() -> None:
    """Forget every resolved kernel (all namespaces), so the next calls resolve again."""
    from ..ops.registry import _NAMESPACES

    for ns in _NAMESPACES.values():
        for packet in ns:
            for op in packet._ordered:
                op._cache.clear()


_TABLES_LOADED: dict[DispatchKey, dict | None] = {}
_LOAD_ERRORS: dict[DispatchKey, str] = {}


def _load_table(key: DispatchKey):
    """Import the module that defines ``key``'s named kernels once; None if it can't load."""
    if key in _TABLES_LOADED:
        return _TABLES_LOADED[key]
    module = KERNEL_MODULES.get(key)
    table = None
    if module is not None:
        try:
            importlib.import_module(module)
            table = KERNEL_TABLES[key]
        except ImportError as e:  # e.g. the CUDA backend without cuda-bindings
            _LOAD_ERRORS[key] = f"{type(e).__name__}: {e}"
    _TABLES_LOADED[key] = table
    return table


def backend_loaded(key: DispatchKey) -> bool:
    return _load_table(key) is not None
