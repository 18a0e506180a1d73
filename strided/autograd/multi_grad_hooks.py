"""torch.autograd.graph's edges and multi-tensor hooks: ``GradientEdge``, ``get_gradient_edge``,
``increment_version``, ``register_multi_grad_hook``.

Note [Multi-grad hooks]
``register_multi_grad_hook(tensors, fn)`` calls ``fn`` once per backward, after the gradient of every
one of ``tensors`` that this backward computes has been computed (``mode="all"``: ``fn(grads)``, None
for the others), or on the first of them (``mode="any"``: ``fn(grad)``) -- what FSDP-style code uses to
start communication when a whole group of parameters has its gradients. It is torch's construction:
one tensor hook per tensor; the first hook to run in a backward asks the engine how many of the
tensors' nodes that backward executes (``will_engine_execute_node``: reachable from the roots and, with
``inputs=``, on a path to one of them); the hook that brings the count to that number calls ``fn``.
State is kept per backward (``current_graph_task_id``), so two backward calls do not mix.

strided's engine runs every node reachable from the roots even when ``inputs=`` needs fewer (torch
prunes them), so a tensor hook on such an unneeded non-leaf tensor still runs; the ``"all"`` hook
ignores that call (it neither counts nor fills the slot), so ``fn`` sees what torch's would: None there.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

from ..tensor import Tensor
from .graph import Node, grad_accumulator, gradient_edge
from .graph_task import current_graph_task_id, will_engine_execute_node

__all__ = ["GradientEdge", "get_gradient_edge", "increment_version", "register_multi_grad_hook"]


class GradientEdge(NamedTuple):
    """A gradient edge of the graph: the node a tensor's gradient flows into and which of its inputs."""

    node: Node
    output_nr: int
    ownership_token: object = None


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The edge ``tensor``'s gradient enters the graph by: its ``grad_fn`` (and output number), or its
    gradient accumulator for a leaf."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"get_gradient_edge(): argument 'tensor' must be Tensor, not {type(tensor).__name__}")
    if not tensor._requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require gradients")
    node, nr = gradient_edge(tensor)
    return GradientEdge(node, nr)


def increment_version(tensor: Tensor | Iterable[Tensor]) -> None:
    """Mark ``tensor`` (or each of several) modified in place, as an in-place op would: autograd then
    refuses to use its values saved before (torch's ``increment_version``)."""
    if not isinstance(tensor, (Tensor, Iterable)):
        raise TypeError("increment_version(): expected a Tensor or an iterable of Tensors, got "
                        f"{type(tensor).__name__}")
    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        if not isinstance(t, Tensor):
            raise TypeError(f"increment_version(): expected a Tensor or an iterable of Tensors, got "
                            f"{type(t).__name__}")
        t._storage._version += 1


class _MultiHandle:
    """Removes every tensor hook one ``register_multi_grad_hook`` call made."""

    __slots__ = ("handles",)

    def __init__(self, handles: tuple):
        self.handles = handles

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def _node_of(t: Tensor):
    return t.grad_fn if t.grad_fn is not None else grad_accumulator(t)


def register_multi_grad_hook(tensors: Sequence[Tensor], fn: Callable, *, mode: str = "all") -> _MultiHandle:
    """Call ``fn`` once the gradients of all ``tensors`` a backward computes are ready (``mode="all"``:
    ``fn(grads)``, None for tensors it does not reach), or at the first of them (``mode="any"``:
    ``fn(grad)``). Returns a handle whose ``remove()`` unregisters it (Note [Multi-grad hooks])."""
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of {('all', 'any')} but got {mode}")
    if not callable(fn):
        raise TypeError(f"register_multi_grad_hook(): the hook must be callable, got {type(fn).__name__}")
    if isinstance(tensors, Tensor) or not isinstance(tensors, Iterable):
        raise TypeError(f"register_multi_grad_hook(): argument 'tensors' must be a sequence of Tensors, not "
                        f"{type(tensors).__name__}")
    tensors = tuple(tensors)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"register_multi_grad_hook(): tensors[{i}] must be a Tensor, not {type(t).__name__}")
    lock = threading.Lock()
    if mode == "any":
        ran: set = set()

        @functools.wraps(fn)
        def first(grad):
            task = current_graph_task_id()
            with lock:
                if task in ran:
                    return
                ran.add(task)
            fn(grad)

        return _MultiHandle(tuple(t.register_hook(first) for t in tensors))

    nodes = [_node_of(t) for t in tensors]
    counts: dict[int, int] = {}
    expected: dict[int, int] = {}
    buffers: dict[int, list] = {}

    def slot(i: int):
        def hook(grad):
            task = current_graph_task_id()
            if task == -1:
                raise AssertionError("expected this hook to be called inside a backward call")
            if not will_engine_execute_node(nodes[i]):
                return  # a node torch's engine would not run (see the Note)
            with lock:
                seen = counts.get(task, 0)
                if seen == 0:
                    expected[task] = sum(map(will_engine_execute_node, nodes))
                    buffers[task] = [None] * len(tensors)
                counts[task] = seen + 1
                buffers[task][i] = grad
                done = seen + 1 >= expected[task]
                if done:
                    grads = buffers.pop(task)
                    del counts[task], expected[task]
            if done:
                fn(grads)

        return hook

    return _MultiHandle(tuple(t.register_hook(slot(i)) for i, t in enumerate(tensors)))
