"""Autograd kernels generated from derivatives.yaml (the role of torch's VariableType).

Note [Autograd kernel]
For an overload with formulas, the Autograd kernel (built once, at import) runs the op below
autograd -- grad mode off, so the kernels and any ops they call record nothing --, then, if an
input with a formula requires grad, builds one ``FormulaNode``: next edges to those inputs, the
values its formulas read (Note [Saved tensors]) and the CUDA stream of the forward; the floating
(or complex) outputs named differentiable get it as ``grad_fn``.

Note [In-place autograd]
An in-place overload uses its own formulas or, for autogen ones (``add_.Tensor``), its
functional op's (same argument names). As in torch: writing into a leaf that requires grad (or a
view of one) raises; the node's edge for ``self`` is ``self``'s history *before* the write, a
``self`` the formulas read is saved as a copy of the old value, and ``result`` is ``self`` after
it; then ``self``'s history is rebased onto the node. When ``self`` is a view, its base's history
becomes a ``CopySlices`` node (the base's old history outside the view, the op's inside) and the
view becomes a view of that. ``out=`` overloads refuse inputs that require grad (torch's error).
"""

from __future__ import annotations

from ..dispatch.dispatcher import grad_mode
from ..tensor import Tensor
from .anomaly_mode import anomaly, store_stack
from .graph import (
    Node,
    SavedTensor,
    collect_edge,
    gradient_edge,
    set_history,
)
from .inplace import check_inplace, rebase_history
from .refusals import NOT_DIFFERENTIABLE_FOR_COMPLEX, check_no_requires_grad, no_formula_arguments
from .refusals import refuse_complex_autograd as _refuse_complex_autograd
from .saving import needed_how, needed_mask, save_value, saved_inputs

__all__ = ["FormulaNode", "node_class", "DERIVATIVES", "make_functional_kernel", "make_inplace_kernel",
           "make_out_kernel"]

DERIVATIVES: dict = {}  # OpOverload -> DerivativeInfo
# CompositeExplicitAutograd ops differentiated through the ops their kernel calls (as torch's
# CompositeImplicitAutograd ``dropout``): the kernel itself is their Autograd kernel.
DECOMPOSED = ("dropout",)
# Note [Saved operand copies]
# torch's matmul is CompositeImplicitAutograd: a batched operand whose batch dims do not fold into
# one stride (``q`` of attention, a transposed view of a (B, T, 3C) tensor) is copied by reshape,
# and bmm saves that copy, so its backward GEMMs read contiguous operands. Here matmul is one
# differentiable op (Note [Fused linear]) whose formula reads the saved inputs: saving the strided
# originals made its backward copy each of them again. An op listed here gets, from
# ``fn(args) -> new args or None``, the copies its kernel would make; the Autograd kernel makes
# them before the op runs, runs the op on them and saves them, while the edges stay on the
# originals. The copies are recorded (a clone node each, as torch's reshape records its copy), so
# a double backward differentiates the formulas through them back to the originals. Values,
# gradients and copies are torch's; an in-place write to an original after the op no longer fails
# backward's version check, as in torch, where bmm saved the copy.
OPERAND_COPIES: dict = {}  # schema name (``matmul``) -> fn(args) -> new positional args or None


_FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


class FormulaNode(Node):
    """A node whose backward is an overload's formulas (``AddBackward0``...)."""

    __slots__ = ("info", "saved", "needs", "layout", "output_meta", "released")

    def __init__(self, info, edges: tuple, metas: tuple, needs: tuple, layout: tuple):
        # every slot set here, in one place (no super().__init__ call on the hot path)
        self.next_edges = edges
        self.input_meta = metas
        self.pre_hooks = None
        self.retain_hooks = None
        self.node_pre_hooks = None
        self.post_hooks = None
        self.stream = None
        self.num_outputs = info.num_outputs
        self.info = info
        self.needs = needs
        self.layout = layout
        self.output_meta = None  # per output (sizes, dtype, device): read only with several outputs
        self.released = False
        self.saved = None
        if anomaly.enabled:
            store_stack(self)  # Note [Anomaly mode]

    @property
    def _name(self) -> str:
        return self.info.node_name

    def apply(self, grads: list) -> tuple:
        if self.released:
            raise RuntimeError(_FREED)
        info = self.info
        values = [_unpack(v, self) for v in self.saved]
        if self.num_outputs > 1:
            for i, g in enumerate(grads):
                if g is None and self.output_meta[i] is not None:
                    from ..ops import bound as ops

                    sizes, dtype, device = self.output_meta[i]
                    grads[i] = ops.zeros(sizes, dtype=dtype, device=device)
        results = info.fn(grads, self.needs, *values)
        out = []
        for r, (_, count, is_list) in zip(results, self.layout):
            if count == 0:
                continue
            if is_list:
                out.extend(r if r is not None else [None] * count)
            else:
                out.append(r)
        return out

    def takes_real_part(self, index: int) -> bool:
        for (start, count, _), wrapped in zip(self.layout, self.info.r_to_c):
            if start <= index < start + count:
                return wrapped
        return False

    def release(self) -> None:
        self.saved = None
        self.released = True


_NODE_CLASSES: dict = {}


def node_class(name: str) -> type:
    """The ``FormulaNode`` subclass named ``name`` ("MulBackward0"), made once: ``type(y.grad_fn).__name__`` is
    torch's node name, as graph-drawing tools read it."""
    cls = _NODE_CLASSES.get(name)
    if cls is None:
        cls = _NODE_CLASSES[name] = type(name, (FormulaNode,), {"__slots__": (), "_name": name,
                                                               "__module__": FormulaNode.__module__})
    return cls


def _unpack(v, node):
    if type(v) is SavedTensor:
        return v.unpack(node)
    if type(v) is list:
        return [_unpack(x, node) for x in v]
    return v


def _bind(info, args, kwargs) -> list:
    bound = list(args)
    defaults = info.defaults
    if len(bound) < len(defaults):
        bound.extend(defaults[len(bound):])
    if kwargs:
        index = info.index
        for k, v in kwargs.items():
            bound[index[k]] = v
    return bound


def _prepare(info, bound: list, self_edge=None):
    """Edges and saved inputs of one call, before it runs; None when no input needs grad.

    Inputs are saved before the op runs, so an in-place op that overwrites an input it saved
    (``x.mul_(x)``) fails at backward with the version error, as in torch.
    """
    if info.simple and self_edge is None:
        return _prepare_simple(info, bound)
    edges, metas, needs, layout = [], [], [], []
    any_edge = False
    for _name, pos, kind in info.inputs:
        v = bound[pos]
        start = len(edges)
        if kind == "list":
            for t in v:
                collect_edge(t, edges, metas)
        elif pos == 0 and self_edge is not None:
            edges.append(self_edge[0])
            metas.append(self_edge[1])
        else:
            collect_edge(v, edges, metas)
        count = len(edges) - start
        need = any(e is not None for e in edges[start:])
        any_edge |= need
        needs.append(need)
        layout.append((start, count, kind == "list"))
    if not any_edge:
        return None
    return _new_node(info, bound, tuple(edges), tuple(metas), tuple(needs), tuple(layout), self_edge)


def _prepare_simple(info, bound):
    """``_prepare`` for the common case: every differentiable input is one Tensor (no lists)."""
    edges, metas, needs = [], [], []
    any_need = False
    for pos in info.positions:
        t = bound[pos]
        if isinstance(t, Tensor) and t._requires_grad:
            meta = t._autograd
            if meta is not None and meta.grad_fn is not None and t._base is None:
                edges.append((meta.grad_fn, meta.output_nr))
            else:
                edges.append(gradient_edge(t))
            metas.append((t._sizes, t.dtype, t.device))
            needs.append(True)
            any_need = True
        else:
            edges.append(None)
            metas.append(None)
            needs.append(False)
    if not any_need:
        return None
    return _new_node(info, bound, tuple(edges), tuple(metas), tuple(needs), info.layout, None)


def _new_node(info, bound, edges, metas, needs, layout, self_edge):
    node = info.node_cls(info, edges, metas, needs, layout)
    node.saved = saved_inputs(info, bound, self_edge, needs)
    return node


def _attach(node, info, outputs) -> None:
    """Save the outputs the formulas read and make ``node`` their grad_fn."""
    if type(outputs) is Tensor:  # the common case: one Tensor output
        if info.uses_result:
            saved = node.saved
            needs = node.needs
            mask = -1 if all(needs) else needed_mask(needs)
            for k, (_name, pos, how) in enumerate(info.saved):
                if pos is None:
                    if mask != -1:
                        how = needed_how(info.saved_users[k], how, mask)  # Note [Saved when needed]
                    if how is not None:
                        saved[k] = save_value(outputs, how, 0)
        node.saved = tuple(node.saved)
        if outputs.device.type == "cuda":
            _set_stream(node, (outputs,))
        if info.output_differentiability[0] and (outputs.dtype.is_floating_point or outputs.dtype.is_complex):
            set_history(outputs, node, 0)
        return
    if isinstance(outputs, list):  # Tensor[] return: one output per element
        outs = outputs
        node.num_outputs = len(outputs)
        diffs = (info.output_differentiability[0],) * len(outputs)
    else:
        outs = outputs if isinstance(outputs, tuple) else (outputs,)
        diffs = info.output_differentiability
    node.output_meta = tuple((o._sizes, o.dtype, o.device) if d else None for o, d in zip(outs, diffs))
    if info.uses_result:
        saved = node.saved
        needs = node.needs
        mask = -1 if all(needs) else needed_mask(needs)
        for k, (name, pos, how) in enumerate(info.saved):
            if pos is None and (mask == -1 or (how := needed_how(info.saved_users[k], how, mask)) is not None):
                i = info.return_index[name]
                if isinstance(outputs, list):
                    saved[k] = [save_value(o, how, j) for j, o in enumerate(outputs)]
                else:
                    saved[k] = save_value(outs[i], how, i)
    node.saved = tuple(node.saved)
    if outs and outs[0].device.type == "cuda":
        _set_stream(node, outs)
    for i, (o, d) in enumerate(zip(outs, diffs)):
        if d and (o.dtype.is_floating_point or o.dtype.is_complex):
            set_history(o, node, i)


_CURRENT_STREAM = []  # [backends.cuda.streams.current_stream_at], filled on the first CUDA node

def _set_stream(node, outs) -> None:
    """Note [Backward streams]: the node remembers the current stream of its outputs' device."""
    if not _CURRENT_STREAM:
        from ..backends.cuda.streams import current_stream_at

        _CURRENT_STREAM.append(current_stream_at)
    node.stream = _CURRENT_STREAM[0](outs[0].device.index)


def make_functional_kernel(op, info):
    """The Autograd kernel of a functional overload (Note [Autograd kernel]); specialized per keyset
    so the op below autograd is reached by redispatch (Note [Autograd redispatch])."""
    nargs = len(info.defaults)
    simple = info.simple
    mode = grad_mode
    copies = OPERAND_COPIES.get(info.name)
    no_complex_grad = op.schema.name in NOT_DIFFERENTIABLE_FOR_COMPLEX
    unchecked = no_formula_arguments(op, info)

    def for_keyset(keyset):
        below = _below(op, keyset)

        def autograd_kernel(*args, **kwargs):
            bound = args if (not kwargs and len(args) == nargs) else _bind(info, args, kwargs)
            if unchecked:
                check_no_requires_grad(op, bound, unchecked)
            node = _prepare_simple(info, bound) if simple else _prepare(info, bound)
            if copies is not None and node is not None:  # Note [Saved operand copies]
                swapped = copies(bound)
                if swapped is not None:
                    args, kwargs = swapped, {}
                    node.saved = saved_inputs(info, swapped, None, node.needs)
            mode.enabled = False
            try:
                out = below(*args, **kwargs)
            finally:
                mode.enabled = True
            if node is not None:
                if no_complex_grad:
                    _refuse_complex_autograd(op.schema.name, out)
                _attach(node, info, out)
            return out

        autograd_kernel.__name__ = f"{info.node_name}_autograd"
        return autograd_kernel

    kernel = for_keyset(None)
    kernel.for_keyset = for_keyset
    return kernel


def _below(op, keyset):
    """The call below Autograd: a redispatch to the backend key of ``keyset``, or (None: the kernel
    called directly, not through the dispatcher) a dispatch from the arguments."""
    if keyset is None:
        return op
    # the backend kernel itself, resolved once: a cache clear on ``op`` (a new registration, tracing
    # on or off) drops this Autograd kernel too, so it is never stale (Note [Autograd redispatch])
    backend = keyset & 0xF
    fn = op._cache.get(backend)
    return fn if fn is not None else op._resolve(backend)


def make_inplace_kernel(op, info):
    """Note [In-place autograd]."""
    def for_keyset(keyset):
        below = _below(op, keyset)

        def autograd_kernel(*args, **kwargs):
            bound = _bind(info, args, kwargs)
            self = bound[0]
            check_inplace(self)
            mode = grad_mode
            mode.enabled = False
            try:
                node = None
                if self.dtype.is_floating_point or self.dtype.is_complex:
                    if self._requires_grad:
                        self_edge = (gradient_edge(self), (self._sizes, self.dtype, self.device))
                    else:
                        self_edge = (None, None)
                    node = _prepare(info, bound, self_edge)
                out = below(*args, **kwargs)
            finally:
                mode.enabled = True
            if node is not None:
                _attach(node, info, (self,))
                rebase_history(self, node)
            return out

        autograd_kernel.__name__ = f"{info.node_name}_inplace_autograd"
        return autograd_kernel

    kernel = for_keyset(None)
    kernel.for_keyset = for_keyset
    return kernel


def make_out_kernel(op):
    def autograd_kernel(*args, **kwargs):
        raise RuntimeError(
            f"{op.schema.name}(): functions with out=... arguments don't support automatic differentiation, "
            "but one of the arguments requires grad.")

    return autograd_kernel
