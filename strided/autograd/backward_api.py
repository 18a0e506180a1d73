"""The autograd entry points: ``backward`` and ``grad`` (torch.autograd.backward / torch.autograd.grad).

They check and build the seed gradients (``_make_grads``) and hand them to the engine
(``engine.run_backward``); ``grad`` also runs batched vector-Jacobian products.
"""

from __future__ import annotations

import warnings

from ..dispatch.dispatcher import grad_mode
from ..tensor import Tensor
from .engine import _GradMode, run_backward

__all__ = ["backward", "grad"]


def _make_grads(outputs, grad_outputs) -> list:
    grads = []
    for i, out in enumerate(outputs):
        g = grad_outputs[i] if grad_outputs is not None else None
        if g is None:
            if not out._requires_grad:
                raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
            if out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not out.dtype.is_floating_point:
                raise RuntimeError(
                    f"grad can be implicitly created only for real scalar outputs but got {out.dtype}")
            from ..ops import bound as ops

            g = ops.ones_like(out, memory_format="preserve_format")
        else:
            if not isinstance(g, Tensor):
                from ..factories import tensor

                g = tensor(g, dtype=out.dtype, device=out.device)
            if g._sizes != out._sizes:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] "
                    f"has a shape of {out.shape}."
                )
            if not out._requires_grad:
                raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
            g = g if grad_mode.enabled else g.detach()
        grads.append(g)
    return grads


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None) -> None:
    """Accumulate the gradients of ``tensors`` into the ``.grad`` of the leaves (torch.autograd.backward)."""
    if isinstance(tensors, Tensor):
        tensors = (tensors,)
    if isinstance(grad_tensors, Tensor):
        grad_tensors = (grad_tensors,)
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
        if not inputs:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    grads = _make_grads(tuple(tensors), grad_tensors)
    if inputs is None:
        run_backward(tuple(tensors), grads, retain_graph, create_graph)
        return
    captured = run_backward(tuple(tensors), grads, retain_graph, create_graph, inputs, accumulate=False)
    from .graph import _meta, accumulate_grad

    with _GradMode(create_graph):
        for t, g in zip(inputs, captured):
            if g is not None:
                accumulate_grad(t, _meta(t), g, False)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Gradients of ``outputs`` w.r.t. ``inputs``, returned instead of accumulated (torch.autograd.grad).

    With ``is_grads_batched=True`` the first dimension of every ``grad_outputs`` tensor is a batch of
    vectors, and each returned gradient gains that leading dimension (Note [Batched gradients]).
    """
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate "
                      "gradient for other parts of the graph, please use torch.autograd.backward.", FutureWarning,
                      stacklevel=2)
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    outputs = (outputs,) if isinstance(outputs, Tensor) else tuple(outputs)
    single = isinstance(inputs, Tensor)
    inputs = (inputs,) if single else tuple(inputs)
    if isinstance(grad_outputs, Tensor):
        grad_outputs = (grad_outputs,)
    if allow_unused is None:
        allow_unused = materialize_grads
    if retain_graph is None:
        retain_graph = create_graph
    for t in inputs:
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    if is_grads_batched:
        result = _batched_vjps(outputs, grad_outputs, inputs, retain_graph, create_graph)
    else:
        grads = _make_grads(outputs, grad_outputs)
        result = run_backward(outputs, grads, retain_graph, create_graph, inputs, accumulate=False)
    out = []
    for i, (t, g) in enumerate(zip(inputs, result)):
        if g is None:
            if materialize_grads:
                from ..ops import bound as ops

                g = ops.zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the graph. "
                    "Set allow_unused=True if this is the desired behavior.")
        out.append(g)
    return tuple(out)


# Note [Batched gradients]
# torch computes ``grad(..., is_grads_batched=True)`` by vmapping the engine over dim 0 of the
# grad_outputs. strided has no batching rules (its vmap loops: Note [vmap by looping]), so it runs the
# engine once per batch entry (the graph kept
# until the last one) and stacks the results: the same values and shapes, one backward per vector.
# An input the graph does not reach gets None (or zeros under materialize_grads), as in torch.
def _batched_vjps(outputs, grad_outputs, inputs, retain_graph, create_graph) -> list:
    if grad_outputs is None or len(grad_outputs) != len(outputs):
        raise RuntimeError("grad: is_grads_batched=True needs one batched grad_output per output, got "
                           f"{0 if grad_outputs is None else len(grad_outputs)} for {len(outputs)} outputs")
    batch = None
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if not isinstance(g, Tensor):
            raise RuntimeError(f"grad: is_grads_batched=True needs a tensor grad_output[{i}], got "
                               f"{type(g).__name__}")
        if g._sizes[1:] != out._sizes or not g._sizes:
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the batch "
                "dimension. The sizes of the remaining dimensions are expected to match the shape of "
                f"corresponding output, but a mismatch was detected: grad_output[{i}] has a shape of "
                f"{list(g._sizes)} and output[{i}] has a shape of {list(out._sizes)}. If you only want some "
                "tensors in `grad_output` to be considered batched, consider using vmap.")
        if batch is None:
            batch = g._sizes[0]
        elif g._sizes[0] != batch:
            raise ValueError("vmap: Expected all tensors to have the same size in the mapped dimension, got "
                             f"sizes {[x._sizes[0] for x in grad_outputs]} for the mapped dimension")
    if batch == 0:
        raise RuntimeError("grad: is_grads_batched=True got an empty batch (grad_outputs of size 0 in dim 0)")
    per_vector = []
    for b in range(batch):
        grads = _make_grads(outputs, [g.select(0, b) for g in grad_outputs])
        last = b == batch - 1
        per_vector.append(run_backward(outputs, grads, retain_graph if last else True, create_graph, inputs,
                                       accumulate=False))
    from ..ops import bound as ops

    return [None if per_vector[0][i] is None else ops.stack([r[i] for r in per_vector])
            for i in range(len(inputs))]
