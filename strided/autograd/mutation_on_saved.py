"""``allow_mutation_on_saved_tensors``: in-place writes to tensors saved for backward, the saved value kept
(torch.autograd.graph.allow_mutation_on_saved_tensors).

Note [Mutation of saved tensors]
Normally a tensor saved for backward and then written in place makes backward raise (Note [Saved tensors]).
Inside this context, as in torch, every tensor saved for backward goes through saved-tensor hooks that keep
a handle to it (Note [Saved tensor hooks]), and every write by a backend kernel (the version-counter wrapper,
Note [Version counter], through which all in-place ops, ``out=`` and foreach writes pass) first clones each
saved tensor that shares the written tensor's storage (at the same version); backward then reads the clone.
torch matches by ``(data_ptr, version)``, so a write through a view that starts elsewhere in the saved
tensor's memory (``b[1].sin_()`` after saving ``b``) is not seen there and backward silently reads the
written values; strided matches by storage, so that write clones ``b`` too and the gradient is right (a
write to a disjoint part of the storage clones as well: memory, never a wrong value). The hook is
process-wide while the context is open; backward must run inside the context that recorded the graph.
"""

from __future__ import annotations

import weakref
from collections import defaultdict

from ..dispatch.versions import before_write
from .grad_mode import no_grad
from .saved_hooks import saved_tensors_hooks

__all__ = ["allow_mutation_on_saved_tensors"]

_OUTSIDE = ("Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
            "in which the graph was originally recorded.")  # torch's words, its missing space included
_enabled = [False]


class _Handle:
    """What a node keeps for one saved tensor (the context maps it to the tensor or its clone)."""

    __slots__ = ("__weakref__",)


def _sid(t) -> tuple:
    return (id(t._storage), t._storage._version)


def _tid(t) -> tuple:
    return (id(t), t._offset, t._storage._version)


class _AllowMutationOnSavedContext:
    """The state of one ``allow_mutation_on_saved_tensors`` block (cleared when it exits)."""

    def __init__(self) -> None:
        self.cloned: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.original: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.tid_to_weakhandle: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self.sid_to_tid: dict = defaultdict(set)

    def clear(self) -> None:
        self.cloned.clear()
        self.original.clear()
        self.tid_to_weakhandle.clear()
        self.sid_to_tid.clear()

    def pack(self, tensor):
        tid = _tid(tensor)
        self.sid_to_tid[_sid(tensor)].add(tid)
        handle = self.tid_to_weakhandle.get(tid)
        if handle is None:  # the same tensor at the same version may be saved several times: one handle
            handle = _Handle()
            self.tid_to_weakhandle[tid] = handle
            self.original[handle] = tensor
        return handle

    def unpack(self, handle):
        if not _enabled[0]:
            raise AssertionError(_OUTSIDE)
        found = self.cloned.get(handle)
        if found is None:
            found = self.original.get(handle)
            if found is None:
                raise AssertionError(_OUTSIDE)
        return found

    def before_write(self, tensor) -> None:
        tids = self.sid_to_tid.get(_sid(tensor))
        if not tids:
            return
        for tid in tids:
            handle = self.tid_to_weakhandle.get(tid)
            if handle is None or handle in self.cloned:  # freed by a backward already, or cloned before
                continue
            with no_grad():
                self.cloned[handle] = self.original[handle].clone()
            del self.original[handle]


class allow_mutation_on_saved_tensors:  # noqa: N801 - torch's name
    """Context manager under which tensors saved for backward may be written in place: the saved value is
    cloned before the write and backward reads the clone (Note [Mutation of saved tensors]).

    Examples
    --------
    >>> with strided.autograd.graph.allow_mutation_on_saved_tensors():
    ...     a = strided.ones(2, 3, requires_grad=True)
    ...     b = a.clone()
    ...     out = (b ** 2).sum()
    ...     b.sin_()                 # b was saved by pow: its value before sin_ is kept
    ...     out.backward()           # a.grad == 2 * a
    """

    def __init__(self):
        self.ctx = _AllowMutationOnSavedContext()
        self._hooks = saved_tensors_hooks(self.ctx.pack, self.ctx.unpack)

    def __enter__(self) -> _AllowMutationOnSavedContext:
        if _enabled[0]:
            raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
        self._hooks.__enter__()
        _enabled[0] = True
        before_write.hook = self.ctx.before_write
        return self.ctx

    def __exit__(self, *exc) -> None:
        before_write.hook = None
        _enabled[0] = False
        self._hooks.__exit__(*exc)
        self.ctx.clear()
