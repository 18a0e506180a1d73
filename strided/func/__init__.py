"""``strided.func``: function transforms (torch.func) -- ``functional_call``, ``grad`` and
``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd`` and ``hessian`` (transforms.py), built on
``strided.autograd.grad``, and ``vmap`` (vmap.py: the function runs once per batch element)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from ..autograd import grad as _autograd_grad
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..tensor import Tensor
from .arguments import alias_input as _alias
from .arguments import wrap_argnums as _wrap_argnums
from .pytree import tree_flatten as _tree_flatten
from .pytree import tree_map as _tree_map
from .transforms import hessian, jacfwd, jacrev, jvp, vjp
from .vmap import vmap

__all__ = ["functional_call", "stack_module_state", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd",
           "hessian", "vmap"]


def functional_call(module, parameter_and_buffer_dicts, args: Any = None, kwargs: dict[str, Any] | None = None, *,
                    tie_weights: bool = True, strict: bool = False) -> Any:
    """Call ``module(*args, **kwargs)`` with its parameters and buffers replaced by the given dict(s).

    Parameters
    ----------
    parameter_and_buffer_dicts : dict or sequence of dicts
        Dotted names (as in ``state_dict``) to tensors; several dicts may not repeat a key.
    tie_weights : bool
        A value given for one of several tied names (the same tensor in the module) is used for all.
    strict : bool
        Every parameter and buffer must be given, and nothing else.
    """
    from ..nn.utils.stateless import _functional_call

    if isinstance(parameter_and_buffer_dicts, dict):
        parameters_and_buffers = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        counts: dict[str, int] = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
        parameters_and_buffers = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(parameter_and_buffer_dicts)}")
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)


def _stacked_leaf(tensors: tuple, name: str) -> Tensor:
    from ..ops import bound as ops

    requiring = [t._requires_grad for t in tensors]
    if any(requiring) and not all(requiring):
        raise RuntimeError(f"Expected {name} from each model to have the same ._requires_grad")
    result = ops.stack(list(tensors))
    return result.detach().requires_grad_() if all(requiring) else result


def stack_module_state(models) -> tuple[dict, dict]:
    """The parameters and buffers of same-class ``models``, each stacked along a new first dimension (fresh
    leaves where they require grad): with ``functional_call`` under ``vmap``, an ensemble in one call."""
    models = list(models)
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(m.named_parameters()) for m in models]
    all_buffers = [dict(m.named_buffers()) for m in models]
    params = {k: _stacked_leaf(tuple(p[k] for p in all_params), k) for k in all_params[0]}
    buffers = {k: _stacked_leaf(tuple(b[k] for b in all_buffers), k) for k in all_buffers[0]}
    return params, buffers


def _grad_and_value(func: Callable, argnums, has_aux: bool, args: tuple, kwargs: dict):
    argnums = _wrap_argnums(argnums, len(args))
    positions = (argnums,) if isinstance(argnums, int) else argnums
    outer_leaves = [x for i in positions for x in _tree_flatten(args[i])[0]]
    keep_graph = is_grad_enabled() and any(isinstance(x, Tensor) and x._requires_grad for x in outer_leaves)
    with enable_grad():
        new_args = list(args)
        for i in positions:
            new_args[i] = _tree_map(_alias, args[i])
        diff_args = new_args[argnums] if isinstance(argnums, int) else tuple(new_args[i] for i in argnums)
        output = func(*new_args, **kwargs)
        aux = None
        if has_aux:
            if not (isinstance(output, tuple) and len(output) == 2):
                raise RuntimeError("grad_and_value(f)(*args): output of function f should be a tuple: (output, aux) "
                                   "if has_aux is True")
            output, aux = output
        if not isinstance(output, Tensor):
            raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(output)}")
        if output.dim() != 0:
            raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
                               f"with {output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
        flat_inputs, build = _tree_flatten(diff_args)
        if output._requires_grad:
            flat_grads = _autograd_grad((output,), flat_inputs, create_graph=True, allow_unused=True,
                                        materialize_grads=True)
        else:  # f did not use its inputs differentiably: the gradient is zero, as torch's
            flat_grads = [x.new_zeros(x.shape) for x in flat_inputs]
        grads = build(list(flat_grads))

    def unwrap(x):
        return x if keep_graph or not isinstance(x, Tensor) else x.detach()

    grads, output = _tree_map(unwrap, grads), unwrap(output)
    if has_aux:
        return grads, (output, _tree_map(unwrap, aux))
    return grads, output


def grad_and_value(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable:
    """A function returning ``(gradient, value)`` of the scalar ``func`` w.r.t. the arguments ``argnums``.

    ``argnums`` may be an int or a tuple (then the gradient is a tuple); an argument may be a tensor or a
    tuple / list / dict of tensors (the gradient has its structure). With ``has_aux``, ``func`` returns
    ``(output, aux)`` and the value is ``(output, aux)``.
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return _grad_and_value(func, argnums, has_aux, args, kwargs)

    return wrapper


def grad(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable:
    """A function returning the gradient of the scalar ``func`` w.r.t. the arguments ``argnums``
    (``(gradient, aux)`` with ``has_aux``); see :func:`grad_and_value`."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grads, value = _grad_and_value(func, argnums, has_aux, args, kwargs)
        return (grads, value[1]) if has_aux else grads

    return wrapper
