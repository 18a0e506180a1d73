"""The Autograd kernel of ops without derivative formulas (torch's ``autograd_not_implemented_fallback``).

Note [Not-implemented derivatives]
An op with floating outputs and no formula in derivatives.yaml (a ``*_backward`` op, the ``_linalg_*``
factorization kernels, the samplers ``binomial`` and ``_sample_dirichlet``) used to fall through to its
backend when an input required grad: the outputs came back without ``grad_fn`` and a backward through them
silently gave no gradient. As in torch, such an op now runs below autograd and, when a floating input
requires grad, its floating outputs get a ``NotImplemented`` node, whose backward raises torch's
``derivative for aten::<op> is not implemented``. The public functions built on these ops (``linalg.cholesky``,
``Dirichlet.rsample``, the ``nn.functional`` losses...) differentiate through their own formulas or autograd
Functions and never reach this node. Ops whose outputs torch does not differentiate (the ``*_like``
factories, ``detach``) and ops that write an argument (``resize_``, ``set_``, in-place or ``out=``) are not
given it; integer and boolean outputs never require grad.
"""

from __future__ import annotations

from ..dispatch.dispatcher import grad_mode
from ..tensor import Tensor
from .graph import Node, collect_edge, set_history

__all__ = ["NotImplementedNode", "make_not_implemented_kernel", "needs_not_implemented_kernel"]

# torch's DONT_REQUIRE_DERIVATIVE ops among strided's: outputs that never require grad (mostly integer or
# boolean, where the fallback would only add a Python call to every comparison of a tensor that requires grad)
_NON_DIFFERENTIABLE = frozenset({
    "empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like", "detach",
    "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "logical_not",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift", "bitwise_right_shift",
    "isnan", "isinf", "isfinite", "argmax", "argmin", "all", "any", "nonzero", "searchsorted", "one_hot",
    "_check_index_range",
})


class NotImplementedNode(Node):
    """The ``grad_fn`` of an op without a derivative formula: its backward raises (Note [Not-implemented
    derivatives])."""

    __slots__ = ("op_name",)
    _name = "torch::autograd::NotImplemented"

    def __init__(self, op_name: str, next_edges, input_meta, num_outputs: int):
        super().__init__(next_edges, input_meta, num_outputs)
        self.op_name = op_name

    def apply(self, grads):
        raise RuntimeError(f"derivative for aten::{self.op_name} is not implemented")


def needs_not_implemented_kernel(op) -> bool:
    """True for a functional overload with Tensor arguments and a Tensor return, no formula and no
    decomposition (Note [Not-implemented derivatives])."""
    schema = op.schema
    if schema.name in _NON_DIFFERENTIABLE or op._mutated is not None:
        return False
    if not any("Tensor" in str(a.type) for a in schema.arguments):
        return False
    return any("Tensor" in str(r.type) for r in schema.returns)


def _edges(values, edges: list, metas: list) -> None:
    for v in values:
        if isinstance(v, Tensor):
            if v.dtype.is_floating_point or v.dtype.is_complex:
                collect_edge(v, edges, metas)
        elif isinstance(v, (list, tuple)):
            _edges(v, edges, metas)


def make_not_implemented_kernel(op):
    """The fallback Autograd kernel of ``op`` (Note [Not-implemented derivatives]), specialized per keyset
    as the formula kernels are (Note [Autograd redispatch] in kernels.py)."""
    from .kernels import _below, _set_stream

    name = op.schema.name

    def for_keyset(keyset):
        below = _below(op, keyset)

        def autograd_kernel(*args, **kwargs):
            edges, metas = [], []
            enabled = grad_mode.enabled
            if enabled:
                _edges(args, edges, metas)
                _edges(kwargs.values(), edges, metas)
            grad_mode.enabled = False
            try:
                out = below(*args, **kwargs)
            finally:
                grad_mode.enabled = enabled
            if any(e is not None for e in edges):
                outs = out if isinstance(out, (tuple, list)) else (out,)
                node = NotImplementedNode(name, tuple(edges), tuple(metas), len(outs))
                if outs and isinstance(outs[0], Tensor) and outs[0].device.type == "cuda":
                    _set_stream(node, outs)
                for i, o in enumerate(outs):
                    if isinstance(o, Tensor) and (o.dtype.is_floating_point or o.dtype.is_complex):
                        set_history(o, node, i)
            return out

        autograd_kernel.__name__ = f"{name}_not_implemented_autograd"
        return autograd_kernel

    kernel = for_keyset(None)
    kernel.for_keyset = for_keyset
    kernel.not_implemented = True  # for tests and tools: this op has no derivative
    return kernel
