"""Anomaly detection: ``detect_anomaly`` / ``set_detect_anomaly`` (torch.autograd.anomaly_mode).

Note [Anomaly mode]
As torch's ``AnomalyMode``, the switch is process-wide (not per thread) and does two things:

1. Every backward node made while it is on keeps the Python stack of the forward call that made it
   in ``node.metadata["traceback_"]`` (a list of ``traceback.format_list`` lines), and, when it is
   made by a backward pass (``create_graph=True``), the node being run then as ``"parent_"``.
   When a node fails in backward while the mode is on, the engine warns "Error detected in
   XBackward0. Traceback of forward call that caused the error: ..." (then each parent's stack)
   before the error propagates.
2. With ``check_nan`` each gradient a node returns is tested, and the first with a NaN raises
   "Function 'XBackward0' returned nan values in its 0th output." (one device sync per gradient,
   as in torch).

torch makes its nodes in C++, so their stacks end at the last Python frame; strided's are made by
the dispatcher and autograd in Python, so the stored stack drops the trailing frames of strided's
own internals (everything but ``strided/nn``, which is Python in torch too).

Off, the cost is one attribute read per node made and none per node run (the engine's loop is
inside a ``try`` that only acts on an exception).
"""

from __future__ import annotations

import os
import threading
import traceback
import warnings

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
           "set_anomaly_enabled"]


class _AnomalyState:
    __slots__ = ("enabled", "check_nan")

    def __init__(self):
        self.enabled = False
        self.check_nan = True


anomaly = _AnomalyState()


class _Running(threading.local):
    node = None  # the node this thread's backward pass is running (a new node's "parent_")


running = _Running()


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on (``torch.is_anomaly_enabled``)."""
    return anomaly.enabled


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection also checks backward outputs for NaN (``torch.is_anomaly_check_nan_enabled``)."""
    return anomaly.check_nan


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off (``torch.set_anomaly_enabled``)."""
    for position, (name, value) in enumerate((("enabled", enabled), ("check_nan", check_nan)), 1):
        if not isinstance(value, bool):
            raise TypeError(f"set_anomaly_enabled(): argument '{name}' (position {position}) must be bool, not "
                            f"{type(value).__name__}")
    anomaly.enabled = enabled
    anomaly.check_nan = check_nan


class detect_anomaly:
    """Context manager that turns anomaly detection on (Note [Anomaly mode]); warns that it is slow."""

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = anomaly.enabled
        self.check_nan = check_nan
        self.prev_check_nan = anomaly.check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only "
                      "be enabled for debugging.", stacklevel=2)

    def __enter__(self) -> None:
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *args: object) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


class set_detect_anomaly:
    """Turn anomaly detection on or off now; as a context manager, the previous setting comes back on exit."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = anomaly.enabled
        self.prev_check_nan = anomaly.check_nan
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *args: object) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_USER_FACING = _PACKAGE + "nn" + os.sep


def _internal(filename: str) -> bool:
    if filename.startswith(_PACKAGE):
        return not filename.startswith(_USER_FACING)
    return filename.startswith("derivatives.yaml:")  # a formula (compiled from the YAML)


def store_stack(node) -> None:
    """Record the forward stack (and the running backward node, if any) in ``node.metadata``."""
    frames = traceback.extract_stack()
    end = len(frames)
    while end and _internal(frames[end - 1].filename):
        end -= 1
    meta = node.metadata
    meta["traceback_"] = traceback.format_list(frames[:end])
    parent = running.node
    if parent is not None:
        meta["parent_"] = parent


def _warn_stack(stack, name: str, is_parent: bool) -> None:
    if stack is None:
        msg = (f"Error detected in {name}. No forward pass information available. Enable detect anomaly "
               "during forward pass for more information.")
    elif not is_parent:
        msg = f"Error detected in {name}. Traceback of forward call that caused the error:\n" + "".join(stack)
    else:
        msg = (f"\n\nPrevious calculation was induced by {name}. Traceback of forward call that induced the "
               "previous calculation:\n" + "".join(stack))
    warnings.warn(msg, UserWarning, stacklevel=4)


def print_stack(node) -> None:
    """Warn with the forward stack of ``node`` and of each parent (torch's ``print_stack``)."""
    meta = node.metadata
    _warn_stack(meta.get("traceback_"), node._name, False)
    parent = meta.get("parent_")
    seen = set()
    while parent is not None and id(parent) not in seen:
        seen.add(id(parent))
        pmeta = parent.metadata
        _warn_stack(pmeta.get("traceback_"), parent._name, True)
        parent = pmeta.get("parent_")


def check_nan(node, results) -> None:
    """Raise torch's error for the first gradient ``node`` returned that holds a NaN."""
    from ..dispatch.dispatcher import grad_mode
    from ..ops import bound as ops

    prev = grad_mode.enabled
    grad_mode.enabled = False
    try:
        for i, g in enumerate(results):
            if g is not None and bool(ops.isnan(g).any()):
                raise RuntimeError(f"Function '{node._name}' returned nan values in its {i}th output.")
    finally:
        grad_mode.enabled = prev
