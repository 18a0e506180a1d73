"""Pytrees for the function transforms: nested tuples, lists and dicts of leaves (torch.utils._pytree's role);
namedtuples and the structseqs of ``strided.return_types`` (``max(x, 0)``'s values / indices) are tuples, as in
torch's pytree.

``tree_flatten`` gives the leaves and a function that rebuilds the same structure from new leaves;
``tree_spec`` describes a structure as torch's messages print it (``TreeSpec(tuple, None, [*, *])``);
``broadcast_prefix`` spreads a prefix of a structure (``in_dims=(0, None)`` over two arguments) to its leaves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["tree_flatten", "tree_map", "tree_spec", "broadcast_prefix", "is_node"]


def is_node(tree) -> bool:
    """Whether ``tree`` has children (a tuple -- namedtuples and structseqs included --, list or dict)."""
    return isinstance(tree, (tuple, list, dict))


def _rebuild(kind: type, items: list):
    """A tuple / list node of ``kind`` from its children: a namedtuple takes them as arguments, a structseq (and a
    plain tuple or list) as one sequence."""
    if hasattr(kind, "_fields") and not hasattr(kind, "n_sequence_fields"):
        return kind(*items)
    return kind(items)


def tree_flatten(tree) -> tuple[list, Callable[[list], Any]]:
    """The leaves of nested tuples / lists / dicts, and a function that rebuilds the tree from new leaves."""
    if isinstance(tree, (tuple, list)):
        parts = [tree_flatten(x) for x in tree]
        kind = type(tree)
    elif isinstance(tree, dict):
        keys = list(tree)
        parts = [tree_flatten(tree[k]) for k in keys]
        kind = None
    else:
        return [tree], lambda leaves: leaves[0]
    sizes = [len(p[0]) for p in parts]

    def unflatten(leaves: list):
        out, i = [], 0
        for (_, build), n in zip(parts, sizes):
            out.append(build(leaves[i:i + n]))
            i += n
        return dict(zip(keys, out)) if kind is None else _rebuild(kind, out)

    return [leaf for p in parts for leaf in p[0]], unflatten


def tree_map(fn: Callable, tree):
    leaves, build = tree_flatten(tree)
    return build([fn(x) for x in leaves])


def tree_spec(tree) -> str:
    """The structure of ``tree`` in torch's words: ``*`` for a leaf, ``TreeSpec(tuple, None, [*, *])`` for a node."""
    if not is_node(tree):
        return "*"
    if isinstance(tree, dict):
        return f"TreeSpec(dict, {list(tree)}, [{', '.join(tree_spec(v) for v in tree.values())}])"
    return f"TreeSpec({type(tree).__name__}, None, [{', '.join(tree_spec(v) for v in tree)}])"


def broadcast_prefix(prefix, tree) -> list | None:
    """One entry of ``prefix`` per leaf of ``tree``, a leaf of ``prefix`` covering a whole subtree; None when
    ``prefix`` is not a prefix of ``tree``'s structure."""
    if not is_node(prefix):
        return [prefix] * len(tree_flatten(tree)[0])
    if type(prefix) is not type(tree) or len(prefix) != len(tree):
        return None
    if isinstance(prefix, dict):
        if set(prefix) != set(tree):
            return None
        pairs = [(prefix[k], tree[k]) for k in tree]
    else:
        pairs = list(zip(prefix, tree))
    out = []
    for p, t in pairs:
        sub = broadcast_prefix(p, t)
        if sub is None:
            return None
        out += sub
    return out
