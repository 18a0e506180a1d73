"""``strided.func``: function transforms (torch.func) -- ``functional_call``, ``grad`` and
``grad_and_value``, built on ``strided.autograd.grad``. There is no vmap."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from ..autograd import grad as _autograd_grad
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..tensor import Tensor

__all__ = ["functional_call", "grad", "grad_and_value"]


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


# ---------------------------------------------------------------- pytrees (tuples, lists, dicts)
def _tree_flatten(tree) -> tuple[list, Callable[[list], Any]]:
    """The leaves of nested tuples / lists / dicts, and a function that rebuilds the tree from new leaves."""
    if isinstance(tree, (tuple, list)) and not hasattr(tree, "_fields"):
        parts = [_tree_flatten(x) for x in tree]
        kind = type(tree)
    elif isinstance(tree, dict):
        keys = list(tree)
        parts = [_tree_flatten(tree[k]) for k in keys]
        kind = None
    else:
        return [tree], lambda leaves: leaves[0]
    sizes = [len(p[0]) for p in parts]

    def unflatten(leaves: list):
        out, i = [], 0
        for (_, build), n in zip(parts, sizes):
            out.append(build(leaves[i:i + n]))
            i += n
        return dict(zip(keys, out)) if kind is None else kind(out)

    return [leaf for p in parts for leaf in p[0]], unflatten


def _tree_map(fn: Callable, tree):
    leaves, build = _tree_flatten(tree)
    return build([fn(x) for x in leaves])


def _check_argnum(argnum, num_args: int) -> int:
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if 0 <= argnum < num_args:
        return argnum
    if -num_args <= argnum < 0:
        return argnum + num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def _wrap_argnums(argnums, num_args: int):
    if isinstance(argnums, int):
        return _check_argnum(argnums, num_args)
    if not isinstance(argnums, tuple):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if len(argnums) == 0:
        raise RuntimeError("argnums must be non-empty")
    if len(set(argnums)) != len(argnums):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return tuple(_check_argnum(a, num_args) for a in argnums)


# Note [grad without levels]
# torch.func wraps each input in a per-transform "level" so that ``grad`` sees only the paths through
# its own inputs. strided has one autograd graph, so each differentiated input is replaced by a fresh
# alias: a new leaf when the input does not require grad, else ``x.view_as(x)`` (a node of its own
# hung off x), and the gradient is taken w.r.t. the alias. A closure that captures the same tensor is
# therefore a constant here, as in torch (no perturbation confusion), and nested ``grad`` works because
# the gradient is built with ``create_graph=True``. What cannot be told apart without levels: results
# are detached only when no differentiated input required grad, so a result that depends on a captured
# tensor requiring grad keeps that graph only if some input also required grad.
def _alias(x):
    if not isinstance(x, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
    return x.view_as(x) if x.requires_grad else x.detach().requires_grad_(True)


def _grad_and_value(func: Callable, argnums, has_aux: bool, args: tuple, kwargs: dict):
    argnums = _wrap_argnums(argnums, len(args))
    positions = (argnums,) if isinstance(argnums, int) else argnums
    outer_leaves = [x for i in positions for x in _tree_flatten(args[i])[0]]
    keep_graph = is_grad_enabled() and any(isinstance(x, Tensor) and x.requires_grad for x in outer_leaves)
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
        if output.requires_grad:
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
