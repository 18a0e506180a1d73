"""CPU kernels: mm, bmm, addmm, baddbmm through NumPy's matmul (BLAS for float32/float64).

Note [CPU GEMM]
float16/bfloat16 operands are multiplied in float32 and rounded once (Note [CPU compute dtype]).
Integer products use NumPy's integer matmul, which wraps on overflow like torch's CPU GEMM.
``beta`` and ``alpha`` follow BLAS: ``beta == 0`` ignores ``self`` (NaN included) and
``alpha == 0`` ignores the product; for integral results both are truncated to ints first, as
torch converts the Scalars to the tensor's type.
"""

from __future__ import annotations

import numpy as np

from ...dispatch.library import kernel
from ..meta import linalg as meta
from ..meta.common import new_output
from ..meta.reductions import type_name
from .common import as_numpy, compute_dtype, store
from .pointwise import quiet

__all__ = []


# Note [BLAS-readable operands]
# np.matmul hands a matrix to BLAS only when its rows or its columns are contiguous; any other layout -- above all an
# expanded gradient with stride 0, as ``y.sum().backward()`` gives every GEMM of a backward -- takes NumPy's own
# loop, many times slower (a conv2d input gradient: 43-59 ms against 10 for the same GEMM on a copy). Such operands
# are copied contiguous first, a pass over one matrix.
def _blas_readable(a: np.ndarray) -> bool:
    if a.ndim < 2 or a.dtype.kind not in "fc":
        return True
    (rows, cols), (s_rows, s_cols), item = a.shape[-2:], a.strides[-2:], a.itemsize
    if s_cols == item and s_rows % item == 0 and s_rows >= cols * item:
        return True
    return s_rows == item and s_cols % item == 0 and s_cols >= rows * item


def _operand(t) -> np.ndarray:
    a = as_numpy(t)
    cd = compute_dtype(t.dtype)
    a = a if a.dtype == cd else a.astype(cd)
    return a if _blas_readable(a) else np.ascontiguousarray(a)  # Note [BLAS-readable operands]


def _matmul(a, b, out):
    if out.numel() == 0:
        return None
    return quiet(np.matmul, _operand(a), _operand(b))  # NaN / inf products warn in NumPy, never in torch


@kernel("CPU")
def mm(self, mat2):
    out = meta.mm(self, mat2)
    product = _matmul(self, mat2, out)
    return out if product is None else store(out, product)


@kernel("CPU")
def bmm(self, mat2):
    out = meta.bmm(self, mat2)
    product = _matmul(self, mat2, out)
    return out if product is None else store(out, product)


def _typed(value, array):
    """A scalar of ``array``'s dtype (negative ints wrap into unsigned types, as in C++)."""
    if array.dtype.kind == "u":
        value %= 1 << (8 * array.dtype.itemsize)
    return array.dtype.type(value)


def _add_scaled(self, product, out, beta, alpha):
    if out.numel() == 0:
        return out
    beta, alpha = meta.gemm_scalar(beta, out.dtype), meta.gemm_scalar(alpha, out.dtype)
    if alpha == 0:
        result = np.zeros(out._sizes, compute_dtype(out.dtype))
    else:
        result = product if alpha == 1 else product * _typed(alpha, product)
    if beta != 0:
        s = _operand(self)
        result = result + (s if beta == 1 else s * _typed(beta, s))
    return store(out, result)


@kernel("CPU")
def addmm(self, mat1, mat2, *, beta=1, alpha=1):
    out = new_output(meta.addmm_output(self, mat1, mat2, beta, alpha), self.dtype, self.device)
    return _add_scaled(self, _matmul(mat1, mat2, out), out, beta, alpha)


@kernel("CPU")
def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
    out = new_output(meta.baddbmm_output(self, batch1, batch2, beta, alpha), self.dtype, self.device)
    return _add_scaled(self, _matmul(batch1, batch2, out), out, beta, alpha)


@kernel("CPU")
def _addmm_activation(self, mat1, mat2, *, beta=1, alpha=1, use_gelu=False):
    """addmm, then relu or (exact, as torch's CPU kernel) gelu on the rounded result."""
    out = addmm(self, mat1, mat2, beta=beta, alpha=alpha)
    if out.numel() == 0:
        return out
    if not use_gelu:
        r = as_numpy(out)
        np.maximum(r, r.dtype.type(0), out=r)
        return out
    if not out.dtype.is_floating_point:
        raise NotImplementedError(f"\"GeluKernelImpl\" not implemented for '{type_name(out.dtype)}'")
    from .pointwise_unary import _gelu

    return store(out, _gelu(_operand(out), "none"))
