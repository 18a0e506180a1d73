"""Custom differentiable operations: ``strided.autograd.Function`` (torch.autograd.Function).

::

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

    y = Exp.apply(x)          # y.grad_fn is an ExpBackward node

Note [Custom Function nodes]
As in torch, the ``ctx`` that ``forward`` receives *is* the backward node its outputs get as
``grad_fn``: each Function subclass gets a Node subclass ``<Name>Backward`` (made by the metaclass)
whose instances also take arbitrary attributes (``ctx.scale = 2``). ``apply`` collects the edges of
the tensor arguments that require grad *before* forward runs (forward runs with grad mode off, so
what it does is not recorded), then wraps the outputs as torch's ``_wrap_outputs`` does:

* a floating output gets the node as history (output number = its position in the returned tuple);
* an input returned unchanged is returned as a view of it, so the input keeps its own history;
* an input marked dirty (modified in place) has its history rebased onto the node, as any in-place
  op (a leaf that requires grad cannot be);
* outputs marked non-differentiable, and integer outputs, do not require grad.

Tensors given to ``save_for_backward`` are saved with their version (Note [Saved tensors]); an
output is saved as output (no reference cycle). In backward, ``None`` gradients of tensor outputs
are materialized as zeros unless ``ctx.set_materialize_grads(False)``; the returned gradients are
checked in torch's words (count, non-tensor inputs; shapes by the engine, as for every node).
"""

from __future__ import annotations

import functools
import inspect

from ..dispatch.dispatcher import grad_mode
from ..tensor import Tensor
from .graph import Node, SavedTensor, collect_edge, set_history
from .inplace import rebase_history
from .kernels import _FREED, _set_stream

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable"]


class FunctionCtx:
    """The methods ``ctx`` offers inside ``forward`` / ``setup_context`` (torch's FunctionCtx)."""

    def save_for_backward(self, *tensors) -> None:
        """Keep ``tensors`` (or None) for backward, where ``ctx.saved_tensors`` returns them."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                                f"{type(t).__name__}")
        self._to_save = tensors

    def mark_dirty(self, *tensors) -> None:
        """Declare the inputs that forward modified in place (each must also be returned)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        """Declare outputs that do not require grad (backward still gets a zero gradient for each)."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """Whether backward gets zeros (True, the default) or None for outputs that got no gradient."""
        self.materialize_grads = bool(value)


class BackwardCFunction(FunctionCtx, Node):
    """The node of one ``Function.apply`` call; also its ``ctx`` (Note [Custom Function nodes])."""

    _forward_cls = None
    _name = "BackwardCFunction"

    def __init__(self):
        super().__init__()
        self._to_save = None
        self._dirty = ()
        self._non_differentiable = ()
        self.materialize_grads = True
        self.needs_input_grad = ()
        self.output_meta = ()
        self._saved = None
        self._released = False
        self._input_is_tensor = ()

    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to ``save_for_backward`` (torch's version check on each)."""
        if self._released:
            raise RuntimeError(_FREED)
        if self._saved is None:
            return ()
        return tuple(None if s is None else s.unpack(self) for s in self._saved)

    def release(self) -> None:
        self._saved = None
        self._released = True

    def apply(self, grads: list) -> list:
        if self.materialize_grads:
            for i, g in enumerate(grads):
                meta = self.output_meta[i]
                if g is None and meta is not None:
                    from ..ops import bound as ops

                    grads[i] = ops.zeros(meta[0], dtype=meta[1], device=meta[2])
        result = _user_backward(self._forward_cls)(self, *grads)
        return self._check_gradients(result if isinstance(result, tuple) else (result,))

    def _check_gradients(self, result: tuple) -> list:
        """One gradient (or None) per tensor input, checked as torch's custom-function node does."""
        n = len(self._input_is_tensor)
        if len(result) != n and not (len(result) > n and all(r is None for r in result[n:])):
            raise RuntimeError(f"function {self._name} returned an incorrect number of gradients (expected {n}, "
                               f"got {len(result)})")
        out = []
        for i, (g, is_tensor) in enumerate(zip(result, self._input_is_tensor)):
            if not is_tensor:
                if g is not None:
                    raise RuntimeError(f"function {self._name} returned a gradient different than None at position "
                                       f"{i + 1}, but the corresponding forward input was not a Variable")
                continue
            if g is not None and not isinstance(g, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
            out.append(g)
        return out  # shapes are checked (and broadcasts summed) by the engine, as for every node


def _user_backward(cls):
    backward, vjp = cls.backward, cls.vjp
    if backward is not Function.backward and vjp is not Function.vjp:
        raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You should "
                           "only implement one of them.")
    return vjp if vjp is not Function.vjp else backward


class FunctionMeta(type):
    """Gives every Function subclass its node class ``<Name>Backward``."""

    def __init__(cls, name, bases, attrs):
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,),
                                 {"_forward_cls": cls, "_name": name + "Backward", "__module__": cls.__module__})
        super().__init__(name, bases, attrs)


class Function(metaclass=FunctionMeta):
    """Base class of custom differentiable operations: define static ``forward`` and ``backward``,
    call ``apply`` (Note [Custom Function nodes])."""

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use "
                           "new-style autograd function with static forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        """Compute the outputs (grad mode is off). With ``setup_context`` defined, takes no ``ctx``."""
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs: tuple, output):
        """Optional: fill ``ctx`` from ``inputs`` and ``output`` (then ``forward`` takes no ``ctx``)."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """One gradient per forward input (None for inputs that need none)."""
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run ``forward`` and record one ``<Name>Backward`` node for its outputs."""
        setup = cls.setup_context is not Function.setup_context
        if setup and kwargs:
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, {}
        ctx = cls._backward_cls()
        is_tensor = tuple(isinstance(a, Tensor) for a in args)
        executable = grad_mode.enabled and any(t and a._requires_grad for t, a in zip(is_tensor, args))
        ctx._input_is_tensor = is_tensor
        ctx.needs_input_grad = tuple(executable and t and a._requires_grad for t, a in zip(is_tensor, args))
        if executable:
            edges, metas = [], []
            for t, a in zip(is_tensor, args):
                if t:
                    collect_edge(a, edges, metas)
            ctx.next_edges, ctx.input_meta = tuple(edges), tuple(metas)
        prev = grad_mode.enabled
        grad_mode.enabled = False
        try:
            if setup:
                output = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        finally:
            grad_mode.enabled = prev
        return _wrap_outputs(ctx, args, output, executable)


def _alias(t: Tensor, keep_history: bool) -> Tensor:
    from ..ops.composite.views import alias

    v = alias(t, t._sizes, t._strides)
    if not keep_history:
        v._base = None  # a detached alias (torch returns an input given back under no_grad so)
    return v


def _wrap_outputs(ctx: BackwardCFunction, args: tuple, output, executable: bool):
    single = not isinstance(output, tuple)
    outs = (output,) if single else output
    input_ids = {id(a) for a in args if isinstance(a, Tensor)}
    dirty = {id(t) for t in ctx._dirty}
    non_diff = {id(t) for t in ctx._non_differentiable}
    out_ids = {id(o) for o in outs if isinstance(o, Tensor)}
    if not dirty <= out_ids:
        raise RuntimeError("Some elements marked as dirty during the forward method were not returned as output. The "
                           "inputs that are modified inplace must all be outputs of the Function.")
    ctx.num_outputs = len(outs)
    results, metas = [], []
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            results.append(o)
            metas.append(None)
            continue
        is_input, modified = id(o) in input_ids, id(o) in dirty
        if executable and id(o) not in non_diff and (o.dtype.is_floating_point or o.dtype.is_complex):
            if modified:
                if o.is_leaf and o._requires_grad:
                    raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
                rebase_history(o, ctx, i)
            else:
                if is_input:
                    o = _alias(o, keep_history=True)
                set_history(o, ctx, i)
        elif is_input and not modified:
            o = _alias(o, keep_history=False)
        metas.append((o._sizes, o.dtype, o.device))
        results.append(o)
    ctx.output_meta = tuple(metas)
    if ctx._to_save is not None:
        saved = []
        for t in ctx._to_save:
            nr = next((i for i, o in enumerate(results) if o is t and t.grad_fn is ctx), None)
            saved.append(None if t is None else SavedTensor(t, nr))
        ctx._saved = saved
        ctx._to_save = None
    if executable:
        first = next((o for o in results if isinstance(o, Tensor)), None)
        if first is not None and first.device.type == "cuda":
            _set_stream(ctx, (first,))
    return results[0] if single else tuple(results)


class DelayedError(Node):
    """Raises when backward reaches it: the gradient of a ``once_differentiable`` backward."""

    _name = "torch::autograd::Error"  # torch's node name

    def __init__(self, message: str, edges: tuple, metas: tuple, num_outputs: int):
        super().__init__(edges, metas, num_outputs)
        self.message = message

    def apply(self, grads: list):
        raise RuntimeError(self.message)


def once_differentiable(fn):
    """Decorate a Function's ``backward`` that is not itself differentiable: it runs with grad mode
    off, and differentiating its result (``create_graph=True``) raises."""

    @functools.wraps(fn)
    def wrapper(ctx, *grads):
        prev = grad_mode.enabled
        grad_mode.enabled = False
        try:
            outputs = fn(ctx, *grads)
        finally:
            grad_mode.enabled = prev
        if not prev or not any(isinstance(g, Tensor) and g._requires_grad for g in grads):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        edges, metas = [], []
        for g in grads:
            collect_edge(g, edges, metas)
        err = DelayedError("trying to differentiate twice a function that was marked with @once_differentiable",
                           tuple(edges), tuple(metas), len(outs))
        wrapped = []
        for i, o in enumerate(outs):
            if isinstance(o, Tensor) and (o.dtype.is_floating_point or o.dtype.is_complex):
                o = _alias(o, keep_history=False)
                set_history(o, err, i)
            wrapped.append(o)
        return wrapped[0] if single else tuple(wrapped)

    return wrapper
