"""Python-level forms of ops whose torch signatures are not one schema (``torch.functional``'s role).

``strided.einsum("ij,jk->ik", a, b)`` and the sublist form ``strided.einsum(a, [0, 1], b, [1, 2], [0, 2])``
both call the ``einsum(str equation, Tensor[] tensors)`` operator of native_functions.yaml.
"""

from __future__ import annotations

import string

from .dispatch.argument_checks import check_args
from .ops import bound as _ops
from .tensor import Tensor

__all__ = ["einsum", "nonzero", "argwhere", "where", "meshgrid", "broadcast_tensors", "cartesian_prod",
           "block_diag", "tensordot", "cdist", "unique", "unique_consecutive", "chain_matmul", "round"]

_LETTERS = string.ascii_uppercase + string.ascii_lowercase  # torch's sublist labels 0..51


def einsum(*args) -> Tensor:
    """Sum of products of the operands along the labels of an Einstein-summation equation.

    ``einsum(equation, *operands)`` (operands may also be one list), or the sublist form
    ``einsum(op1, sublist1, op2, sublist2, ..., [sublist_out])`` with labels 0..51 and ``...``.
    """
    if len(args) < 2:  # torch's words and class
        raise ValueError("einsum(): must specify the equation string and at least one operand, or at least one "
                         "operand and its subscripts list")
    if not isinstance(args[0], Tensor):
        equation, operands = args[0], args[1:]
        if not isinstance(equation, str):
            raise TypeError(f"einsum(): argument 'equation' (position 1) must be str, not {type(equation).__name__}")
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


def nonzero(input: Tensor, *, out=None, as_tuple: bool = False):
    """Coordinates of the nonzero elements: an (n, dim) int64 tensor, or with ``as_tuple`` one 1-D
    tensor per dimension (a 0-dim input counts as 1-D, as torch). Synchronizes with a CUDA device."""
    _check_tensor("nonzero", input)
    if out is not None and not as_tuple:
        return _ops.nonzero(input, out=out)  # Note [Out arguments]
    coords = _ops.nonzero(input)
    if not as_tuple:
        return coords
    if input.dim() == 0:
        return (_ops.view.default(coords, (-1,)) if coords.shape[0] == 0 else _ops.zeros((1,), dtype=coords.dtype,
                                                                                    device=coords.device),)
    return tuple(_ops.select(coords, 1, d) for d in range(input.dim()))


def argwhere(input: Tensor) -> Tensor:
    """``nonzero(input)``: the (n, dim) coordinates of the nonzero elements."""
    _check_tensor("argwhere", input)
    return _ops.nonzero(input)


def where(condition: Tensor, input=None, other=None, *, out=None):
    """``where(condition, input, other)`` picks elementwise; ``where(condition)`` is
    ``nonzero(condition, as_tuple=True)``."""
    _check_tensor("where", condition, "condition")
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if input is None or other is None:
        raise TypeError("where(): expected both input and other, or neither")
    if out is not None:
        return _ops.where(condition, input, other, out=out)  # Note [Out arguments]
    return _ops.where(condition, input, other)


def round(input: Tensor, *, decimals=None, out=None) -> Tensor:  # noqa: A001 - torch's name
    """Round half to even; with ``decimals``, to that many decimal digits (negative: tens, hundreds ...), torch's
    ``round.decimals`` (integer inputs are refused there, as torch)."""
    if decimals is None:
        return _ops.round(input) if out is None else _ops.round(input, out=out)
    from .special import round as _round_decimals

    return _round_decimals(input, decimals=decimals, out=out)


def chain_matmul(*matrices, out=None):
    """The product of 2-D ``matrices`` given as separate arguments, left to right (torch's deprecated form of
    ``linalg.multi_dot``); one matrix gives a copy of it."""
    for i, m in enumerate(matrices):
        if not isinstance(m, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(m).__name__}")
    if out is not None:
        return _ops.chain_matmul(list(matrices), out=out)  # Note [Out arguments]
    return _ops.chain_matmul(list(matrices))


def _check_tensor(op: str, value, name: str = "input") -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"{op}(): argument '{name}' (position 1) must be Tensor, not {type(value).__name__}")


def _tensors(op: str, tensors) -> list:
    """``f(a, b)`` or ``f([a, b])`` -> [a, b], each checked to be a Tensor."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    return list(tensors)


def meshgrid(*tensors, indexing: str | None = None) -> tuple:
    """Coordinate grids of 1-D tensors: ``indexing='ij'`` (the default) or ``'xy'`` (Cartesian)."""
    return tuple(_ops.meshgrid(_tensors("meshgrid", tensors), indexing=indexing or "ij"))


def broadcast_tensors(*tensors) -> tuple:
    """The tensors expanded (views) to their common broadcast shape."""
    return tuple(_ops.broadcast_tensors(_tensors("broadcast_tensors", tensors)))


def cartesian_prod(*tensors) -> Tensor:
    """Rows of every combination of one element from each 1-D tensor."""
    return _ops.cartesian_prod(_tensors("cartesian_prod", tensors))


def block_diag(*tensors) -> Tensor:
    """The tensors as blocks along the diagonal of one matrix."""
    return _ops.block_diag(_tensors("block_diag", tensors))


def tensordot(a: Tensor, b: Tensor, dims=2, out=None) -> Tensor:
    """Contract the last ``dims`` dims of ``a`` with the first ``dims`` of ``b``, or the paired dims
    ``dims=([a dims], [b dims])``."""
    check_args("tensordot", ("a", 1, a, "Tensor"), ("b", 2, b, "Tensor"))
    if isinstance(dims, Tensor):
        dims = dims.tolist() if dims.dim() else int(dims.item())
    if isinstance(dims, int) and not isinstance(dims, bool):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(a.dim() - dims, a.dim())), list(range(dims))
    elif isinstance(dims, (list, tuple)) and len(dims) == 2:
        dims_a, dims_b = ([d] if isinstance(d, int) else list(d) for d in dims)
    else:
        raise RuntimeError(f"tensordot expects dims to be an int or a pair of dim lists, got {dims!r}")
    if out is None:
        return _ops.tensordot(a, b, dims_a, dims_b)
    from .dispatch.out_arguments import run_with_out

    return run_with_out(_ops.tensordot, "tensordot", (a, b, dims_a, dims_b), {}, out)


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary"):
    """p-norm distances between the rows of ``x1`` (..., P, M) and ``x2`` (..., R, M) -> (..., P, R)."""
    from .ops.composite.combining import CDIST_MODES

    if compute_mode not in CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    return _ops.cdist(x1, x2, p, CDIST_MODES[compute_mode])


def _pick(values, inverse, counts, return_inverse: bool, return_counts: bool):
    if not (return_inverse or return_counts):
        return values
    return (values,) + ((inverse,) if return_inverse else ()) + ((counts,) if return_counts else ())


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,  # noqa: A002
           dim=None):
    """The unique elements (or slices along ``dim``) in ascending order; with ``return_inverse`` also
    where each input element went, with ``return_counts`` how many of each. Synchronizes on CUDA."""
    _check_tensor("unique", input)
    if dim is None:
        out = _ops._unique2(input, sorted, return_inverse, return_counts)
    else:
        out = _ops.unique_dim(input, dim, sorted, return_inverse, return_counts)
    return _pick(*out, return_inverse, return_counts)


def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False, dim=None):
    """Each run of equal consecutive elements (or slices along ``dim``) collapsed to one."""
    _check_tensor("unique_consecutive", input)
    return _pick(*_ops.unique_consecutive(input, return_inverse, return_counts, dim), return_inverse, return_counts)
