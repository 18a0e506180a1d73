"""Autograd kernels generated from derivatives.yaml (the role of torch's VariableType).

Note [Autograd kernel]
For an overload with formulas, the Autograd kernel (built once, at import) runs the op below
autograd -- grad mode off, so the kernels and any ops they call record nothing --, then, if an
input with a formula requires grad, builds one ``FormulaNode``: next edges to those inputs, the
values its formulas read (Note [Saved tensors]) and the CUDA stream of the forward; the floating
outputs named differentiable get it as ``grad_fn``.

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
from ..dispatch.keys import DispatchKey
from ..tensor import Tensor
from .graph import (
    Node,
    SavedTensor,
    check_inplace,
    collect_edge,
    gradient_edge,
    rebase_history,
    set_history,
)

__all__ = ["FormulaNode", "Geometry", "register_all", "DERIVATIVES"]

DERIVATIVES: dict = {}  # OpOverload -> DerivativeInfo
# CompositeExplicitAutograd ops differentiated through the ops their kernel calls (as torch's
# CompositeImplicitAutograd ``dropout``): the kernel itself is their Autograd kernel.
DECOMPOSED = ("dropout",)


class Geometry:
    """The metadata of a tensor a formula reads only through ``.shape``/``.stride()``/``.dtype``/``.device``."""

    __slots__ = ("_sizes", "_strides", "dtype", "device")

    def __init__(self, t: Tensor):
        self._sizes, self._strides, self.dtype, self.device = t._sizes, t._strides, t.dtype, t.device

    @property
    def shape(self) -> tuple:
        return self._sizes

    @property
    def ndim(self) -> int:
        return len(self._sizes)

    def dim(self) -> int:
        return len(self._sizes)

    def size(self, dim=None):
        return self._sizes if dim is None else self._sizes[dim]

    def stride(self, dim=None):
        return self._strides if dim is None else self._strides[dim]

    def numel(self) -> int:
        n = 1
        for s in self._sizes:
            n *= s
        return n


_FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


class FormulaNode(Node):
    """A node whose backward is an overload's formulas (``AddBackward0``...)."""

    __slots__ = ("info", "saved", "needs", "layout", "output_meta", "released")

    @property
    def name(self) -> str:
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

    def release(self) -> None:
        self.saved = None
        self.released = True


def _unpack(v, node):
    if type(v) is SavedTensor:
        return v.unpack(node)
    if type(v) is list:
        return [_unpack(x, node) for x in v]
    return v


def _save(value, how: str, output_nr=None):
    if value is None or how == "value":
        return value
    if isinstance(value, (list, tuple)):
        return [_save(v, how, output_nr) for v in value]
    if not isinstance(value, Tensor):
        return value
    if how == "geometry":
        return Geometry(value)
    return SavedTensor(value, output_nr)


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


def _prepare_simple(info, bound: list):
    """``_prepare`` for the common case: every differentiable input is one Tensor (no lists)."""
    edges, metas, needs = [], [], []
    for pos in info.positions:
        t = bound[pos]
        if isinstance(t, Tensor) and t.requires_grad:
            meta = t._autograd
            if meta is not None and meta.grad_fn is not None and t._base is None:
                edges.append((meta.grad_fn, meta.output_nr))
            else:
                edges.append(gradient_edge(t))
            metas.append((t._sizes, t.dtype, t.device))
            needs.append(True)
        else:
            edges.append(None)
            metas.append(None)
            needs.append(False)
    if True not in needs:
        return None
    return _new_node(info, bound, tuple(edges), tuple(metas), tuple(needs), info.layout, None)


def _new_node(info, bound, edges, metas, needs, layout, self_edge):
    node = FormulaNode(edges, metas, info.num_outputs)
    node.info, node.needs, node.layout, node.released = info, needs, layout, False
    saved = []
    for _name, pos, how in info.saved:
        if pos is None:
            saved.append(None)  # an output: filled in by _attach
        elif pos == 0 and self_edge is not None and how == "tensor":
            saved.append(SavedTensor(bound[0].clone()))  # in-place: the old value of self
        else:
            saved.append(_save(bound[pos], how))
    node.saved = saved
    return node


def _attach(node, info, outputs) -> None:
    """Save the outputs the formulas read and make ``node`` their grad_fn."""
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
        for k, (name, pos, how) in enumerate(info.saved):
            if pos is None:
                i = info.return_index[name]
                if isinstance(outputs, list):
                    saved[k] = [_save(o, how, j) for j, o in enumerate(outputs)]
                else:
                    saved[k] = _save(outs[i], how, i)
    node.saved = tuple(node.saved)
    if outs and outs[0].device.type == "cuda":
        _set_stream(node, outs)
    for i, (o, d) in enumerate(zip(outs, diffs)):
        if d and o.dtype.is_floating_point:
            set_history(o, node, i)


def _set_stream(node, outs) -> None:
    """Note [Backward streams] (strided.cuda is imported only for CUDA graphs)."""
    from ..cuda import current_stream

    node.stream = current_stream(outs[0].device)


def make_functional_kernel(op, info):
    def autograd_kernel(*args, **kwargs):
        node = _prepare(info, _bind(info, args, kwargs))
        mode = grad_mode
        mode.enabled = False
        try:
            out = op(*args, **kwargs)
        finally:
            mode.enabled = True
        if node is not None:
            _attach(node, info, out)
        return out

    autograd_kernel.__name__ = f"{info.node_name}_autograd"
    return autograd_kernel


def make_inplace_kernel(op, info):
    """Note [In-place autograd]."""
    def autograd_kernel(*args, **kwargs):
        bound = _bind(info, args, kwargs)
        self = bound[0]
        check_inplace(self)
        mode = grad_mode
        mode.enabled = False
        try:
            node = None
            if self.dtype.is_floating_point:
                if self.requires_grad:
                    self_edge = (gradient_edge(self), (self._sizes, self.dtype, self.device))
                else:
                    self_edge = (None, None)
                node = _prepare(info, bound, self_edge)
            out = op(*args, **kwargs)
        finally:
            mode.enabled = True
        if node is not None:
            _attach(node, info, (self,))
            rebase_history(self, node)
        return out

    autograd_kernel.__name__ = f"{info.node_name}_inplace_autograd"
    return autograd_kernel


def make_out_kernel(op):
    def autograd_kernel(*args, **kwargs):
        raise RuntimeError(
            f"{op.schema.name}(): functions with out=... arguments don't support automatic differentiation, "
            "but one of the arguments requires grad.")

    return autograd_kernel


def _node_name(op, ordinal: int) -> str:
    """torch's node names: ``add.Tensor`` -> ``AddBackward0``, ``_to_copy`` -> ``ToCopyBackward0``."""
    return "".join(p.capitalize() for p in op.schema.name.split("_") if p) + f"Backward{ordinal}"


def _finish(info, op, ordinal: int) -> None:
    """Per-overload call data: Python defaults, keyword positions, return positions, node name."""
    from ..ops.schema import _NO_DEFAULT

    args = op.schema.arguments
    defaults = [a.default_value for a in args]
    info.defaults = tuple(None if d is _NO_DEFAULT else d for d in defaults)
    info.index = {a.name: i for i, a in enumerate(args)}
    rets = op.schema.returns
    names = ("result",) if len(rets) == 1 else tuple(r.name or f"result{i}" for i, r in enumerate(rets))
    info.return_index = {n: i for i, n in enumerate(names)}
    info.node_name = _node_name(op, ordinal)
    info.simple = all(kind == "tensor" for _, _, kind in info.inputs)
    info.positions = tuple(pos for _, pos, _ in info.inputs)
    info.layout = tuple((k, 1, False) for k in range(len(info.inputs)))


def _functional_of(op, aten):
    """The functional overload an autogen in-place (``add_.Tensor``) or ``out=`` overload derives from:
    same name (without the ``_``), same arguments (without ``out``)."""
    schema = op.schema
    if op._mutated is None:
        return None
    pos, name = op._mutated
    if pos == 0 and schema.name.endswith("_"):
        packet, want = aten._get(schema.name[:-1]), schema.arguments
    elif name == "out":
        packet, want = aten._get(schema.name), schema.arguments[:-1]
    else:
        return None
    key = tuple((a.name, str(a.type)) for a in want)
    for cand in packet._ordered if packet is not None else ():
        if cand is not op and tuple((a.name, str(a.type)) for a in cand.schema.arguments) == key:
            return cand
    return None


def register_all() -> dict:
    """Register the Autograd kernel of every overload derivatives.yaml covers (once, at import)."""
    import copy

    from ..ops.registry import load
    from .derivatives import load_derivatives

    aten = load()
    infos = load_derivatives()
    for name in DECOMPOSED:
        op = aten._get(name).default
        op.register(DispatchKey.Autograd, op.kernel(DispatchKey.CompositeExplicitAutograd))
    for packet in aten:
        ordinal = 0
        for op in packet._ordered:
            info = infos.get(op)
            if info is not None:
                _finish(info, op, ordinal)
                ordinal += 1
    for packet in aten:
        for op in packet._ordered:
            info = infos.get(op)
            functional = None
            if info is None:
                functional = _functional_of(op, aten)
                if functional is None or functional not in infos:
                    continue
            if op.has_kernel(DispatchKey.Autograd):
                continue
            if info is None and op._mutated[1] == "out":
                op.register(DispatchKey.Autograd, make_out_kernel(op))
                continue
            if info is None:  # autogen in-place: the functional's formulas, this overload's call data
                info = copy.copy(infos[functional])
                _finish(info, op, 0)
                info.node_name = infos[functional].node_name
                info.op = op
            DERIVATIVES[op] = info
            if op._mutated is not None and op._mutated[0] == 0:
                op.register(DispatchKey.Autograd, make_inplace_kernel(op, info))
            else:
                op.register(DispatchKey.Autograd, make_functional_kernel(op, info))
    return DERIVATIVES
