"""Hooks on the tensors autograd saves for backward (``torch.autograd.graph.saved_tensors_hooks``).

Note [Saved tensor hooks]
Inside ``with saved_tensors_hooks(pack, unpack):`` every tensor a recorded op (or a custom
Function's ``save_for_backward``) saves is handed to ``pack`` when it is saved, and the node keeps
only what ``pack`` returns; backward calls ``unpack`` on that each time it reads the tensor. This is
torch's mechanism for trading memory: ``save_on_cpu`` keeps the saved activations in host memory,
and non-reentrant activation checkpointing (``strided.utils.checkpoint``) keeps nothing and
recomputes. As in torch:

* hooks are per thread and nest (the innermost pair applies); ops under ``no_grad`` save nothing
  and call no hook;
* the version check of Note [Saved tensors] does not apply to a hooked tensor (the hooks own what
  is kept), but a ``pack`` that modifies its input in place is an error;
* ``unpack`` must return a Tensor; an op's own output gets its ``grad_fn`` back when unpacked;
* the ops a ``pack`` hook runs save their tensors without hooks (no recursion).

The hot path (no hooks anywhere) pays one global read per saved tensor: ``active`` counts the
hook contexts open in all threads, and the thread-local stack is read only when it is non-zero.
"""

from __future__ import annotations

import threading

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks"]


class _State(threading.local):
    def __init__(self):
        self.stack: list[tuple] = []  # (pack, unpack) pairs, innermost last
        self.disabled: str | None = None  # disable_saved_tensors_hooks' message


_tls = _State()
_count_lock = threading.Lock()
active = 0  # hook contexts open in any thread (read without the lock on the hot path)


def _bump(delta: int) -> None:
    global active
    with _count_lock:
        active += delta


def current_hooks():
    """This thread's innermost (pack, unpack) pair, or None."""
    stack = _tls.stack
    return stack[-1] if stack else None


class saved_tensors_hooks:  # noqa: N801 - torch's name
    """Context manager: tensors saved for backward inside it go through ``pack_hook`` when saved and
    ``unpack_hook`` when backward reads them (Note [Saved tensor hooks]).

    Examples
    --------
    >>> with strided.autograd.graph.saved_tensors_hooks(lambda t: t.cpu(), lambda t: t.to("cuda")):
    ...     y = model(x)        # activations saved for backward are kept on the host
    """

    def __init__(self, pack_hook, unpack_hook):
        for name, hook in (("pack_hook", pack_hook), ("unpack_hook", unpack_hook)):
            if not callable(hook):
                raise TypeError(f"saved_tensors_hooks: {name} must be callable, got {type(hook).__name__}")
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _tls.disabled is not None:
            raise RuntimeError(_tls.disabled)
        _tls.stack.append((self.pack_hook, self.unpack_hook))
        _bump(1)
        return self

    def __exit__(self, *exc) -> None:
        _tls.stack.pop()
        _bump(-1)


class disable_saved_tensors_hooks:  # noqa: N801 - torch's name
    """Context manager under which entering :class:`saved_tensors_hooks` raises ``error_message``."""

    def __init__(self, error_message: str):
        self.error_message = str(error_message)

    def __enter__(self):
        self._prev = _tls.disabled
        _tls.disabled = self.error_message
        return self

    def __exit__(self, *exc) -> None:
        _tls.disabled = self._prev


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 - torch's name
    """Keep the tensors saved for backward in host memory and copy them back when backward needs
    them: GPU memory for activations is traded for two copies each.

    With ``pin_memory=True`` the device-to-host copy goes to pinned memory, asynchronously, and the
    copy back is asynchronous too (reading a packed tensor on the host before the stream has
    finished may see stale data, as in torch). CPU tensors are kept as they are.
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda"):
        if device_type != "cuda":
            raise ValueError(f"save_on_cpu: device_type {device_type!r} is not supported (strided has 'cuda')")

        def pack_to_cpu(t):
            if t.device.type == "cpu":
                return (t.device, t)
            if not pin_memory:
                return (t.device, t.cpu())
            from ..factories import empty

            packed = empty(t._sizes, dtype=t.dtype, pin_memory=True)
            packed.copy_(t, non_blocking=True)
            return (t.device, packed)

        def unpack_from_cpu(packed):
            device, t = packed
            return t if device.type == "cpu" else t.to(device, non_blocking=pin_memory)

        self.device_type = device_type
        super().__init__(pack_to_cpu, unpack_from_cpu)


def pack(t, hooks) -> tuple:
    """(what ``pack_hook`` returned, unpack_hook) for saving ``t`` under ``hooks``."""
    pack_hook, unpack_hook = hooks
    version = t._storage._version
    stack = _tls.stack
    _tls.stack = []  # the hook's own ops save without hooks (as torch: no recursion)
    try:
        packed = pack_hook(t)
    finally:
        _tls.stack = stack
    if t._storage._version != version:
        raise RuntimeError("A saved tensor pack hook is modifying its input in place. Tensors provided as input "
                           "to pack hook cannot be modified by in-place operations as this can lead to unexpected "
                           "side-effects. Please open an issue if you need this feature.")
    return packed, unpack_hook


def unpack(packed, unpack_hook):
    """The tensor ``unpack_hook`` makes of ``packed`` (checked to be a Tensor)."""
    from ..tensor import Tensor

    t = unpack_hook(packed)
    if not isinstance(t, Tensor):
        raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                        f"{type(t).__name__}")
    return t
