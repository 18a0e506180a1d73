"""Register the Autograd kernel of every overload derivatives.yaml covers (once, at import)."""

from __future__ import annotations

import re

from ..dispatch.keys import DispatchKey
from .kernels import (
    DECOMPOSED,
    DERIVATIVES,
    OPERAND_COPIES,
    make_functional_kernel,
    make_inplace_kernel,
    make_out_kernel,
    node_class,
)
from .not_implemented import make_not_implemented_kernel, needs_not_implemented_kernel

__all__ = ["register_all"]


# Note [Node names]
# torch names a node after its op in CamelCase, a letter after a digit capitalized (``log1p`` -> ``Log1PBackward0``,
# ``max_pool2d_with_indices`` -> ``MaxPool2DWithIndicesBackward0``), numbered by the overload's place among its
# name's entries of torch's derivatives.yaml. Where strided's schema file orders the overloads otherwise, or where
# torch's Python API wraps a number operand as a tensor and so reaches the Tensor overload (``x * 2`` is
# ``mul.Tensor``: ``MulBackward0``; strided calls ``mul.Scalar``), the ordinal is torch's, from this table.
_TORCH_ORDINALS = {
    "clamp": 1, "clamp.Tensor": 0, "max": 1, "max.dim": 0, "min": 1, "min.dim": 0, "norm.Scalar": 0,
    "norm.ScalarOpt_dim": 1, "pow.Tensor_Scalar": 0, "pow.Tensor_Tensor": 1, "remainder.Scalar": 0,
    "remainder.Tensor": 1, "fmod.Scalar": 0, "fmod.Tensor": 1,
    # a Python number reaches torch's Tensor overload
    "mul.Scalar": 0, "add.Scalar": 0, "sub.Scalar": 0, "div.Scalar": 0, "div.Scalar_mode": 2,
    "where.ScalarOther": 0, "where.ScalarSelf": 0,
    # torch's derivatives.yaml lists these in-place forms after their functional op under one camel name
    "leaky_relu_": 1, "elu_": 1, "celu_": 1, "threshold_": 1,
}


def _node_name(op, ordinal: int) -> str:
    """torch's node names: ``add.Tensor`` -> ``AddBackward0``, ``_to_copy`` -> ``ToCopyBackward0`` (Note [Node
    names])."""
    name = op.schema.name
    name = name[:-len("_forward")] if name.endswith("_forward") else name  # nll_loss_forward: NllLossBackward0
    camel = "".join(p.capitalize() for p in name.split("_") if p)
    camel = re.sub(r"(?<=\d)[a-z]", lambda m: m.group().upper(), camel)
    ordinal = _TORCH_ORDINALS.get(op.schema.qualified_name, ordinal)
    return f"{camel}Backward{ordinal}"


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
    info.node_cls = node_class(info.node_name)
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
    from ..ops.composite.decompositions import matmul_operand_copies

    OPERAND_COPIES["matmul"] = matmul_operand_copies  # Note [Saved operand copies]
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
                if op.schema.qualified_name not in _TORCH_ORDINALS:  # else torch names the form itself (threshold_)
                    info.node_name = infos[functional].node_name
                    info.node_cls = infos[functional].node_cls
                info.op = op
            DERIVATIVES[op] = info
            if op._mutated is not None and op._mutated[0] == 0:
                op.register(DispatchKey.Autograd, make_inplace_kernel(op, info))
            else:
                op.register(DispatchKey.Autograd, make_functional_kernel(op, info))
    for packet in aten:  # Note [Not-implemented derivatives]
        for op in packet._ordered:
            if (not op.has_kernel(DispatchKey.Autograd) and not op.has_kernel(DispatchKey.CompositeImplicitAutograd)
                    and needs_not_implemented_kernel(op)):
                op.register(DispatchKey.Autograd, make_not_implemented_kernel(op))
    return DERIVATIVES
