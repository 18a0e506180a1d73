"""Grad mode: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

The state is the dispatcher's thread-local ``grad_mode`` (``enabled``, ``inference``): the
dispatcher reads ``grad_mode.enabled`` on every call, one attribute lookup, and a new thread
starts with grad enabled, as in torch. Each class works as a context manager and as a decorator.
"""

from __future__ import annotations

import functools
import threading

from ..dispatch.dispatcher import grad_mode
from ..dispatch.state import set_inference

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "set_multithreading_enabled", "is_multithreading_enabled"]


def is_grad_enabled() -> bool:
    """Whether operations on tensors that require grad record a graph (this thread)."""
    return grad_mode.enabled


def is_inference_mode_enabled() -> bool:
    return grad_mode.inference


class _Mode:
    """Base of the grad-mode context managers: save the state on enter, restore it on exit.

    ``@no_grad()`` and bare ``@no_grad`` both decorate a function, as in torch.
    """

    __slots__ = ("_prev",)

    def __new__(cls, *args, **kwargs):
        if cls is not set_grad_enabled and len(args) == 1 and not kwargs and callable(args[0]):
            return cls()(args[0])  # used as a bare decorator
        return super().__new__(cls)

    def _set(self) -> None:
        raise NotImplementedError

    def __enter__(self):
        self._prev = (grad_mode.enabled, grad_mode.inference)
        self._set()
        return self

    def __exit__(self, *exc) -> None:
        grad_mode.enabled = self._prev[0]
        set_inference(self._prev[1])

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(*self._args()):
                return fn(*args, **kwargs)

        return wrapper

    def _args(self) -> tuple:
        return ()


class no_grad(_Mode):  # noqa: N801 - torch's name
    """Disable graph recording inside the block (results have ``requires_grad=False``)."""

    __slots__ = ()

    def _set(self) -> None:
        grad_mode.enabled = False


class enable_grad(_Mode):  # noqa: N801
    """Enable graph recording inside the block (e.g. within ``no_grad``)."""

    __slots__ = ()

    def _set(self) -> None:
        grad_mode.enabled = True


class set_grad_enabled(_Mode):  # noqa: N801
    """Set grad mode to ``mode``; effective at once (as a function) and undone on ``__exit__``."""

    __slots__ = ("mode",)

    def __init__(self, mode: bool):
        self.mode = bool(mode)
        self._prev = (grad_mode.enabled, grad_mode.inference)
        grad_mode.enabled = self.mode

    def __enter__(self):
        return self

    def _set(self) -> None:
        grad_mode.enabled = self.mode

    def _args(self) -> tuple:
        return (self.mode,)

    def __call__(self, fn):
        grad_mode.enabled = self._prev[0]  # as a decorator: no effect until called
        set_inference(self._prev[1])
        return super().__call__(fn)


class inference_mode(_Mode):  # noqa: N801
    """``no_grad`` whose new tensors are inference tensors (Note [Inference tensors] in storage.py);
    ``inference_mode(False)`` turns inference mode off and grad mode on, as torch's."""

    __slots__ = ("mode",)

    def __init__(self, mode: bool = True):
        self.mode = bool(mode)

    def _set(self) -> None:
        grad_mode.enabled = not self.mode
        set_inference(self.mode)

    def _args(self) -> tuple:
        return (self.mode,)


# Note [One backward thread]
# torch's engine runs a CUDA backward on a worker thread per device; ``set_multithreading_enabled(False)``
# makes it run on the calling thread instead. strided's engine always runs on the calling thread (each node on
# the stream its forward used: Note [Backward streams]), so the flag is kept -- thread-local, set at once and
# restored on exit, as torch's -- but both settings behave as torch's ``False``.
class _MultithreadingTLS(threading.local):
    enabled = True


_multithreading = _MultithreadingTLS()


class set_multithreading_enabled:  # noqa: N801 - torch's name
    """Enable or disable multithreaded backward in this thread, at once and until ``__exit__``; a context
    manager or a function, as torch's (strided's backward always runs on the calling thread:
    Note [One backward thread])."""

    def __init__(self, mode: bool) -> None:
        if not isinstance(mode, bool):
            raise TypeError("set_multithreading_enabled(): argument 'enabled' (position 1) must be bool, "
                            f"not {type(mode).__name__}")
        self.prev = _multithreading.enabled
        _multithreading.enabled = mode
        self.mode = mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _multithreading.enabled = self.prev

    def clone(self) -> set_multithreading_enabled:
        """A copy of this context manager (torch's ``_DecoratorContextManager.clone``)."""
        return self.__class__(self.mode)


def is_multithreading_enabled() -> bool:
    """The flag ``set_multithreading_enabled`` sets (this thread; Note [One backward thread])."""
    return _multithreading.enabled
