"""Meta functions: mm, bmm, addmm, baddbmm.

Checks run in torch's order (meta function first, then the CPU kernel's dtype checks), so each
wrong call raises the error torch raises first. Outputs are contiguous, in the operands' dtype.
"""

from __future__ import annotations

import math

import numpy as np

from ... import dtypes as dt
from ...dispatch.library import kernel
from .common import check, new_output
from .reductions import type_name

__all__ = ["cpp_type_name", "expand_size", "gemm_scalar", "addmm_output", "baddbmm_output"]

_CPP_NAMES = {
    "float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
    "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
    "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
}


def cpp_type_name(d: dt.dtype) -> str:
    """The C++ type name torch prints for ``tensor.dtype()`` in some messages (``float``, ``long int``)."""
    return _CPP_NAMES[d.name]


def _not_implemented(name: str, d: dt.dtype, shape, k: int) -> None:
    """Bool GEMMs raise (as torch's CPU kernels) unless the result is empty or all zeros (k == 0)."""
    if d is dt.bool and k and 0 not in shape:
        raise NotImplementedError(f"\"{name}\" not implemented for '{type_name(d)}'")


def expand_size(t, sizes) -> None:
    """torch's ``expand_size`` checks: can ``t`` broadcast to exactly ``sizes``?"""
    sizes = tuple(sizes)
    if t.dim() > len(sizes):
        raise RuntimeError(f"expand({_tensor_type(t)}{{{list(t._sizes)}}}, size={list(sizes)}): the number "
                           f"of sizes provided ({len(sizes)}) must be greater or equal to the number of "
                           f"dimensions in the tensor ({t.dim()})")
    offset = len(sizes) - t.dim()
    for i, s in enumerate(t._sizes):
        target = sizes[offset + i]
        if s != target and s != 1:
            raise RuntimeError(f"The expanded size of the tensor ({target}) must match the existing size "
                               f"({s}) at non-singleton dimension {offset + i}.  Target sizes: "
                               f"{list(sizes)}.  Tensor sizes: {list(t._sizes)}")


_SCALAR_TYPES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t"}
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def gemm_scalar(value, d: dt.dtype):
    """``beta``/``alpha`` as a value of dtype ``d``, with torch's overflow check (``Scalar.to<T>``).

    Half types take a float32 scalar; floats truncate towards zero for integral results; Python
    ints may wrap into unsigned types (C++'s two's complement conversion).
    """
    if d.is_complex:
        return complex(value)
    if isinstance(value, complex):  # c10's overflows(): complex -> real overflows when the imaginary part is not 0
        if value.imag != 0:
            name = ("double" if d is dt.float64 else "float" if d.is_floating_point
                    else _SCALAR_TYPES.get(d.name, d.name))
            raise RuntimeError(f"value cannot be converted to type {name} without overflow")
        value = value.real
    if d.is_floating_point:
        v = float(value)
        if d is not dt.float64 and math.isfinite(v) and abs(v) > _FLOAT32_MAX:
            raise RuntimeError("value cannot be converted to type float without overflow")
        return v
    if d is dt.bool:
        return bool(value)
    info = np.iinfo(d.numpy_dtype)
    if isinstance(value, float):
        ok = math.isfinite(value) and info.min <= value <= info.max
    else:
        value = int(value)
        ok = -info.max <= value <= info.max if info.min == 0 else info.min <= value <= info.max
    if not ok:
        raise RuntimeError(f"value cannot be converted to type {_SCALAR_TYPES[d.name]} without overflow")
    return int(value)


def _tensor_type(t) -> str:
    return f"torch.{type_name(t.dtype)}Tensor"


def _matrix_product_shape(a, b, first: str) -> tuple:
    check(a._sizes[1] == b._sizes[0],
          lambda: f"{first} and mat2 shapes cannot be multiplied ({a._sizes[0]}x{a._sizes[1]} and "
                  f"{b._sizes[0]}x{b._sizes[1]})")
    return (a._sizes[0], b._sizes[1])


@kernel("Meta")
def mm(self, mat2):
    check(self.dim() == 2, "self must be a matrix")
    check(mat2.dim() == 2, "mat2 must be a matrix")
    check(self.dtype is mat2.dtype, lambda: f"expected m1 and m2 to have the same dtype, but got: "
                                            f"{cpp_type_name(self.dtype)} != {cpp_type_name(mat2.dtype)}")
    shape = _matrix_product_shape(self, mat2, "mat1")
    _not_implemented("addmm_impl_cpu_", self.dtype, shape, self._sizes[1])
    return new_output(shape, self.dtype, self.device)


def _batch_shape(batch1, batch2) -> tuple:
    check(batch1.dim() == 3, "batch1 must be a 3D tensor")
    check(batch2.dim() == 3, "batch2 must be a 3D tensor")
    bs, n, k = batch1._sizes
    check(batch2._sizes[0] == bs and batch2._sizes[1] == k,
          lambda: f"Expected size for first two dimensions of batch2 tensor to be: [{bs}, {k}] but got: "
                  f"[{batch2._sizes[0]}, {batch2._sizes[1]}].")
    return (bs, n, batch2._sizes[2])


def _check_batch_dtypes(batch1, batch2, shape, kernel_name) -> None:
    _not_implemented(kernel_name, batch1.dtype, shape, batch1._sizes[2])
    check(batch2.dtype is batch1.dtype,
          lambda: f"expected scalar type {type_name(batch1.dtype)} but found {type_name(batch2.dtype)}")


@kernel("Meta")
def bmm(self, mat2):
    shape = _batch_shape(self, mat2)
    _check_batch_dtypes(self, mat2, shape, "bmm")
    return new_output(shape, self.dtype, self.device)


def addmm_output(self, mat1, mat2, beta=1, alpha=1) -> tuple:
    """Validate addmm; returns the output shape."""
    check(self.dtype is mat2.dtype, lambda: f"self and mat2 must have the same dtype, but got "
                                            f"{type_name(self.dtype)} and {type_name(mat2.dtype)}")
    check(mat1.dtype is mat2.dtype, lambda: f"mat1 and mat2 must have the same dtype, but got "
                                            f"{type_name(mat1.dtype)} and {type_name(mat2.dtype)}")
    check(mat1.dim() == 2, lambda: f"mat1 must be a matrix, got {mat1.dim()}-D tensor")
    check(mat2.dim() == 2, lambda: f"mat2 must be a matrix, got {mat2.dim()}-D tensor")
    shape = _matrix_product_shape(mat1, mat2, "mat1")
    expand_size(self, shape)
    _not_implemented("addmm_impl_cpu_", self.dtype, shape, mat1._sizes[1])
    gemm_scalar(beta, self.dtype), gemm_scalar(alpha, self.dtype)
    return shape


@kernel("Meta")
def addmm(self, mat1, mat2, *, beta=1, alpha=1):
    return new_output(addmm_output(self, mat1, mat2, beta, alpha), self.dtype, self.device)


def baddbmm_output(self, batch1, batch2, beta=1, alpha=1) -> tuple:
    """Validate baddbmm; returns the output shape."""
    def size(t, d):
        if d >= t.dim():
            n = t.dim()
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                             f"but got {d})")
        return t._sizes[d]

    expand_size(self, (size(batch1, 0), size(batch1, 1), size(batch2, 2)))
    check(self.dtype is batch1.dtype,
          lambda: f"Input dtypes must be the same, got: input {cpp_type_name(self.dtype)}, batch1: "
                  f"{cpp_type_name(batch1.dtype)}, batch2: {cpp_type_name(batch2.dtype)}")
    shape = _batch_shape(batch1, batch2)
    _check_batch_dtypes(batch1, batch2, shape, "baddbmm")
    gemm_scalar(beta, self.dtype), gemm_scalar(alpha, self.dtype)
    return shape


@kernel("Meta")
def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
    return new_output(baddbmm_output(self, batch1, batch2, beta, alpha), self.dtype, self.device)


@kernel("Meta")
def _addmm_activation(self, mat1, mat2, *, beta=1, alpha=1, use_gelu=False):
    """addmm's checks and output (torch's meta runs ADDMM_META for both)."""
    return new_output(addmm_output(self, mat1, mat2, beta, alpha), self.dtype, self.device)
