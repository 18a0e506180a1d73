"""``strided.cuda.make_graphed_callables`` (torch.cuda.make_graphed_callables): a function's or a
module's forward and backward, each captured once into a CUDA graph, behind an autograd Function.

Note [Graphed callables]
As torch's: the callables are run ``num_warmup_iters`` times on a side stream (forward and
``autograd.grad`` of their outputs w.r.t. the inputs and parameters that require grad), then each
forward is captured into its own graph, then each backward into another, in reverse order, all in
one memory pool. A call copies its arguments into the captured (static) inputs unless they are
those very tensors, replays the forward graph and returns detached aliases of the static outputs;
their grad_fn is a custom Function whose backward copies the incoming gradients into the static
gradient buffers, replays the backward graph and returns the static input gradients (parameters
included, so ``.grad`` accumulates as usual). The backward is ``once_differentiable``.

As with any graph, each call overwrites the previous call's outputs and gradients: use (or copy)
them before the next call. A module's ``forward`` is replaced by one that runs the graphs only in
the training mode it was captured in (``module.training``) and runs the original forward
otherwise.
"""

from __future__ import annotations

from ..autograd import grad as autograd_grad
from ..autograd.function import Function, once_differentiable
from ..backends.cuda.device import synchronize
from ..backends.cuda.graphs import CUDAGraph, graph, graph_pool_handle
from ..backends.cuda.streams import Stream, stream
from ..tensor import Tensor

__all__ = ["make_graphed_callables"]


def _flatten(tree, leaves: list):
    """Tensors of a nest of tuples / lists, in order, and a spec to rebuild it (torch's pytree, small)."""
    if isinstance(tree, Tensor):
        leaves.append(tree)
        return None
    if isinstance(tree, (tuple, list)):
        return (type(tree), [_flatten(x, leaves) for x in tree])
    raise TypeError(f"make_graphed_callables: outputs must be Tensors or (nested) tuples / lists of Tensors, "
                    f"got {type(tree).__name__}")


def _unflatten(spec, leaves):
    it = iter(leaves)

    def build(s):
        if s is None:
            return next(it)
        kind, children = s
        return kind(build(c) for c in children)

    return build(spec)


def _is_module(obj) -> bool:
    from ..nn import Module

    return isinstance(obj, Module)


def make_graphed_callables(callables, sample_args, num_warmup_iters: int = 3, allow_unused_input: bool = False,
                           pool=None):
    """Graph ``callables`` (one, or a tuple run in that order) for ``sample_args`` (a tuple of tensors per
    callable): returns graphed versions, modules graphed in place (Note [Graphed callables])."""
    from ..amp.autocast_mode import is_autocast_enabled
    from ..amp.cast_cache import is_autocast_cache_enabled

    if is_autocast_enabled("cuda") and is_autocast_cache_enabled():  # torch's refusal (Note [Autocast cast cache])
        raise RuntimeError("make_graphed_callables does not support the autocast caching. Please set "
                           "`cache_enabled=False`.")
    single = not isinstance(callables, tuple)
    if single:
        callables, sample_args = (callables,), (sample_args,)
    if len(callables) != len(sample_args):
        raise ValueError(f"make_graphed_callables: got {len(callables)} callables but {len(sample_args)} "
                         "tuples of sample_args")
    if not isinstance(num_warmup_iters, int) or num_warmup_iters < 0:
        raise ValueError(f"make_graphed_callables: num_warmup_iters must be a non-negative int, got "
                         f"{num_warmup_iters!r}")
    flat_args = []
    for c, args in zip(callables, sample_args):
        if not callable(c):
            raise TypeError(f"make_graphed_callables: {type(c).__name__} object is not callable")
        if _is_module(c):
            if c._forward_hooks or c._forward_pre_hooks or c._backward_hooks or c._backward_pre_hooks:
                raise RuntimeError("Modules must not have hooks registered at the time they are passed. However, "
                                   "registering hooks on modules after passing them through make_graphed_callables "
                                   "is allowed.")
            if any(b.requires_grad for b in c.buffers()):
                raise RuntimeError("In any Module passed to make_graphed_callables, only parameters may be "
                                   "trainable. All buffers must have requires_grad=False.")
        args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
        if not all(isinstance(a, Tensor) for a in args):
            raise TypeError("make_graphed_callables: sample_args for each callable must contain only Tensors. "
                            "Other types are not allowed.")
        if not all(a.device.type == "cuda" for a in args):
            raise ValueError("make_graphed_callables: every sample arg must be a CUDA tensor, got "
                             f"{[str(a.device) for a in args]}")
        flat_args.append(args)
    params = [tuple(c.parameters()) if _is_module(c) else () for c in callables]
    surfaces = [a + p for a, p in zip(flat_args, params)]
    mempool = graph_pool_handle() if pool is None else pool

    def grads_of(outputs, surface, grad_outputs):
        wanted = tuple(i for i in surface if i.requires_grad)
        return autograd_grad(outputs, wanted, grad_outputs=grad_outputs, allow_unused=allow_unused_input)

    synchronize()
    with stream(Stream()):  # warm-up: kernels compiled, optimizer-free state made, off the capture
        for c, args, surface in zip(callables, flat_args, surfaces):
            for _ in range(num_warmup_iters):
                leaves: list = []
                _flatten(c(*args), leaves)
                needing = tuple(o for o in leaves if o.requires_grad)
                if needing:
                    grads_of(needing, surface, tuple(o.new_empty(o.shape) for o in needing))
                del leaves, needing
    synchronize()

    fwd_graphs = [CUDAGraph() for _ in callables]
    bwd_graphs = [CUDAGraph() for _ in callables]
    static_outputs, specs = [], []
    for c, args, g in zip(callables, flat_args, fwd_graphs):
        with graph(g, pool=mempool):
            out = c(*args)
        leaves = []
        specs.append(_flatten(out, leaves))
        static_outputs.append(tuple(leaves))

    static_grad_outputs, static_grad_inputs = [None] * len(callables), [None] * len(callables)
    for i in reversed(range(len(callables))):
        outs, surface = static_outputs[i], surfaces[i]
        grad_outs = tuple(o.new_empty(o.shape) if o.requires_grad else None for o in outs)
        needing = tuple(o for o in outs if o.requires_grad)
        grads = None
        if needing:
            with graph(bwd_graphs[i], pool=mempool):
                grads = grads_of(needing, surface, tuple(g for g in grad_outs if g is not None))
        per_input, k = [], 0
        for inp in surface:
            if inp.requires_grad and grads is not None:
                per_input.append(grads[k])
                k += 1
            else:
                per_input.append(None)
        static_grad_outputs[i], static_grad_inputs[i] = grad_outs, tuple(per_input)

    results = []
    for i, c in enumerate(callables):
        graphed = _graphed_function(fwd_graphs[i], bwd_graphs[i], params[i], len(flat_args[i]), specs[i],
                                    surfaces[i], static_outputs[i], static_grad_outputs[i], static_grad_inputs[i])
        if _is_module(c):
            c.forward = _module_forward(c, c.training, graphed, c.forward)
            results.append(c)
        else:
            results.append(graphed)
    return results[0] if single else tuple(results)


def _graphed_function(fwd_graph, bwd_graph, module_params, n_user_args, spec, surface, static_outputs,
                      static_grad_outputs, static_grad_inputs):
    class Graphed(Function):
        @staticmethod
        def forward(ctx, *inputs):
            for i in range(n_user_args):
                if surface[i].data_ptr() != inputs[i].data_ptr():
                    surface[i].copy_(inputs[i])
            fwd_graph.replay()
            return tuple(o.detach() for o in static_outputs)

        @staticmethod
        @once_differentiable
        def backward(ctx, *grads):
            for static, g in zip(static_grad_outputs, grads):
                if static is not None and g is not None and static.data_ptr() != g.data_ptr():
                    static.copy_(g)
            bwd_graph.replay()
            return tuple(b.detach() if b is not None else None for b in static_grad_inputs)

    def graphed(*user_args):
        if len(user_args) != n_user_args:
            raise TypeError(f"graphed callable: expected {n_user_args} tensor arguments (as in sample_args), "
                            f"got {len(user_args)}")
        for i, (a, s) in enumerate(zip(user_args, surface)):
            if not isinstance(a, Tensor) or a.shape != s.shape or a.dtype is not s.dtype or a.device != s.device:
                got = (f"{type(a).__name__}" if not isinstance(a, Tensor)
                       else f"{a.dtype} {list(a.shape)} on {a.device}")
                raise ValueError(f"graphed callable: argument {i} must match its sample arg ({s.dtype} "
                                 f"{list(s.shape)} on {s.device}), got {got}")
        return _unflatten(spec, Graphed.apply(*(tuple(user_args) + module_params)))

    return graphed


def _module_forward(module, training: bool, graphed, original):
    def forward(*user_args):
        if module.training == training:
            return graphed(*user_args)
        return original(*user_args)

    return forward
