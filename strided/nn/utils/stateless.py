"""``functional_call``: run a module with some of its parameters and buffers replaced for one call
(torch.nn.utils.stateless; ``strided.func.functional_call`` is the supported spelling)."""

from __future__ import annotations

import contextlib
import warnings
from typing import Any

from ...tensor import Tensor
from ..module import Module

__all__ = ["functional_call"]

_MISSING = object()


def _untie_named_tensors_map(module: Module, parameters_and_buffers: dict[str, Tensor]) -> dict[str, Tensor]:
    """Give every name tied to a given name (same tensor in the module) the given value too."""
    all_named: dict[str, Tensor] = {}
    all_named.update(module.named_parameters(remove_duplicate=False))
    all_named.update(module.named_buffers(remove_duplicate=False))
    names_of: dict[int, set[str]] = {}
    for name, tensor in all_named.items():
        names_of.setdefault(id(tensor), set()).add(name)
    tied_names_map = {name: names for names in names_of.values() if len(names) > 1 for name in names}
    given = set(parameters_and_buffers)
    given_tied = {name for name in given if name in tied_names_map}
    for name in given_tied:
        tied = tied_names_map[name]
        values = {id(parameters_and_buffers[n]) for n in tied if n in parameters_and_buffers}
        if len(tied & given_tied) > 1 and len(values) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(tied)}, which are tied. "
                             "Consider using tie_weights=False")
    untied = dict(parameters_and_buffers)
    for name in given_tied:
        for tied_name in tied_names_map[name]:
            untied[tied_name] = parameters_and_buffers[name]
    return untied


def _get_submodule(module: Module, path: str) -> Module:
    for attr in path.split(".") if path else ():
        try:
            child = getattr(module, attr)
        except AttributeError as ex:
            raise AttributeError(f"{module._get_name()} has no attribute `{attr}`") from ex
        if not isinstance(child, Module):
            raise TypeError(f"submodule `{path}`: {child} is not an instance of torch.nn.Module")
        module = child
    return module


def _swap_tensor(module: Module, name: str, tensor):
    """Put ``tensor`` (or remove, for _MISSING) at ``module.<name>``; returns what was there (torch's
    NamedMemberAccessor.swap_tensor: a parameter slot takes the tensor as is, no Parameter wrapping)."""
    if tensor is not _MISSING and tensor is not None and not isinstance(tensor, Tensor):
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    for store in (module._parameters, module._buffers):
        if name in store:
            orig = store[name]
            if tensor is _MISSING:
                del store[name]
            else:
                store[name] = tensor
            return orig
    orig = getattr(module, name) if hasattr(module, name) else _MISSING
    if orig is not _MISSING and orig is not None and not isinstance(orig, Tensor):
        raise TypeError(f"attribute `{name}`: {orig} is not an instance of torch.Tensor")
    if tensor is not _MISSING:
        setattr(module, name, tensor)
    elif hasattr(module, name):
        delattr(module, name)
    return orig


def _swap_tensors_dict(module: Module, named: dict) -> dict:
    orig: dict = {}
    try:
        for path, tensor in named.items():
            prefix, _, attr = path.rpartition(".")
            orig[path] = _swap_tensor(_get_submodule(module, prefix), attr, tensor)
    except Exception:
        _swap_tensors_dict(module, orig)
        raise
    return orig


@contextlib.contextmanager
def _reparametrize_module(module: Module, parameters_and_buffers: dict[str, Tensor], tie_weights: bool = False,
                          strict: bool = False):
    untied = _untie_named_tensors_map(module, parameters_and_buffers) if tie_weights else parameters_and_buffers
    if strict:
        valid = {n for n, _ in module.named_parameters(remove_duplicate=False)}
        valid |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
        missing, unexpected = sorted(valid - set(untied)), sorted(set(untied) - valid)
        error_msgs = []
        if unexpected:
            error_msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            error_msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if error_msgs:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(module._get_name(),
                                                                                  "\n\t".join(error_msgs)))
    orig: dict = {}
    try:
        orig = _swap_tensors_dict(module, untied)
        yield
    finally:
        new = _swap_tensors_dict(module, orig)
        # what the call left in the module (e.g. a buffer it reassigned) goes back to the caller's dict
        parameters_and_buffers.update({k: new[k] for k in parameters_and_buffers if k in new})


def _functional_call(module: Module, parameters_and_buffers: dict[str, Tensor], args: Any = None,
                     kwargs: dict[str, Any] | None = None, *, tie_weights: bool = True, strict: bool = False):
    kwargs = {} if kwargs is None else kwargs
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)


def functional_call(module: Module, parameters_and_buffers: dict[str, Tensor], args: Any = None,
                    kwargs: dict[str, Any] | None = None, *, tie_weights: bool = True, strict: bool = False):
    """Deprecated: use :func:`strided.func.functional_call`, a drop-in replacement.

    Call ``module(*args, **kwargs)`` with the named parameters and buffers replaced by
    ``parameters_and_buffers`` (dotted names, as ``state_dict``); the module is restored afterwards.
    """
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed "
                  "in a future version of PyTorch. Please use `torch.func.functional_call` instead which is a "
                  "drop-in replacement.", FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)
