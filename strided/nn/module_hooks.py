"""Module hooks as torch's: forward pre-hooks and hooks (``with_kwargs``, ``always_call``), full backward
pre-hooks and hooks, and the global ``register_module_*`` hooks every Module runs.

Note [Module backward hooks]
As in torch (torch/utils/hooks.py, ``BackwardHook``), a module with backward hooks passes its tensor
inputs and outputs through an identity autograd Function. The outputs' node sees the gradients of the
module's outputs first: the pre-hooks may replace them, and they are kept as ``grad_output``. The inputs'
node then sees the gradients of the module's inputs: the hooks get ``(module, grad_input, grad_output)``
and may replace ``grad_input``. When no input requires grad the hooks run at the outputs' node with
``grad_input`` all None.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled
from ..tensor import Tensor
from ..utils.hooks import RemovableHandle, check_hook

__all__ = ["HooksMixin", "call_with_hooks", "register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_full_backward_pre_hook", "register_module_full_backward_hook",
           "register_module_parameter_registration_hook", "register_module_buffer_registration_hook",
           "register_module_module_registration_hook", "run_registration_hooks", "GLOBAL_HOOKS"]


class _GlobalHooks:
    """Hooks every Module runs (``register_module_*``); ``Module.__call__`` tests ``any_call`` alone."""

    def __init__(self):
        self.forward_pre: dict = {}
        self.forward: dict = {}
        self.forward_with_kwargs: dict = {}
        self.forward_always: dict = {}
        self.backward_pre: dict = {}
        self.backward: dict = {}
        self.any_call: dict = {}  # every forward / backward hook's id: Module.__call__ tests this one dict
        self.parameter_registration: dict = {}
        self.buffer_registration: dict = {}
        self.module_registration: dict = {}

    def add(self, hooks: dict, hook: Callable, extra: tuple = ()) -> RemovableHandle:
        handle = RemovableHandle(hooks, hook, extra_dict=(*extra, self.any_call))
        self.any_call[handle.id] = True
        return handle


GLOBAL_HOOKS = _GlobalHooks()


def register_module_forward_pre_hook(hook: Callable) -> RemovableHandle:
    """Call ``hook(module, args)`` before every Module's forward (before its own pre-hooks)."""
    check_hook(hook, "register_module_forward_pre_hook")
    return GLOBAL_HOOKS.add(GLOBAL_HOOKS.forward_pre, hook)


def register_module_forward_hook(hook: Callable, *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:
    """Call ``hook(module, args, output)`` (``(module, args, kwargs, output)`` with ``with_kwargs``) after every
    Module's forward, before its own hooks; ``always_call`` runs it even when forward raises."""
    check_hook(hook, "register_module_forward_hook")
    g = GLOBAL_HOOKS
    handle = g.add(g.forward, hook, (g.forward_with_kwargs, g.forward_always))
    if with_kwargs:
        g.forward_with_kwargs[handle.id] = True
    if always_call:
        g.forward_always[handle.id] = True
    return handle


def register_module_full_backward_pre_hook(hook: Callable) -> RemovableHandle:
    """Call ``hook(module, grad_output)`` for every Module before its own backward pre-hooks."""
    check_hook(hook, "register_module_full_backward_pre_hook")
    return GLOBAL_HOOKS.add(GLOBAL_HOOKS.backward_pre, hook)


def register_module_full_backward_hook(hook: Callable) -> RemovableHandle:
    """Call ``hook(module, grad_input, grad_output)`` for every Module before its own backward hooks."""
    check_hook(hook, "register_module_full_backward_hook")
    return GLOBAL_HOOKS.add(GLOBAL_HOOKS.backward, hook)


def register_module_parameter_registration_hook(hook: Callable) -> RemovableHandle:
    """Call ``hook(module, name, param)`` whenever any Module registers a parameter; a non-None result is
    registered instead."""
    check_hook(hook, "register_module_parameter_registration_hook")
    return RemovableHandle(GLOBAL_HOOKS.parameter_registration, hook)


def register_module_buffer_registration_hook(hook: Callable) -> RemovableHandle:
    """Call ``hook(module, name, buffer)`` whenever any Module registers (or reassigns) a buffer; a non-None result
    is registered instead."""
    check_hook(hook, "register_module_buffer_registration_hook")
    return RemovableHandle(GLOBAL_HOOKS.buffer_registration, hook)


def register_module_module_registration_hook(hook: Callable) -> RemovableHandle:
    """Call ``hook(module, name, submodule)`` whenever any Module registers a child; a non-None result is
    registered instead."""
    check_hook(hook, "register_module_module_registration_hook")
    return RemovableHandle(GLOBAL_HOOKS.module_registration, hook)


def run_registration_hooks(hooks: dict, module, name: str, value):
    """``value`` after the registration hooks in ``hooks`` (each may replace it)."""
    for hook in tuple(hooks.values()):
        out = hook(module, name, value)
        if out is not None:
            value = out
    return value


class HooksMixin:
    """The ``register_*_hook`` methods of ``Module``."""

    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """Call ``hook(module, args)`` before each forward; a non-None result replaces ``args``. With
        ``with_kwargs``: ``hook(module, args, kwargs)`` returning None or ``(new_args, new_kwargs)``."""
        check_hook(hook, "register_forward_pre_hook")
        extra = self.__dict__.setdefault("_forward_pre_hooks_with_kwargs", {})
        handle = RemovableHandle(self._forward_pre_hooks, hook, prepend, extra_dict=extra)
        if with_kwargs:
            extra[handle.id] = True
        return handle

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """Call ``hook(module, args, output)`` (``(module, args, kwargs, output)`` with ``with_kwargs``) after each
        forward; a non-None result replaces ``output``. ``always_call`` runs it even when forward raises."""
        check_hook(hook, "register_forward_hook")
        d = self.__dict__
        kw = d.setdefault("_forward_hooks_with_kwargs", {})
        always = d.setdefault("_forward_hooks_always_called", {})
        handle = RemovableHandle(self._forward_hooks, hook, prepend, extra_dict=(kw, always))
        if with_kwargs:
            kw[handle.id] = True
        if always_call:
            always[handle.id] = True
        return handle

    def register_full_backward_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(module, grad_output)`` when the gradients of the module's outputs are known; a non-None
        result (one entry per output) replaces them (Note [Module backward hooks])."""
        check_hook(hook, "register_full_backward_pre_hook")
        return RemovableHandle(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(module, grad_input, grad_output)`` when the gradients of the module's inputs are known; a
        non-None result (one entry per positional input) replaces ``grad_input`` (Note [Module backward hooks])."""
        check_hook(hook, "register_full_backward_hook")
        return RemovableHandle(self._backward_hooks, hook, prepend)


class BackwardHookFunction(Function):
    """The identity, as a node of its own for the backward hooks to attach to."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[a for a in args if isinstance(a, Tensor) and not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *grads):
        return grads


class _BackwardHook:
    """One call's backward hooks (torch's ``BackwardHook``; Note [Module backward hooks])."""

    def __init__(self, module, hooks: list, pre_hooks: list):
        self.module, self.hooks, self.pre_hooks = module, hooks, pre_hooks
        self.grad_outputs = None
        self.n_inputs = self.n_outputs = -1
        self.input_index = self.output_index = None

    @staticmethod
    def _pack(indices, values, size) -> tuple:
        out = [None] * size
        for i, v in zip(indices, values):
            out[i] = v
        return tuple(out)

    def _through_identity(self, args: tuple, attach):
        index = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        if not (is_grad_enabled() and any(args[i].requires_grad for i in index)):
            return args, None
        new = BackwardHookFunction.apply(*[args[i] for i in index])
        node = next(t.grad_fn for t in new if t.requires_grad)
        attach(node)
        out = list(args)
        for i, t in zip(index, new):
            out[i] = t
        return tuple(out), index

    def setup_inputs(self, args: tuple) -> tuple:
        def attach(node):
            def hook(grad_input, _):
                if self.grad_outputs is None:  # the gradient reached the inputs without passing the outputs
                    return None
                res = self._pack(self.input_index, grad_input, self.n_inputs)
                for h in self.hooks:
                    out = h(self.module, res, self.grad_outputs)
                    if out is None:
                        continue
                    if len(out) != len(res):
                        raise RuntimeError("Backward hook returned an invalid number of grad_input, got "
                                           f"{len(out)}, but expected {len(res)}")
                    res = out
                self.grad_outputs = None
                return tuple(res[i] for i in self.input_index)

            node.register_hook(hook)

        out, self.input_index = self._through_identity(args, attach)
        self.n_inputs = len(args)
        return out

    def setup_outputs(self, result):
        single = not isinstance(result, tuple)
        outs = (result,) if single else result

        def attach(node):
            def prehook(grad_output):
                self.grad_outputs = self._pack(self.output_index, grad_output, self.n_outputs)
                for h in self.pre_hooks:
                    new = h(self.module, self.grad_outputs)
                    if new is None:
                        continue
                    if len(new) != len(self.grad_outputs):
                        raise RuntimeError("Backward pre hook returned an invalid number of grad_output, got "
                                           f"{len(new)}, but expected {len(self.grad_outputs)}")
                    self.grad_outputs = new
                local = self.grad_outputs
                if self.input_index is None and self.hooks:  # no input requires grad: the hooks run now
                    warnings.warn("Full backward hook is firing when gradients are computed with respect to module "
                                  "outputs since no inputs require gradients. See https://docs.pytorch.org/docs/main/"
                                  "generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more "
                                  "details.", stacklevel=2)
                    none = (None,) * self.n_inputs
                    for h in self.hooks:
                        res = h(self.module, none, self.grad_outputs)
                        if res is not None and not (isinstance(res, tuple) and all(r is None for r in res)):
                            raise RuntimeError("Backward hook for Modules where no input requires gradient should "
                                               "always return None or None for all gradients.")
                if self.input_index is None:
                    self.grad_outputs = None
                return tuple(local[i] for i in self.output_index)

            node.register_prehook(prehook)

        out, self.output_index = self._through_identity(outs, attach)
        self.n_outputs = len(outs)
        return out[0] if single else out


def _run_always_called(module, args, kwargs, result, done: set) -> None:
    """After forward raised: the ``always_call`` forward hooks not yet run (their errors become warnings)."""
    g, d = GLOBAL_HOOKS, module.__dict__
    for hook_id, hook in list(g.forward.items()):
        if hook_id in g.forward_always and hook_id not in done:
            try:
                hook(module, args, kwargs, result) if hook_id in g.forward_with_kwargs else hook(module, args, result)
            except Exception as e:  # noqa: BLE001 - torch silences it: the forward's error is raised
                warnings.warn("global module forward hook with ``always_call=True`` raised an exception that was "
                              f"silenced as another error was raised in forward: {e}", stacklevel=3)
    always, kw = d.get("_forward_hooks_always_called", {}), d.get("_forward_hooks_with_kwargs", {})
    for hook_id, hook in list(d["_forward_hooks"].items()):
        if hook_id in always and hook_id not in done:
            try:
                hook(module, args, kwargs, result) if hook_id in kw else hook(module, args, result)
            except Exception as e:  # noqa: BLE001
                warnings.warn("module forward hook with ``always_call=True`` raised an exception that was silenced "
                              f"as another error was raised in forward: {e}", stacklevel=3)


def call_with_hooks(module, args: tuple, kwargs: dict):
    """``Module.__call__`` when any hook is registered: torch's ``_call_impl`` order."""
    g, d = GLOBAL_HOOKS, module.__dict__
    result = None
    done: set = set()
    try:
        pre_kw = d.get("_forward_pre_hooks_with_kwargs", {})
        for hook_id, hook in (*g.forward_pre.items(), *d["_forward_pre_hooks"].items()):
            if hook_id in pre_kw:
                new = hook(module, args, kwargs)
                if new is not None:
                    if not (isinstance(new, tuple) and len(new) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                           f"but got {new}.")
                    args, kwargs = new
            else:
                new = hook(module, args)
                if new is not None:
                    args = new if isinstance(new, tuple) else (new,)
        backward = [*g.backward.values(), *d["_backward_hooks"].values()]
        backward_pre = [*g.backward_pre.values(), *d["_backward_pre_hooks"].values()]
        bw = None
        if backward or backward_pre:
            bw = _BackwardHook(module, backward, backward_pre)
            args = bw.setup_inputs(args)
        result = module.forward(*args, **kwargs)
        kw, always = d.get("_forward_hooks_with_kwargs", {}), d.get("_forward_hooks_always_called", {})
        for hook_id, hook in (*g.forward.items(), *d["_forward_hooks"].items()):
            if hook_id in always or hook_id in g.forward_always:
                done.add(hook_id)
            if hook_id in kw or hook_id in g.forward_with_kwargs:
                new = hook(module, args, kwargs, result)
            else:
                new = hook(module, args, result)
            if new is not None:
                result = new
        if bw is not None:
            if not isinstance(result, (Tensor, tuple)):
                warnings.warn("For backward hooks to be called, module output should be a Tensor or a tuple of "
                              f"Tensors but received {type(result)}", stacklevel=3)
            else:
                result = bw.setup_outputs(result)
        return result
    except Exception:
        _run_always_called(module, args, kwargs, result, done)
        raise
