"""The backward engine: an iterative walk of the graph in dependency order.

Note [Engine]
1. Count, for every node reachable from the roots, how many edges point at it (an explicit stack,
   not recursion, so graphs 10^5 nodes deep are fine).
2. A node is ready when all its dependents have run; ready nodes run newest-first (the reverse of
   the forward order on a chain). Each node's input buffer sums the gradients sent to one output.
3. Before a node runs: its tensor hooks (``register_hook`` on a non-leaf), then ``retain_grad``
   captures, then ``autograd.grad``'s captures, then the node's own pre-hooks
   (``grad_fn.register_prehook``); after it, its post-hooks (``grad_fn.register_hook``). It runs
   under the CUDA stream its forward used (Note [Backward streams]), with grad mode on only under
   ``create_graph``.
4. Each gradient a node returns is checked against the input it belongs to (torch's
   ``validate_outputs``): a broadcast gradient is summed back to the input's shape and cast to its
   dtype, so formulas never handle broadcasting or type promotion; a complex gradient of a real
   input is refused unless the node's formula asked for its real part (Note [handle_r_to_c]).
5. Without ``retain_graph`` every node frees its saved tensors after running; running it again
   raises torch's "Trying to backward through the graph a second time" error.

Note [Backward streams]
A node records the current CUDA stream of its inputs' device when the forward records it, and its
backward runs on that stream (torch's rule); a CUDA leaf's AccumulateGrad records the stream current
when the leaf is first used in the graph (torch's InputMetadata of the accumulator), so ``.grad`` is
written there. When a gradient crosses from one stream to another, the consumer's stream waits for
the producer's; at the end the caller's current stream waits for every stream used. CPU graphs never
import CUDA.
"""

from __future__ import annotations

from ..dispatch.dispatcher import _tracing, grad_mode
from ..tensor import Tensor
from .anomaly_mode import anomaly, check_nan, print_stack, running
from .backward_streams import (
    current_on_device_of,
    join_streams,
    mark_producer,
    sum_on_stream,
    wait_on_caller_stream,
    wait_producers,
)
from .graph import AccumulateGrad, _unshared, gradient_edge
from .graph_task import _GraphTask, _task

__all__ = ["run_backward", "is_checkpoint_valid"]


class _GradMode:
    __slots__ = ("mode", "prev")

    def __init__(self, mode: bool):
        self.mode = mode

    def __enter__(self):
        self.prev = grad_mode.enabled
        grad_mode.enabled = self.mode

    def __exit__(self, *exc):
        grad_mode.enabled = self.prev


def _dependencies(roots) -> dict:
    """In-degree of every node reachable from ``roots`` (iterative DFS)."""
    deps: dict = {}
    seen = set()
    stack = list(dict.fromkeys(n for n in roots if n is not None))  # two outputs of one node: one root
    seen.update(stack)
    while stack:
        node = stack.pop()
        for edge in node.next_edges:
            if edge is None:
                continue
            nxt = edge[0]
            deps[nxt] = deps.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return deps


def _validate(grad, meta, node, index: int):
    """Reduce/cast gradient ``index`` of ``node`` to its input's (sizes, dtype) (Note [Engine] step 4)."""
    sizes, dtype, _ = meta
    if grad._sizes != sizes:
        from .functions import sum_to

        try:
            grad = sum_to(grad, sizes)
        except RuntimeError:
            raise RuntimeError(f"Function {node._name} returned an invalid gradient at index {index} - got "
                               f"{list(grad._sizes)} but "
                               f"expected shape compatible with {list(sizes)}") from None
    if grad.dtype is not dtype:
        if grad.dtype.is_complex and not dtype.is_complex:
            if not node.takes_real_part(index):  # Note [handle_r_to_c] in derivatives.py
                raise RuntimeError(_R_TO_C)
            from ..ops import bound as ops

            grad = ops.real(grad)
        elif dtype.is_complex and not grad.dtype.is_floating_point:
            raise RuntimeError(_R_TO_C)
        if grad.dtype is not dtype:
            grad = grad.to(dtype)
    return grad


# torch's validate_outputs check, word for word: a real gradient may flow into a complex input
# (it is cast, its imaginary part zero), a complex one into a real input only through handle_r_to_c
_R_TO_C = ("Expected isFloatingType(grad.scalar_type()) || (input_is_complex == grad_is_complex) to be true, but "
           "got false.  (Could this error message be improved?  If so, please report an enhancement request to "
           "PyTorch.)")




def is_checkpoint_valid() -> bool:
    """False inside a backward run by ``autograd.grad`` or ``backward(inputs=...)``: reentrant
    checkpointing, which accumulates into ``.grad`` from a nested backward, cannot serve those
    (torch's ``_is_checkpoint_valid``)."""
    return _task.checkpoint_valid


def run_backward(roots: tuple, grads: list, retain_graph: bool, create_graph: bool, inputs=None,
                 accumulate: bool = True):
    """Run the graph from ``roots`` seeded with ``grads`` (Note [Engine])."""
    prev, prev_graph = _task.checkpoint_valid, _task.graph
    _task.checkpoint_valid = inputs is None
    try:
        return _run_backward(roots, grads, retain_graph, create_graph, inputs, accumulate)
    finally:
        _task.checkpoint_valid, _task.graph = prev, prev_graph


def _run_backward(roots: tuple, grads: list, retain_graph: bool, create_graph: bool, inputs, accumulate: bool):
    root_edges = []
    for t in roots:
        if not t._requires_grad:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
        root_edges.append(gradient_edge(t))
    captures = None
    if inputs is not None:
        captures = {}
        for i, t in enumerate(inputs):
            node, nr = gradient_edge(t)
            captures.setdefault(node, []).append((nr, i))
    # a virtual root node whose edges are the outputs
    deps = _dependencies([e[0] for e in root_edges])
    _task.graph = _GraphTask({e[0] for e in root_edges}, deps, captures)
    buffers: dict = {}
    ready = []
    for (node, nr), g in zip(root_edges, grads):
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node.num_outputs
        buf[nr] = g if buf[nr] is None else buf[nr] + g
    for node, _ in root_edges:
        if deps.get(node, 0) == 0 and node not in ready:
            ready.append(node)
    captured = [None] * len(inputs) if inputs is not None else None
    streams = {}
    single = None  # Note [One stream]: the caller's current stream while every CUDA node ran on it
    watch = anomaly.enabled or _tracing.node_scope is not None  # Note [Anomaly mode], Note [Profiler hooks]
    node = None
    try:
        with _GradMode(create_graph):
            while ready:
                node = ready.pop()
                buf = buffers.pop(node)
                stream = node.stream
                if stream is not None and stream is not single:
                    if single is None and not streams and stream == current_on_device_of(stream):
                        single = stream
                    else:
                        single = False
                        streams[id(stream)] = stream
                        wait_producers(buf, stream)
                if node.pre_hooks:
                    for nr, hooks in node.pre_hooks.items():
                        if buf[nr] is not None:
                            for hook in hooks:
                                new = hook(buf[nr])
                                if new is not None:
                                    buf[nr] = new
                if node.retain_hooks:
                    for nr, ref in node.retain_hooks.items():
                        t = ref()
                        if t is not None and buf[nr] is not None:
                            _retain(t, buf[nr])
                if captures is not None and node in captures:
                    if isinstance(node, AccumulateGrad) and buf[0] is not None:
                        buf[0] = _leaf_hooks(node.variable, buf[0])
                    for nr, i in captures[node]:
                        g = buf[nr]
                        if g is not None:
                            captured[i] = g if captured[i] is None else captured[i] + g
                if not accumulate and isinstance(node, AccumulateGrad):
                    continue
                if node.node_pre_hooks:
                    _run_node_pre_hooks(node, buf)
                outs = tuple(buf) if node.post_hooks else None
                if stream is None and single is False:
                    wait_on_caller_stream(buf)  # Note [Stream-less nodes]
                if stream is None or stream is single:
                    results = node.apply(buf) if not watch else _apply_watched(node, buf)
                else:
                    from ..cuda import stream as use_stream

                    with use_stream(stream):
                        results = node.apply(buf) if not watch else _apply_watched(node, buf)
                if outs is not None:
                    results = _run_post_hooks(node, results, outs)
                    outs = None
                if not retain_graph:
                    node.release()
                del buf
                if watch and anomaly.enabled and anomaly.check_nan:
                    check_nan(node, results)
                mark = stream is not None and stream is not single
                for k, (edge, meta, g) in enumerate(zip(node.next_edges, node.input_meta, results)):
                    if edge is None:
                        continue
                    nxt, nr = edge
                    if g is not None:
                        if g._sizes != meta[0] or g.dtype is not meta[1]:
                            g = _validate(g, meta, node, k)
                        if mark:
                            mark_producer(g, stream)
                        nbuf = buffers.get(nxt)
                        if nbuf is None:
                            nbuf = buffers[nxt] = [None] * nxt.num_outputs
                        old = nbuf[nr]
                        if old is None:
                            nbuf[nr] = g
                        elif mark:
                            nbuf[nr] = sum_on_stream(old, g, stream)  # Note [Stream-less nodes]
                        elif not create_graph and _unshared(old, 3) and old._is_non_overlapping_and_dense():
                            old.add_(g)  # Note [In-place buffer accumulation]
                        else:
                            nbuf[nr] = old + g
                        old = None
                        left = deps[nxt] - 1
                        deps[nxt] = left
                        if left == 0:
                            ready.append(nxt)
                        continue
                    if nxt not in buffers:
                        buffers[nxt] = [None] * nxt.num_outputs
                    left = deps[nxt] - 1
                    deps[nxt] = left
                    if left == 0:
                        if any(x is not None for x in buffers[nxt]):
                            ready.append(nxt)
                        else:
                            _skip(nxt, deps, buffers, ready)
                results = g = None  # drop references: AccumulateGrad steals unshared gradients
    except Exception:
        if anomaly.enabled and node is not None:
            print_stack(node)  # Note [Anomaly mode]: the failing node's forward stack
        raise
    if streams:
        join_streams(streams)
    return captured


def _apply_watched(node, buf):
    """``node.apply`` in anomaly mode (nodes made meanwhile, under ``create_graph``, record it as their
    parent) or while a profiler records (inside its range for the node)."""
    scope = _tracing.node_scope
    prev = running.node
    running.node = node
    try:
        if scope is None:
            return node.apply(buf)
        with scope(node._name):
            return node.apply(buf)
    finally:
        running.node = prev


# Note [In-place buffer accumulation]
# As torch's InputBuffer::accumulate: when a second gradient reaches an input that already has
# one, it is added into the first in place if nothing else references the first or its memory
# (the buffer slot, the local and _unshared's parameter: 3) and it is dense, so a tied weight (GPT's
# wte, used by the embedding and the lm_head) costs two gradient-sized buffers at once, not three.
# Under create_graph the sum stays out of place (differentiable).


def _leaf_hooks(t: Tensor, g: Tensor) -> Tensor:
    """A leaf's tensor hooks, for gradients autograd.grad returns instead of accumulating."""
    meta = t._autograd
    for hook in (meta.hooks or ()) if meta is not None else ():
        new = hook(g)
        if new is not None:
            g = new
    return g


def _skip(node, deps, buffers, ready) -> None:
    """A node that got no gradient at all: its successors lose one dependency each (iteratively)."""
    stack = [node]
    while stack:
        n = stack.pop()
        buffers.pop(n, None)
        for edge in n.next_edges:
            if edge is None:
                continue
            nxt = edge[0]
            left = deps[nxt] - 1
            deps[nxt] = left
            if left == 0:
                buf = buffers.get(nxt)
                if buf is not None and any(x is not None for x in buf):
                    ready.append(nxt)
                else:
                    stack.append(nxt)


def _run_node_pre_hooks(node, buf: list) -> None:
    for hook in list(node.node_pre_hooks):
        new = hook(tuple(buf))
        if new is not None:
            new = tuple(new)
            if len(new) != len(buf):
                raise RuntimeError(f"hook '{getattr(hook, '__name__', hook)}' has returned an incorrect number "
                                   f"of values (got {len(new)}, but expected {len(buf)})")
            buf[:] = new


def _run_post_hooks(node, results, outs: tuple) -> tuple:
    results = tuple(results)
    for hook in list(node.post_hooks):
        new = hook(results, outs)
        if new is not None:
            new = tuple(new)
            if len(new) != len(results):
                raise RuntimeError(f"hook '{getattr(hook, '__name__', hook)}' has returned an incorrect number "
                                   f"of values (got {len(new)}, but expected {len(results)})")
            results = new
    return results


def _retain(t: Tensor, g: Tensor) -> None:
    meta = t._autograd
    if meta.grad is None:
        meta.grad = g if grad_mode.enabled else g.detach().clone()
    else:
        meta.grad = meta.grad + g
