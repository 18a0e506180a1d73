"""``profile(with_stack=True)``: the Python stack each op was called from, and a range per ``nn.Module`` call.

Note [Op call sites]
torch's ops are C++, so the Python frames live at an op call are the caller's: user code and torch's own
Python layers (``torch/nn/modules/linear.py``, ``torch/optim/adamw.py``). strided is Python all the way down,
so its stack for an op leaves out the runtime's frames (dispatch, backends, tensor methods, autograd, the
profiler itself) and keeps what corresponds to torch's Python layers: ``strided/nn``, ``strided/optim``,
``strided/amp`` and the demo (``strided/demo.py``, ``demo_model.py``), with every frame outside the package.
Entries read as torch's,
``path(line): function``, innermost first; the table shows them as "Source Location" and
``key_averages(group_by_stack_n=n)`` groups by the first n. Each ``nn.Module`` call becomes a range named as
torch's Python tracer names it (``nn.Module: Linear_0``, numbered per class in order of first call),
shown in the event tree and the Chrome trace but left out of ``key_averages`` (torch's
``include_python_functions=False``).
"""

from __future__ import annotations

import os
import sys

__all__ = ["user_stack", "ModuleRanges"]

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_KEPT = tuple(_PACKAGE + p for p in ("nn" + os.sep, "optim" + os.sep, "amp" + os.sep, "demo"))
_shown: dict = {}  # code object -> whether its frames appear in stacks


def _is_shown(code) -> bool:
    shown = _shown.get(code)
    if shown is None:
        name = code.co_filename
        shown = _shown[code] = not name.startswith(_PACKAGE) or name.startswith(_KEPT)
    return shown


def user_stack(skip: int = 1) -> list[str]:
    """The live Python frames above the caller that a user reads as the op's call site, innermost first."""
    out = []
    frame = sys._getframe(skip + 1)
    while frame is not None:
        code = frame.f_code
        if _is_shown(code):
            out.append(f"{code.co_filename}({frame.f_lineno}): {code.co_name}")
        frame = frame.f_back
    return out


class ModuleRanges:
    """Wraps ``nn.Module.__call__`` while a profile records, so each module call is a range."""

    def __init__(self, recorder):
        self.recorder = recorder
        self.ids: dict[int, str] = {}  # id(module) -> its range name
        self.counts: dict[str, int] = {}
        self.kept: list = []  # the modules named, so that their ids stay theirs while the profile records
        self.original = None

    def name(self, module) -> str:
        name = self.ids.get(id(module))
        if name is None:
            cls = type(module).__name__
            k = self.counts.get(cls, 0)
            self.counts[cls] = k + 1
            name = self.ids[id(module)] = f"nn.Module: {cls}_{k}"
            self.kept.append(module)
        return name

    def install(self) -> None:
        from ..nn.module import Module

        original = self.original = Module.__call__
        rec = self.recorder

        def profiled_call(module, *args, **kwargs):
            e = rec.push(self.name(module), "python_function")
            try:
                return original(module, *args, **kwargs)
            finally:
                rec.pop(e)

        profiled_call.unprofiled = original
        Module.__call__ = profiled_call

    def uninstall(self) -> None:
        from ..nn.module import Module

        Module.__call__ = self.original
        self.kept.clear()
