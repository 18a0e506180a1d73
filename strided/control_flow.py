"""torch.cond and torch.while_loop, eagerly: structured control flow that runs as the Python it stands for.

Note [Eager control flow]
torch's ``cond`` and ``while_loop`` exist so torch.compile and torch.export can capture both branches or the loop
body as graphs; run eagerly they are, by their own documentation, ``true_fn(*operands) if pred else
false_fn(*operands)`` and ``while cond_fn(*carried): carried = body_fn(*carried)``. strided has no graph capture of
Python, so these are exactly that, after torch's argument checks in its words: ops inside record autograd as
anywhere else, and a tensor predicate is read on the host (one sync on CUDA, as torch's dense kernel makes). What
torch's tracing also checks -- that both branches return tensors of the same metadata, that the body keeps the
carried values' -- strided cannot see for a branch that does not run, so only the loop's own checks (a boolean
predicate, a tuple of as many values) are made.
"""

from __future__ import annotations

from .func.pytree import tree_flatten
from .tensor import Tensor

__all__ = ["cond", "while_loop"]


def _truth(pred) -> bool:
    return bool(pred.item()) if isinstance(pred, Tensor) else bool(pred)


def cond(pred, true_fn, false_fn, operands=()):
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)`` (Note [Eager control flow]); ``pred`` a bool or
    a one-element tensor, ``operands`` a tuple or list of (nested dicts / lists / tuples of) tensors."""
    if isinstance(pred, (bool, int, float)):  # a Python constant: torch runs the branch without further checks
        return true_fn(*operands) if pred else false_fn(*operands)
    if not isinstance(pred, Tensor):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    if pred.numel() != 1:
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    if not isinstance(operands, (tuple, list)) or not all(isinstance(t, Tensor) for t in tree_flatten(operands)[0]):
        raise RuntimeError("Expect operands to be a tuple of possibly nested dict/list/tuple that only consists of "
                           f"tensor leaves, but got {operands}.")
    return true_fn(*operands) if _truth(pred) else false_fn(*operands)


def _loop_predicate(cond_fn, carried) -> bool:
    pred = cond_fn(*carried)
    if isinstance(pred, bool) or (isinstance(pred, Tensor) and pred.dim() == 0 and pred.dtype.name == "bool"):
        return _truth(pred)
    raise RuntimeError(f"cond_fn must return a boolean scalar tensor or a boolean but got {pred}")


def while_loop(cond_fn, body_fn, carried_inputs):
    """``while cond_fn(*carried): carried = body_fn(*carried)`` from ``carried_inputs`` (Note [Eager control flow]),
    returning the last carried values as a tuple (copies of the inputs when the loop never runs)."""
    if not callable(cond_fn) or not callable(body_fn):
        raise RuntimeError("Expect cond_fn and body_fn to be callable.")
    leaves = tree_flatten(carried_inputs)[0]
    if not all(isinstance(t, (Tensor, int)) and not isinstance(t, bool) for t in leaves):
        raise RuntimeError("Expect carried_inputs to be a tuple of possibly nested dict/list/tuple that only"
                           f"consists of tensor or int leaves, but got {carried_inputs}.")  # torch's missing space
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list but got {type(carried_inputs)}")
    carried = tuple(carried_inputs)
    if not _loop_predicate(cond_fn, carried):
        leaves, rebuild = tree_flatten(carried)
        return rebuild([t.clone() if isinstance(t, Tensor) else t for t in leaves])
    while True:
        out = body_fn(*carried)
        if not isinstance(out, tuple):
            raise AssertionError(f"body_fn should return a tuple but got {type(out)}")
        if len(out) != len(carried_inputs):
            raise AssertionError(f"body_fn should return the same number of elements as carried_inputs, got "
                                 f"{len(out)} vs {len(carried_inputs)}")
        carried = out
        if not _loop_predicate(cond_fn, carried):
            return carried
