"""What the function transforms do to their inputs: check ``argnums``, and alias each differentiated input
(Note [grad without levels])."""

from __future__ import annotations

from ..tensor import Tensor

__all__ = ["wrap_argnums", "alias_input"]


def _check_argnum(argnum, num_args: int) -> int:
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if 0 <= argnum < num_args:
        return argnum
    if -num_args <= argnum < 0:
        return argnum + num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def wrap_argnums(argnums, num_args: int):
    """``argnums`` checked against ``num_args`` positional arguments, negative ones made positive."""
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
def alias_input(x):
    """A fresh alias of ``x`` to differentiate with respect to (Note [grad without levels])."""
    if not isinstance(x, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
    return x.view_as(x) if x._requires_grad else x.detach().requires_grad_(True)
