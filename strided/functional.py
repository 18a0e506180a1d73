"""Python-level forms of ops whose torch signatures are not one schema (``torch.functional``'s role).

``strided.einsum("ij,jk->ik", a, b)`` and the sublist form ``strided.einsum(a, [0, 1], b, [1, 2], [0, 2])``
both call the ``einsum(str equation, Tensor[] tensors)`` operator of native_functions.yaml.
"""

from __future__ import annotations

import string

from .ops import bound as _ops
from .tensor import Tensor

__all__ = ["einsum", "nonzero", "argwhere", "where"]

_LETTERS = string.ascii_uppercase + string.ascii_lowercase  # torch's sublist labels 0..51


def einsum(*args) -> Tensor:
    """Sum of products of the operands along the labels of an Einstein-summation equation.

    ``einsum(equation, *operands)`` (operands may also be one list), or the sublist form
    ``einsum(op1, sublist1, op2, sublist2, ..., [sublist_out])`` with labels 0..51 and ``...``.
    """
    if not args:
        raise TypeError("einsum(): must specify the equation string and at least one operand, or at least one "
                        "operand and its subscripts list")
    if isinstance(args[0], str):
        equation, operands = args[0], args[1:]
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = operands[0]
        return _ops.einsum(equation, list(operands))
    operands = list(args[0::2])
    sublists = list(args[1::2])
    for i, s in enumerate(sublists):
        if not isinstance(s, (list, tuple)):
            raise TypeError(f"einsum(): the sublist format expects a list of subscripts after operand {i}, "
                            f"got {type(s).__name__}")
    out = None
    if len(args) % 2 == 1:
        out = operands.pop()
    terms = ",".join(_sublist(s) for s in sublists)
    equation = terms if out is None else f"{terms}->{_sublist(out)}"
    return _ops.einsum(equation, operands)


def _sublist(labels) -> str:
    parts = []
    for v in labels:
        if v is Ellipsis:
            parts.append("...")
        elif isinstance(v, int) and not isinstance(v, bool) and 0 <= v < len(_LETTERS):
            parts.append(_LETTERS[v])
        else:
            raise ValueError(f"einsum(): expected subscript to be within the range [0, 52), but got {v!r}")
    return "".join(parts)


def nonzero(input: Tensor, *, as_tuple: bool = False):
    """Coordinates of the nonzero elements: an (n, dim) int64 tensor, or with ``as_tuple`` one 1-D
    tensor per dimension (a 0-dim input counts as 1-D, as torch). Synchronizes with a CUDA device."""
    _check_tensor("nonzero", input)
    coords = _ops.nonzero(input)
    if not as_tuple:
        return coords
    if input.dim() == 0:
        return (_ops.view(coords, (-1,)) if coords.shape[0] == 0 else _ops.zeros((1,), dtype=coords.dtype,
                                                                                    device=coords.device),)
    return tuple(_ops.select(coords, 1, d) for d in range(input.dim()))


def argwhere(input: Tensor) -> Tensor:
    """``nonzero(input)``: the (n, dim) coordinates of the nonzero elements."""
    _check_tensor("argwhere", input)
    return _ops.nonzero(input)


def where(condition: Tensor, input=None, other=None):
    """``where(condition, input, other)`` picks elementwise; ``where(condition)`` is
    ``nonzero(condition, as_tuple=True)``."""
    _check_tensor("where", condition, "condition")
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if input is None or other is None:
        raise TypeError("where(): expected both input and other, or neither")
    return _ops.where(condition, input, other)


def _check_tensor(op: str, value, name: str = "input") -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"{op}(): argument '{name}' (position 1) must be Tensor, not {type(value).__name__}")
