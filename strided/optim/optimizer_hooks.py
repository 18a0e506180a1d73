"""Optimizer hooks as torch's: step pre- and post-hooks (per optimizer and global), state-dict and
load-state-dict pre- and post-hooks, and the profiler ranges ``Optimizer.step#AdamW.step`` /
``Optimizer.zero_grad#AdamW.zero_grad``.

Note [Hooked steps]
torch wraps every optimizer class's ``step`` (``profile_hook_step``). strided wraps each subclass's ``step``
when the class is defined (``Optimizer.__init_subclass__``); with no hook registered and no profile
recording, the wrapper only tests that and calls the step. A step that calls its base class's step (both
wrapped) runs the hooks once, in the outer call.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from ..profiler.recorder import active as _profiling
from ..utils.hooks import RemovableHandle, check_hook

__all__ = ["OptimizerHooksMixin", "hooked_step", "register_optimizer_step_pre_hook",
           "register_optimizer_step_post_hook"]

_GLOBAL_PRE: dict = {}
_GLOBAL_POST: dict = {}


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """Call ``hook(optimizer, args, kwargs)`` before every optimizer's step (``args`` starts with the optimizer, as
    torch's); it may return new ``(args, kwargs)``."""
    check_hook(hook, "register_optimizer_step_pre_hook")
    return RemovableHandle(_GLOBAL_PRE, hook)


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    """Call ``hook(optimizer, args, kwargs)`` after every optimizer's step."""
    check_hook(hook, "register_optimizer_step_post_hook")
    return RemovableHandle(_GLOBAL_POST, hook)


def _run_step(step, self, args, kwargs):
    d = self.__dict__
    if d.get("_in_hooked_step"):  # a subclass's step calling its base's: hooks run once
        return step(self, *args, **kwargs)
    d["_in_hooked_step"] = True
    args = (self, *args)  # as torch's: the hooks see the optimizer as the first argument
    try:
        for hook in (*_GLOBAL_PRE.values(), *d.get("_optimizer_step_pre_hooks", {}).values()):
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(f"{step} must return None or a tuple of (new_args, new_kwargs), but got "
                                       f"{result}.")
                args, kwargs = result
        out = step(*args, **kwargs)
        for hook in (*d.get("_optimizer_step_post_hooks", {}).values(), *_GLOBAL_POST.values()):
            hook(self, args, kwargs)
        return out
    finally:
        d["_in_hooked_step"] = False


def hooked_step(step):
    """``step`` running the step hooks and, while a profile records, inside ``Optimizer.step#<Class>.step``
    (Note [Hooked steps])."""

    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        d = self.__dict__
        if _profiling.recorder is not None:
            from ..profiler import record_function

            with record_function(f"Optimizer.step#{type(self).__name__}.step"):
                return _run_step(step, self, args, kwargs)
        if not (_GLOBAL_PRE or _GLOBAL_POST or d.get("_optimizer_step_pre_hooks")
                or d.get("_optimizer_step_post_hooks")):
            return step(self, *args, **kwargs)
        return _run_step(step, self, args, kwargs)

    wrapper.hooked = True
    return wrapper


def zero_grad_range(optimizer):
    """``Optimizer.zero_grad#<Class>.zero_grad`` while a profile records, else None."""
    if _profiling.recorder is None:
        return None
    from ..profiler import record_function

    return record_function(f"Optimizer.zero_grad#{type(optimizer).__name__}.zero_grad")


class OptimizerHooksMixin:
    """The ``register_*_hook`` methods of ``Optimizer``."""

    def _hooks(self, name: str) -> dict:
        return self.__dict__.setdefault(name, {})

    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(optimizer, args, kwargs)`` before each step; it may return new ``(args, kwargs)``."""
        check_hook(hook, "register_step_pre_hook")
        return RemovableHandle(self._hooks("_optimizer_step_pre_hooks"), hook)

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(optimizer, args, kwargs)`` after each step."""
        check_hook(hook, "register_step_post_hook")
        return RemovableHandle(self._hooks("_optimizer_step_post_hooks"), hook)

    def register_state_dict_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(optimizer)`` before ``state_dict()`` builds its dict."""
        check_hook(hook, "register_state_dict_pre_hook")
        return RemovableHandle(self._hooks("_optimizer_state_dict_pre_hooks"), hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(optimizer, state_dict)`` on ``state_dict()``'s result; a non-None result replaces it."""
        check_hook(hook, "register_state_dict_post_hook")
        return RemovableHandle(self._hooks("_optimizer_state_dict_post_hooks"), hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(optimizer, state_dict)`` before loading; a non-None result is loaded instead."""
        check_hook(hook, "register_load_state_dict_pre_hook")
        return RemovableHandle(self._hooks("_optimizer_load_state_dict_pre_hooks"), hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(optimizer)`` after ``load_state_dict()`` has loaded."""
        check_hook(hook, "register_load_state_dict_post_hook")
        return RemovableHandle(self._hooks("_optimizer_load_state_dict_post_hooks"), hook, prepend)

    def _run_hooks(self, name: str, *args):
        """Run the hooks ``name``; the last non-None result (or None)."""
        result = None
        for hook in tuple(self.__dict__.get(name, {}).values()):
            out = hook(self, *args)
            if out is not None:
                result = out
                if args:
                    args = (out, *args[1:])
        return result
