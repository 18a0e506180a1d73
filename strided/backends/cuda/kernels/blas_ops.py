"""CUDA kernels for mm, addmm, bmm, baddbmm and _addmm_activation: one cuBLASLt call each.

Validation and output allocation are the Meta functions'; ``backends/cuda/blas.py`` (the only
nvmath importer) is imported on the first GEMM, so a machine without nvmath-python still loads
every other CUDA kernel.

Note [CUDA GEMM lowering]
As torch's ``addmm_out_cuda_impl``: an empty result returns at once; integer and bool dtypes
raise ``"addmm_cuda" not implemented for 'Long'`` (``"bmm_cuda"``/``"baddbmm_cuda"``) when there
is a product to compute.  ``self`` of addmm becomes the cuBLASLt BIAS epilogue when it is a
contiguous 1-D row of length N and ``beta == 1`` (torch's Lt condition); otherwise it is C with
``beta`` (read in place when it already has out's layout, else expanded into ``out`` first).
``_addmm_activation`` fuses relu or gelu as the RELU/GELU epilogue — cuBLASLt's GELU is the tanh
approximation, which is what torch's CUDA kernel computes (its CPU kernel uses exact gelu).
An empty inner dimension (or ``alpha == 0``) still runs the fused GEMM, with one zero column so
``beta``, bias and activation are applied in one place and NaNs in ignored operands never leak.
complex64 / complex128 run the same way (cuBLASLt's complex types, complex alpha and beta; Note [Complex GEMM]
in blas.py), without the bias epilogue.
"""

from __future__ import annotations

from .... import dtypes as dt
from ....dispatch.keys import DispatchKey
from ....dispatch.library import get_op, impl, kernel
from ....ops import bound as ops
from ...meta import linalg as meta
from ...meta.common import new_output
from ...meta.reductions import type_name
from ..copies import copy_ as _copy

__all__ = []

_FLOATING = frozenset((dt.float16, dt.bfloat16, dt.float32, dt.float64, dt.complex64, dt.complex128))
_blas = None


def _gemm():
    global _blas
    if _blas is None:
        try:
            from .. import blas
        except ImportError as e:
            raise RuntimeError(f"CUDA matrix products need nvmath-python (pip install 'strided[cuda]'): "
                               f"{type(e).__name__}: {e}") from None
        _blas = blas
    return _blas


def _check_dtype(name: str, d: dt.dtype) -> None:
    if d not in _FLOATING:
        raise NotImplementedError(f"\"{name}\" not implemented for '{type_name(d)}'")


def _zeros_like_k(a, b):
    """(a, b) replaced by one zero column / row: the product is exactly 0, NaNs ignored."""
    za = ops.zeros(a._sizes[:-1] + (1,), dtype=a.dtype, device=a.device)
    zb = ops.zeros(b._sizes[:-2] + (1, b._sizes[-1]), dtype=b.dtype, device=b.device)
    return za, zb


def _run(name, out, a, b, alpha, beta, self, act, allow_bias):
    """Fill ``out`` with act(alpha * a @ b + beta * self) (self broadcast to out)."""
    d = out.dtype
    beta = meta.gemm_scalar(beta, d)
    alpha = meta.gemm_scalar(alpha, d)
    if a._sizes[-1] == 0 or alpha == 0:
        a, b = _zeros_like_k(a, b)
        alpha = 0.0
    blas = _gemm()
    n = out._sizes[-1]
    if (allow_bias and not d.is_complex and beta == 1 and self.dim() == 1 and self._sizes[0] == n
            and self._strides[0] == 1 and self.data_ptr() % 16 == 0 and n > 1 and out._sizes[0] > 1):
        try:
            blas.gemm(name, out, a, b, alpha=alpha, bias=self, act=act)
            return out
        except blas.NoAlgorithm:
            pass
    if beta == 0:
        c = None
    elif self._sizes == out._sizes and self.is_contiguous():
        c = self
    else:
        c = _copy(out, self)
    try:
        blas.gemm(name, out, a, b, alpha=alpha, beta=beta, c=c, act=act)
    except blas.NoAlgorithm:
        if act is None:
            raise
        blas.gemm(name, out, a, b, alpha=alpha, beta=beta, c=c)
        if act == "relu":
            ops.relu_(out)
        else:
            _copy(out, ops.gelu(out, approximate="tanh"))
    return out


def _integral(out, a, self, beta):
    """Integer dtypes: only the no-product cases torch also computes (k == 0): beta * self."""
    if beta == 0 or self is None:
        return ops.fill_(out, 0)
    _copy(out, self)
    if beta != 1:
        ops.mul_(out, meta.gemm_scalar(beta, out.dtype))
    return out


@kernel("CUDA")
def mm(self, mat2):
    out = meta.mm(self, mat2)
    if out.numel() == 0:
        return out
    if out.dtype not in _FLOATING:
        if self._sizes[1] == 0:
            return _integral(out, self, None, 0)
        _check_dtype("addmm_cuda", out.dtype)
    return _run("mm", out, self, mat2, 1, 0, out, None, False)


@kernel("CUDA")
def bmm(self, mat2):
    out = meta.bmm(self, mat2)
    if out.numel() == 0:
        return out
    if out.dtype not in _FLOATING:
        if self._sizes[2] == 0:
            return _integral(out, self, None, 0)
        _check_dtype("bmm_cuda", out.dtype)
    return _run("bmm", out, self, mat2, 1, 0, out, None, False)


def _addmm(name, self, mat1, mat2, beta, alpha, act):
    out = new_output(meta.addmm_output(self, mat1, mat2, beta, alpha), self.dtype, self.device)
    if out.numel() == 0:
        return out
    if out.dtype not in _FLOATING:
        if mat1._sizes[1] == 0:
            out = _integral(out, mat1, self, meta.gemm_scalar(beta, out.dtype))
            return ops.relu_(out) if act == "relu" else out
        _check_dtype("addmm_cuda", out.dtype)
    return _run(name, out, mat1, mat2, alpha, beta, self, act, True)


@kernel("CUDA")
def addmm(self, mat1, mat2, *, beta=1, alpha=1):
    return _addmm("addmm", self, mat1, mat2, beta, alpha, None)


@kernel("CUDA")
def _addmm_activation(self, mat1, mat2, *, beta=1, alpha=1, use_gelu=False):
    return _addmm("_addmm_activation", self, mat1, mat2, beta, alpha, "gelu" if use_gelu else "relu")


@kernel("CUDA")
def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
    out = new_output(meta.baddbmm_output(self, batch1, batch2, beta, alpha), self.dtype, self.device)
    if out.numel() == 0:
        return out
    if out.dtype not in _FLOATING:
        if batch1._sizes[2] == 0:
            return _integral(out, batch1, self, meta.gemm_scalar(beta, out.dtype))
        _check_dtype("baddbmm_cuda", out.dtype)
    return _run("baddbmm", out, batch1, batch2, alpha, beta, self, None, False)


# Note [In-place addmm]
# ``addmm_`` is autogen'd (a new addmm result copied into self): for a (C, D) accumulator updated chunk by
# chunk, as linear_cross_entropy's weight gradient, that is a second accumulator-sized buffer and twice
# the traffic per update. cuBLASLt accumulates in place (C = D), so a contiguous floating ``self`` of the
# result's shape and dtype that shares no memory with the factors is updated directly; anything else
# takes the autogen'd path (with its errors).
_ADDMM_INPLACE = get_op("aten::addmm_")
_addmm_fallback = []


def _addmm_inplace(self, mat1, mat2, *, beta=1, alpha=1):
    if (self.dtype in _FLOATING and self.dim() == 2 and self.is_contiguous() and self.numel()
            and self._storage is not mat1._storage and self._storage is not mat2._storage
            and meta.addmm_output(self, mat1, mat2, beta, alpha) == self._sizes):
        return _run("addmm_", self, mat1, mat2, alpha, beta, self, None, False)
    if not _addmm_fallback:
        _addmm_fallback.append(_ADDMM_INPLACE.kernel(DispatchKey.CompositeExplicitAutograd))
    out = _addmm_fallback[0](self, mat1, mat2, beta=beta, alpha=alpha)
    self._storage._version -= 1  # its copy_ counted the write, and so does this kernel's wrapper
    return out


_addmm_inplace.__name__ = _addmm_inplace.__qualname__ = "addmm_"
impl("aten::addmm_", "CUDA")(_addmm_inplace)
