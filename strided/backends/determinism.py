"""Deterministic-algorithms switch (``torch.use_deterministic_algorithms``), device-neutral.

Kernels without a deterministic implementation call :func:`alert_not_deterministic` with their
name; it raises (or warns, with ``warn_only=True``) in torch's words, strided's names.  No CUDA
import: the null test tier and the CPU backend use it too.

Note [Deterministic GEMM]
cuBLASLt gives bitwise-identical results for a fixed algorithm, problem, GPU model and library
version.  With determinism on, ``backends/cuda/blas.py`` also masks out the split-K reduction
scheme ``INPLACE`` (partial sums accumulated in the output buffer under counters), keeping only
``NONE`` and the out-of-place ``COMPUTE_TYPE``/``OUTPUT_TYPE`` reductions, and the workspace is
per (device, stream) so concurrent streams never share scratch memory.
"""

from __future__ import annotations

import warnings

__all__ = ["use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode", "alert_not_deterministic"]

_state = {"enabled": False, "warn_only": False}


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Make kernels without a deterministic implementation raise (or warn when ``warn_only``)."""
    if not isinstance(mode, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, "
                        f"not {type(mode).__name__}")
    if not isinstance(warn_only, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'warn_only' must be bool, "
                        f"not {type(warn_only).__name__}")
    _state["enabled"] = mode
    _state["warn_only"] = warn_only if mode else False


def are_deterministic_algorithms_enabled() -> bool:
    """True after ``use_deterministic_algorithms(True)``."""
    return _state["enabled"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """True when determinism is on in warn-only mode."""
    return _state["warn_only"]


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode: str | int) -> None:
    """torch's alternative spelling: ``"default"``/0 off, ``"warn"``/1, ``"error"``/2."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, "
                               f"but got {debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    """0 (off), 1 (warn) or 2 (error)."""
    if not _state["enabled"]:
        return 0
    return 1 if _state["warn_only"] else 2


def message(caller: str) -> str:
    """torch's alert text, naming strided's switch."""
    return (f"{caller} does not have a deterministic implementation, but you set "
            "'strided.use_deterministic_algorithms(True)'. You can turn off determinism just for this "
            "operation, or you can use the 'warn_only=True' option, if that's acceptable for your "
            "application. You can also file an issue at the strided repository to help us prioritize "
            "adding deterministic support for this operation.")


def alert_not_deterministic(caller: str) -> None:
    """Call from a kernel that has no deterministic implementation (``caller``: e.g. ``"scatter_add_cuda_kernel"``).

    Does nothing unless determinism is on; then raises ``RuntimeError`` (``UserWarning`` when
    ``warn_only=True``) with torch's message.
    """
    if not _state["enabled"]:
        return
    if _state["warn_only"]:
        warnings.warn(message(caller), UserWarning, stacklevel=2)
        return
    raise RuntimeError(message(caller))
