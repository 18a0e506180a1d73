"""The backward running on each thread, as hooks may ask about it (torch's graph task queries).

``current_graph_task_id()`` tells backward calls apart (a hook called in two of them keeps separate
state); ``will_engine_execute_node(node)`` says whether the running backward executes a node: reachable
from its roots and, when ``inputs=`` limits it (``autograd.grad``, ``backward(inputs=...)``), on a path to
one of them (Note [Multi-grad hooks] in ``multi_grad_hooks.py``).
"""

from __future__ import annotations

import itertools
import threading

__all__ = ["current_graph_task_id", "will_engine_execute_node"]


class _TaskState(threading.local):
    checkpoint_valid = True
    graph = None  # the _GraphTask of the backward running on this thread


_task = _TaskState()
_task_ids = itertools.count()


class _GraphTask:
    """What a running backward will execute, for hooks that ask (torch's ``_will_engine_execute_node``)."""

    __slots__ = ("id", "roots", "deps", "captures", "needed")

    def __init__(self, roots, deps, captures):
        self.id = next(_task_ids)
        self.roots, self.deps, self.captures = roots, deps, captures
        self.needed = None

    def will_execute(self, node) -> bool:
        if node not in self.deps and node not in self.roots:
            return False
        if self.captures is None:
            return True
        if self.needed is None:
            self.needed = _needed(self.roots, self.captures)
        return node in self.needed


def _needed(roots, captures) -> set:
    """The nodes with a path to a captured input (with ``inputs=``, only those run in torch's engine)."""
    order, seen, stack = [], set(), [n for n in roots if n is not None]
    seen.update(stack)
    while stack:  # preorder; reversed, every node comes after all its successors
        node = stack.pop()
        order.append(node)
        for edge in node.next_edges:
            if edge is not None and edge[0] not in seen:
                seen.add(edge[0])
                stack.append(edge[0])
    needed = set(captures)
    changed = True
    while changed:  # a DAG: one or two passes in reverse preorder settle it
        changed = False
        for node in reversed(order):
            if node not in needed and any(e is not None and e[0] in needed for e in node.next_edges):
                needed.add(node)
                changed = True
    return needed


def current_graph_task_id() -> int:
    """An id of the backward running on this thread, -1 outside one (torch's ``_current_graph_task_id``)."""
    graph = _task.graph
    return -1 if graph is None else graph.id


def will_engine_execute_node(node) -> bool:
    """Whether the running backward executes ``node`` (a grad_fn or a leaf's AccumulateGrad)."""
    if node is None:
        raise RuntimeError("_will_engine_execute_node expects an grad_fn, but got NoneType")
    graph = _task.graph
    if graph is None:
        raise RuntimeError("_will_engine_execute_node should only be called during the backward pass")
    return graph.will_execute(node)
