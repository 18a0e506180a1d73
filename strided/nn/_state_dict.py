"""``Module.state_dict`` / ``load_state_dict`` (torch's semantics and error messages)."""

from __future__ import annotations

from collections import OrderedDict, namedtuple

from ..autograd.grad_mode import no_grad
from ..tensor import Tensor

__all__ = ["StateDictMixin", "IncompatibleKeys"]


class _IncompatibleKeys(namedtuple("_IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys it did not find and the keys it did not use (torch's class name,
    which its repr shows)."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


IncompatibleKeys = _IncompatibleKeys


class StateDictMixin:
    """State-dict methods of ``Module`` (kept apart from the attribute machinery in module.py)."""

    # Note [Extra state]
    # As torch's: a module that overrides ``get_extra_state`` saves what it returns under ``<prefix>_extra_state``
    # (strided.save writes tensors, numbers, strings and lists / dicts of them), and one that overrides
    # ``set_extra_state`` gets that entry back on load (strictly: missing is an error). The defaults are never called.
    def get_extra_state(self):
        """Extra state to save in the state dict (override together with :meth:`set_extra_state`)."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called. Please file "
                           "an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml to "
                           "report this bug.")

    def set_extra_state(self, state) -> None:
        """Restore the extra state :meth:`get_extra_state` saved (override together with it)."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called. Please file "
                           "an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml to "
                           "report this bug.")

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not StateDictMixin.get_extra_state:  # Note [Extra state]
            destination[prefix + "_extra_state"] = self.get_extra_state()

    def state_dict(self, *, destination: dict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> dict:
        """Parameters and persistent buffers by dotted name, in registration order.

        The tensors share storage with the module's (detached unless ``keep_vars``). State-dict pre-hooks run
        before this module saves, post-hooks after it and its children have.
        """
        if destination is None:
            destination = OrderedDict()
        hooks = self.__dict__.get("_state_dict_hooks")
        if hooks:
            for hook in tuple(hooks["pre"].values()):
                hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        if hooks:
            for hook in tuple(hooks["post"].values()):
                if hook(self, destination, prefix, {}) is not None:
                    raise RuntimeError("state_dict post-hook must return None")
        return destination

    def _state_dict_hook_table(self, kind: str) -> dict:
        return self.__dict__.setdefault("_state_dict_hooks", {"pre": {}, "post": {}, "load_post": {}})[kind]

    def register_state_dict_pre_hook(self, hook):
        """Call ``hook(module, prefix, keep_vars)`` before this module's ``state_dict`` saves its entries."""
        from ..utils.hooks import RemovableHandle

        return RemovableHandle(self._state_dict_hook_table("pre"), hook)

    def register_state_dict_post_hook(self, hook):
        """Call ``hook(module, state_dict, prefix, local_metadata)`` after this module's entries are saved; it may
        change ``state_dict`` in place and must return None."""
        from ..utils.hooks import RemovableHandle

        return RemovableHandle(self._state_dict_hook_table("post"), hook)

    def register_load_state_dict_pre_hook(self, hook):
        """Call ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs)`` before this module loads its entries (it may rename keys)."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook):
        """Call ``hook(module, incompatible_keys)`` after ``load_state_dict`` loaded this module and its children;
        it may edit the missing / unexpected key lists (before strict mode reports them) and must return None."""
        from ..utils.hooks import RemovableHandle

        return RemovableHandle(self._state_dict_hook_table("load_post"), hook)

    def _register_load_state_dict_pre_hook(self, hook, with_module: bool = False):
        """Call ``hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)``
        (``module`` first with ``with_module``) before this module loads its entries; the hook may rename keys."""
        from functools import partial

        from ..utils.hooks import RemovableHandle

        hooks = self.__dict__.setdefault("_load_state_dict_pre_hooks", {})
        return RemovableHandle(hooks, partial(hook, self) if with_module else hook)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs, assign=False) -> None:
        for hook in tuple(self.__dict__.get("_load_state_dict_pre_hooks", {}).values()):
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        persistent = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in {**self._parameters, **persistent}.items() if v is not None}
        extra = type(self).set_extra_state is not StateDictMixin.set_extra_state  # Note [Extra state]
        if extra:
            if prefix + "_extra_state" in state_dict:
                self.set_extra_state(state_dict[prefix + "_extra_state"])
            elif strict:
                missing_keys.append(prefix + "_extra_state")
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            input_param = state_dict[key]
            if not isinstance(input_param, Tensor) and hasattr(input_param, "__dlpack__"):
                from ..tensor_data import import_foreign  # another library's tensor (Note [Foreign tensors])

                input_param = import_foreign(input_param)
            if not isinstance(input_param, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor or '
                                  f"Tensor-like object from checkpoint but received {type(input_param)}")
                continue
            if tuple(input_param.shape) != tuple(param.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {input_param.shape} "
                                  f"from checkpoint, the shape in current model is {param.shape}.")
                continue
            try:
                with no_grad():
                    if assign:
                        self._assign_loaded(name, param, input_param)
                    else:
                        param.copy_(input_param)
            except Exception as ex:  # noqa: BLE001 - reported with the key, as torch does
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model '
                                  f"are {param.size()} and whose dimensions in the checkpoint are "
                                  f"{input_param.size()}, an exception occurred : {ex.args}.")
        if strict:
            for key in state_dict:
                if not key.startswith(prefix):
                    continue
                parts = key[len(prefix):].split(".", 1)
                if len(parts) > 1:
                    if parts[0] not in self._modules:
                        unexpected_keys.append(key)
                elif parts[0] not in local_state and not (extra and parts[0] == "_extra_state"):
                    unexpected_keys.append(key)

    def _assign_loaded(self, name: str, current: Tensor, loaded: Tensor) -> None:
        from .parameter import Parameter

        if name in self._parameters:
            self._parameters[name] = Parameter(loaded, requires_grad=current.requires_grad)
        else:
            self._buffers[name] = loaded

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False) -> IncompatibleKeys:
        """Copy ``state_dict``'s tensors into this module's parameters and buffers.

        With ``strict`` (default) a missing or unexpected key is an error listing all of them;
        ``assign=True`` makes the loaded tensors the parameters instead of copying into them.
        Returns ``IncompatibleKeys(missing_keys, unexpected_keys)``.
        """
        if not hasattr(state_dict, "keys") or not hasattr(state_dict, "__getitem__"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        state_dict = OrderedDict(state_dict)  # a copy: load pre-hooks may rename keys (as torch)
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []

        def load(module, prefix: str) -> None:
            module._load_from_state_dict(state_dict, prefix, {}, True, missing, unexpected, errors, assign)
            for name, child in module._modules.items():
                if child is not None:
                    load(child, prefix + name + ".")
            hooks = module.__dict__.get("_state_dict_hooks")
            if hooks and hooks["load_post"]:
                keys = IncompatibleKeys(missing, unexpected)  # the lists themselves: hooks may edit them
                for hook in tuple(hooks["load_post"].values()):
                    if hook(module, keys) is not None:  # torch's AssertionError and words
                        raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook`` are not "
                                             "expected to return new values, if incompatible_keys need to be "
                                             "modified, it should be done inplace.")

        load(self, "")
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return IncompatibleKeys(missing, unexpected)
