"""What autograd offers a tensor directly: ``t.grad = g`` (``set_grad``), ``retain_grad``, ``register_hook``,
``register_post_accumulate_grad_hook`` and the handle that removes a hook (torch's Tensor methods)."""

from __future__ import annotations

import weakref

from ..tensor import Tensor
from .graph import _meta

__all__ = ["set_grad", "retain_grad", "RemovableHandle", "register_hook", "register_post_accumulate_grad_hook"]


def set_grad(t: Tensor, value) -> None:
    """``t.grad = value`` with torch's checks."""
    if value is not None:
        if not isinstance(value, Tensor):
            raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                            f"{type(value).__name__}")
        if value._sizes != t._sizes:  # torch 2.14's words and order
            raise RuntimeError(f"attempting to assign a gradient of size '{list(value._sizes)}' to a tensor of size "
                               f"'{list(t._sizes)}'. Please ensure that the gradient and the tensor are the same size")
        if value.dtype is not t.dtype:
            from ..backends.meta.pointwise import scalar_type_name, type_meta_name

            raise RuntimeError(f"attempting to assign a gradient with dtype '{type_meta_name(value.dtype)}' to a "
                               f"tensor with grad_dtype '{scalar_type_name(t.dtype)}'. The gradient must match the "
                               "tensor's dtype.")
        if value.device != t.device:
            raise RuntimeError("assigned grad has data located on a different device")
    elif t._autograd is None:
        return
    _meta(t).grad = value


def retain_grad(t: Tensor) -> None:
    if not t._requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    meta = t._autograd
    if meta is None or meta.grad_fn is None or meta.retains_grad:
        return
    node = meta.grad_fn
    if node.retain_hooks is None:
        node.retain_hooks = {}
    node.retain_hooks[meta.output_nr] = weakref.ref(t)
    meta.retains_grad = True


class RemovableHandle:
    """Returned by ``register_hook``; ``remove()`` unregisters the hook."""

    __slots__ = ("_hooks", "_hook")

    def __init__(self, hooks: list, hook):
        self._hooks, self._hook = hooks, hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


def register_hook(t: Tensor, hook) -> RemovableHandle:
    if not t._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    meta = _meta(t)
    if meta.grad_fn is None:
        if meta.hooks is None:
            meta.hooks = []
        hooks = meta.hooks
    else:
        node = meta.grad_fn
        if node.pre_hooks is None:
            node.pre_hooks = {}
        hooks = node.pre_hooks.setdefault(meta.output_nr, [])
    hooks.append(hook)
    return RemovableHandle(hooks, hook)


def register_post_accumulate_grad_hook(t: Tensor, hook) -> RemovableHandle:
    """torch's ``Tensor.register_post_accumulate_grad_hook``: ``hook(leaf)`` runs after the leaf's ``.grad``
    has been updated by a backward (e.g. to step an optimizer per parameter during the backward)."""
    if not callable(hook):
        raise TypeError(f"register_post_accumulate_grad_hook: expected a callable hook, got {type(hook).__name__}")
    if not t._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    meta = _meta(t)
    if meta.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if meta.post_accumulate_hooks is None:
        meta.post_accumulate_hooks = []
    meta.post_accumulate_hooks.append(hook)
    return RemovableHandle(meta.post_accumulate_hooks, hook)
