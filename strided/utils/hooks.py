"""``RemovableHandle``: what every ``register_*_hook`` of a Module or Optimizer returns (torch.utils.hooks')."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["RemovableHandle", "check_hook"]


class RemovableHandle:
    """Puts ``hook`` into ``hooks`` under a fresh id; ``remove()`` takes it out again (also of every dict in
    ``extra_dict``, where flags such as with_kwargs are kept by the same id). A context manager too."""

    _next_id = 0

    def __init__(self, hooks: dict, hook: Callable | None = None, prepend: bool = False, *, extra_dict=None):
        self.hooks_dict = hooks
        self.id = RemovableHandle._next_id
        RemovableHandle._next_id += 1
        if extra_dict is None:
            extra_dict = ()
        elif isinstance(extra_dict, dict):
            extra_dict = (extra_dict,)
        self.extra_dicts = tuple(extra_dict)
        if hook is not None:
            hooks[self.id] = hook
            if prepend:
                items = list(hooks.items())
                hooks.clear()
                hooks.update([items[-1], *items[:-1]])

    def remove(self) -> None:
        self.hooks_dict.pop(self.id, None)
        for d in self.extra_dicts:
            d.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def check_hook(hook, api: str) -> None:
    """Refuse a hook that cannot be called when it is registered, not later in a forward or a step."""
    if not callable(hook):
        raise TypeError(f"{api}: expected a callable hook, got {type(hook).__name__}")
