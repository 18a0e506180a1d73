"""Utilities: progress bars, the op profiler, ``data`` (datasets and the DataLoader), ``checkpoint``
(activation checkpointing), ``hooks`` (``RemovableHandle``), ``benchmark`` (``Timer``, ``Compare``) and ``dlpack``
(torch.utils.dlpack's names)."""

from __future__ import annotations

# Note [Lazy utils submodules]
# As ``strided.utils`` itself (Note [Lazy submodules] in strided/__init__.py), its submodules load on
# first attribute access, so ``strided.utils.data.DataLoader`` works right after ``import strided``,
# as ``torch.utils.data`` does after ``import torch``, without importing them all up front.
_LAZY_SUBMODULES = frozenset({"benchmark", "checkpoint", "data", "dlpack", "hooks", "profiler", "progress"})


def __getattr__(name: str):
    if name in _LAZY_SUBMODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")  # the import binds it as an attribute
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
