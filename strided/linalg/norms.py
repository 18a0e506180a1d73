"""torch.linalg's norms, products and views, composed from existing ops.

``vector_norm``, ``matrix_norm`` (Frobenius, 1, -1, inf, -inf) and ``norm`` reduce with ``norm``,
``sum``, ``amax`` and ``amin``, so every backend and autograd follow (``norm``'s derivative is zero
where the norm is zero, as torch's). The norms that need singular values (ord 2, -2, 'nuc': the largest,
the smallest, their sum) take them from ``svd.svdvals`` (Jacobi SVD, with its gradient).
"""

from __future__ import annotations

import math

from .. import dtypes as _dt
from ..dispatch.argument_checks import arg_tensor
from ..ops import bound as _ops
from ..tensor import Tensor
from ._common import COMPLEX_DEVICES, type_name

__all__ = ["vector_norm", "matrix_norm", "norm", "cross", "vecdot", "matmul", "diagonal"]

_SVD_ORDS = (2, -2, "nuc")


def _tensor(op: str, name: str, position: int, value) -> None:
    arg_tensor(f"linalg.{op}", name, position, value)


def _dims(dim, ndim: int):
    if dim is None:
        return list(range(ndim))
    return [dim] if isinstance(dim, int) else list(dim)


def vector_norm(x: Tensor, ord=2, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The ``ord``-norm of ``x`` over ``dim`` (all elements when None) as a vector: ``sum(|x|^ord)^(1/ord)``,
    ``max|x|`` for inf, ``min|x|`` for -inf, the count of nonzeros for 0."""
    _tensor("vector_norm", "input", 1, x)
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_type_word(x.dtype)}")
    if dtype is not None:
        x = _to_norm_dtype("linalg.vector_norm", x, dtype)
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' (position 2) must be Number, not {type(ord).__name__}")
    if x.dtype.is_complex:
        x = _ops.abs(x)  # the norm of the moduli, a real result (as torch); gradients through abs's formula
    dims = _dims(dim, x.dim())
    if x.dim() == 0:
        x = x.reshape(1)
        dims = [0]
        squeeze_scalar = True  # keepdim too: a 0-dim input has no dim to keep (torch)
    else:
        squeeze_scalar = False
    if ord == -math.inf or (ord < 0 and ord != -math.inf):
        if x.numel() == 0:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {ord} norm on an empty tensor because the "
                               "operation does not have an identity")
    if ord == -math.inf:
        out = _ops.amin(_ops.abs(x), dims, keepdim)
    elif ord < 0:  # a zero entry makes its slice's norm 0; torch's norm_backward gives that slice a zero gradient
        a = _ops.abs(x)
        zero = _ops.eq(_ops.amin(a, dims, keepdim), 0)
        safe = _ops.where(_ops.eq(_ops.amin(a, dims, True), 0), 1.0, a)  # no inf ** (1 / ord) chain in backward
        out = _ops.where(zero, 0.0, _ops.pow(_ops.sum(_ops.pow(safe, ord), dims, keepdim), 1.0 / ord))
    else:
        out = _ops.norm(x, float(ord), dims, keepdim)
    return out.reshape(()) if squeeze_scalar else out


def matrix_norm(A: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None) -> Tensor:
    """The ``ord`` matrix norm over the two dims ``dim``: 'fro', or the max / min absolute column (1, -1)
    or row (inf, -inf) sum."""
    _tensor("matrix_norm", "input", 1, A)
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if dtype is not None:
        A = _to_norm_dtype("linalg.matrix_norm", A, dtype)
    dim = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(str(d) for d in dim)}")
    d0, d1 = (d % A.dim() for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord in _SVD_ORDS:
        from .svd import svdvals  # svd.py imports this module's neighbours; imported here to avoid a cycle

        if not A.dtype.is_floating_point:
            if A.dtype.is_complex and A.device.type not in COMPLEX_DEVICES:  # Note [Complex linear algebra on the CPU]
                from ._common import refuse_complex

                refuse_complex("linalg_svd", A)
            if not A.dtype.is_complex:
                raise RuntimeError(f"linalg.matrix_norm: Expected a floating point or complex tensor as input. Got "
                                   f"{_type_word(A.dtype)}")
        if A.dtype not in (_dt.float32, _dt.float64, _dt.complex64, _dt.complex128):
            raise RuntimeError(f"linalg.matrix_norm: Low precision dtypes not supported. Got {_type_word(A.dtype)}")
        rest = [d for d in range(A.dim()) if d not in (d0, d1)]
        S = svdvals(A.permute(*rest, d0, d1))  # the two dims moved to the end, as torch
        out = _ops.sum(S, [-1]) if ord == "nuc" else _ops.amax(S, [-1]) if ord == 2 else _ops.amin(S, [-1])
        if keepdim:
            out = out.unsqueeze(-1).unsqueeze(-1)
            out = out.permute(*[rest.index(d) if d in rest else len(rest) + (d == d1) for d in range(A.dim())])
        return out
    if ord not in (1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    # 1 / -1: sum over rows (dim d0), then the max / min over columns; inf / -inf: the transpose
    inner, outer = (d0, d1) if abs(ord) == 1 else (d1, d0)
    sums = _ops.sum(_ops.abs(A), [inner], True)
    out = _ops.amax(sums, [outer], True) if ord > 0 else _ops.amin(sums, [outer], True)
    return out if keepdim else _ops.squeeze(out, sorted({d0, d1}))


def norm(A: Tensor, ord=None, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """``vector_norm`` or ``matrix_norm`` as torch.linalg.norm picks: a matrix norm when ``dim`` is two
    dims, or ``dim`` is None, ``ord`` is given and ``A`` is 2-D; else a vector norm (2 by default)."""
    _tensor("norm", "input", 1, A)
    if dim is not None and not isinstance(dim, int) and len(dim) == 2:
        return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
    if dim is None and ord is not None:
        if A.dim() == 2:
            return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
        if A.dim() != 1:
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                               f"Got {A.dim()}D.")
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: ord {ord!r} is a matrix norm; give two dims")
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """The cross product of 3-vectors along ``dim``."""
    _tensor("cross", "input", 1, input)
    _tensor("cross", "other", 2, other)
    return _ops.linalg_cross(input, other, dim=dim)


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """The dot product of vectors along ``dim`` (other dims broadcast)."""
    _tensor("vecdot", "x", 1, x)
    _tensor("vecdot", "y", 2, y)
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as input. Got "
                           f"{type_name(x.dtype)}")
    if x.dtype is not y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                           f"{type_name(x.dtype)} and y of type {type_name(y.dtype)} instead")
    return _ops.sum(_ops.mul(x.conj() if x.dtype.is_complex else x, y), [dim])  # x conjugated, as torch's


def matmul(input: Tensor, other: Tensor) -> Tensor:
    """``strided.matmul``."""
    _tensor("matmul", "input", 1, input)
    _tensor("matmul", "other", 2, other)
    return _ops.matmul(input, other)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The diagonal (a view) of the matrices in the last two dims by default."""
    _tensor("diagonal", "A", 1, A)
    return _ops.diagonal(A, offset, dim1, dim2)


def _to_norm_dtype(op: str, x: Tensor, dtype: _dt.dtype) -> Tensor:
    """``x`` in the ``dtype=`` of a norm: complex stays complex, real stays real, and only widening (torch's
    checks; a complex input cast to a real dtype would silently lose its imaginary parts)."""
    if x.dtype.is_complex != dtype.is_complex:
        kind = "complex for complex" if x.dtype.is_complex else "real for real"
        raise RuntimeError(f"{op}: dtype should be {kind} inputs, but got {_type_word(dtype)}")
    if _dt.promote_types(x.dtype, dtype) is not dtype:
        raise RuntimeError(f"{op}: the dtype of the input ({_type_word(x.dtype)}) should be convertible without "
                           f"narrowing to the specified dtype ({_type_word(dtype)})")
    return x.to(dtype)


def _type_word(d: _dt.dtype) -> str:
    from ..backends.meta.reductions import type_name

    return type_name(d)


from ..amp.composed_functions import wrap_policies as _wrap_policies  # noqa: E402

# torch's CUDA fp32_set_opt_dtype list: without a dtype, they run with dtype=float32; on the CPU vector_norm is a
# native kernel and matrix_norm a composite (Note [Autocast around composed functions])
_wrap_policies(globals(), {"vector_norm": {"cpu": "native", "cuda": "fp32_set_opt_dtype"},
                           "matrix_norm": {"cuda": "fp32_set_opt_dtype"}})
