"""Meta functions: reductions (sum, mean, prod, amax/amin, max/min, argmax/argmin, var/std, norm,
all/any, logsumexp, cumsum, cumprod).

Note [Reduction outputs]
Reduction outputs are contiguous, with the reduced dims removed (or kept as size 1 with
``keepdim``), as torch's ``resize_reduction``. ``dim=None`` and ``dim=[]`` reduce every dim (torch
keeps that legacy meaning of ``[]`` for sum/mean/amax/var/norm). Zero-dim tensors accept ``dim`` 0
and -1. Integral and bool inputs of sum/prod/cumsum/cumprod accumulate in int64 unless ``dtype=`` says
otherwise; mean, var, std and norm need a floating input.
"""

from __future__ import annotations

import math
import warnings

from ... import dtypes as dt
from ... import return_types
from ...dispatch.library import kernel
from .common import check, new_output, reduced_shape, reduction_dims, wrap_dim

__all__ = ["type_name", "sum_dtype", "mean_dtype", "logical_dtype", "logsumexp_dtype", "reduction_output",
           "amax_output", "var_output", "norm_output"]

_TYPE_NAMES = {
    "float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
    "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
    "complex64": "ComplexFloat", "complex128": "ComplexDouble",
}


def type_name(d: dt.dtype) -> str:
    """torch's ScalarType name of a dtype (``Float``, ``Long``...), as error messages print it."""
    return _TYPE_NAMES[d.name]


def sum_dtype(self, dtype) -> dt.dtype:
    """sum/prod/cumsum: ``dtype`` if given, else int64 for integral and bool inputs."""
    if dtype is not None:
        return dt.to_dtype(dtype)
    return self.dtype if self.dtype.category >= dt.FLOATING else dt.int64


def reduction_output(self, dim, keepdim, out_dtype) -> tuple:
    """(output, reduced dims) of a reduction over ``dim`` (Note [Reduction outputs])."""
    dims = reduction_dims(dim, self.dim())
    return new_output(reduced_shape(self._sizes, dims, keepdim), out_dtype, self.device), dims


@kernel("Meta", name="sum")
def sum_(self, dim=None, keepdim=False, *, dtype=None):
    return reduction_output(self, dim, keepdim, sum_dtype(self, dtype))[0]


def mean_dtype(self, dtype) -> dt.dtype:
    """mean's result dtype: ``dtype`` or the input's, which must be floating or complex."""
    if dtype is not None:
        d = dt.to_dtype(dtype)
        check(d.category >= dt.FLOATING, lambda: "mean(): could not infer output dtype. Optional dtype must be "
                                           f"either a floating point or complex dtype. Got: {type_name(d)}")
    else:
        d = self.dtype
        check(d.category >= dt.FLOATING, lambda: "mean(): could not infer output dtype. Input dtype must be "
                                           f"either a floating point or complex dtype. Got: {type_name(d)}")
    return d


@kernel("Meta")
def mean(self, dim=None, keepdim=False, *, dtype=None):
    return reduction_output(self, dim, keepdim, mean_dtype(self, dtype))[0]


@kernel("Meta")
def prod(self, dim=None, keepdim=False, *, dtype=None):
    return reduction_output(self, dim, keepdim, sum_dtype(self, dtype))[0]


def _no_empty_full_reduction(self, fn: str) -> None:
    check(self.numel() != 0, lambda: f"{fn}(): Expected reduction dim to be specified for input.numel() == "
                                     "0. Specify the reduction dim with the 'dim' argument.")


def amax_output(self, dim, keepdim, fn: str) -> tuple:
    """(output, reduced dims) of amax/amin; zero-size reduced dims are errors (no identity)."""
    dims = reduction_dims(dim, self.dim())
    if self.numel() == 0:
        if dim is None or (not isinstance(dim, int) and len(dim) == 0):
            _no_empty_full_reduction(self, fn)
        given = (dim,) if isinstance(dim, int) else tuple(dim)
        for raw, d in zip(given, (wrap_dim(g, self.dim()) for g in given)):
            if self.dim() and self._sizes[d] == 0:
                raise IndexError(f"{fn}(): Expected reduction dim {raw} to have non-zero size.")
    return new_output(reduced_shape(self._sizes, dims, keepdim), self.dtype, self.device), dims


@kernel("Meta")
def amax(self, dim=(), keepdim=False):
    return amax_output(self, dim, keepdim, "amax")[0]


@kernel("Meta")
def amin(self, dim=(), keepdim=False):
    return amax_output(self, dim, keepdim, "amin")[0]


@kernel("Meta", name="max")
def max_(self):
    _no_empty_full_reduction(self, "max")
    return new_output((), self.dtype, self.device)


@kernel("Meta", name="min")
def min_(self):
    _no_empty_full_reduction(self, "min")
    return new_output((), self.dtype, self.device)


def _dim_with_indices(self, dim, keepdim, fn):
    d = wrap_dim(dim, self.dim())
    if self.dim() and self._sizes[d] == 0:
        raise IndexError(f"{fn}(): Expected reduction dim {d} to have non-zero size.")
    return reduced_shape(self._sizes, (d,), keepdim)


@kernel("Meta")
def max_dim(self, dim, keepdim=False):
    shape = _dim_with_indices(self, dim, keepdim, "max")
    values = new_output(shape, self.dtype, self.device)
    return return_types.max((values, new_output(shape, dt.int64, self.device)))


@kernel("Meta")
def min_dim(self, dim, keepdim=False):
    shape = _dim_with_indices(self, dim, keepdim, "min")
    values = new_output(shape, self.dtype, self.device)
    return return_types.min((values, new_output(shape, dt.int64, self.device)))


def _arg_reduction(self, dim, keepdim, fn):
    check(self.dtype is not dt.bool, lambda: f"{fn}(): does not support bool input")
    if dim is None:
        if self.numel() == 0:
            raise IndexError(f"{fn}(): Expected reduction dim to be specified for input.numel() == 0.")
        shape = (1,) * self.dim() if keepdim else ()
    else:
        shape = _dim_with_indices(self, dim, keepdim, fn)
    return new_output(shape, dt.int64, self.device)


@kernel("Meta")
def argmax(self, dim=None, keepdim=False):
    return _arg_reduction(self, dim, keepdim, "argmax")


@kernel("Meta")
def argmin(self, dim=None, keepdim=False):
    return _arg_reduction(self, dim, keepdim, "argmin")


def var_output(self, dim, correction, keepdim) -> tuple:
    """(output, reduced dims, correction as a number) of var/std."""
    check(self.dtype.is_floating_point or self.dtype.is_complex,
          "std and var only support floating point and complex dtypes")
    dims = reduction_dims(dim, self.dim())
    c = 1 if correction is None else correction
    shape = reduced_shape(self._sizes, dims, keepdim)
    n = self.numel() // max(math.prod(shape), 1) if self.numel() else 0
    if n - c <= 0:
        warnings.warn("var(): degrees of freedom is <= 0. Correction should be strictly less than the "
                      "reduction factor (input numel divided by output numel).", UserWarning, stacklevel=4)
    out_dtype = self.dtype.to_real() if self.dtype.is_complex else self.dtype  # E|z - mean|^2: real
    return new_output(shape, out_dtype, self.device), dims, c


@kernel("Meta")
def var(self, dim=None, *, correction=None, keepdim=False):
    return var_output(self, dim, correction, keepdim)[0]


@kernel("Meta")
def std(self, dim=None, *, correction=None, keepdim=False):
    return var_output(self, dim, correction, keepdim)[0]


def norm_output(self, p, dim, keepdim) -> tuple:
    """(output, p as a float, reduced dims) of norm, after linalg.vector_norm's checks."""
    check(self.dtype.is_floating_point or self.dtype.is_complex,
          lambda: "linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                  f"{type_name(self.dtype)}")
    p = 2.0 if p is None else p
    dims = reduction_dims(dim, self.dim())
    if self.numel() == 0 and (p < 0 or p == math.inf):
        word = "inf" if p == math.inf else ("-inf" if p == -math.inf else _num(p))
        if dim is None or (not isinstance(dim, int) and len(dim) == 0):
            raise RuntimeError(f"linalg.vector_norm cannot compute the {word} norm on an empty tensor "
                               "because the operation does not have an identity")
        for d in dims:
            check(self.dim() == 0 or self._sizes[d] != 0,
                  lambda d=d: f"linalg.vector_norm cannot compute the {word} norm on the dimension {d}"
                              "because this dimension is empty and the operation does not have an identity")
    out_dtype = self.dtype.to_real() if self.dtype.is_complex else self.dtype  # the norm of the moduli
    return new_output(reduced_shape(self._sizes, dims, keepdim), out_dtype, self.device), float(p), dims


def _num(p) -> str:
    return str(int(p)) if float(p).is_integer() else str(p)


@kernel("Meta")
def norm(self, p=2, dim=None, keepdim=False):
    return norm_output(self, p, dim, keepdim)[0]


def logical_dtype(self) -> dt.dtype:
    """all/any results: uint8 for uint8 inputs (as torch), else bool."""
    return dt.uint8 if self.dtype is dt.uint8 else dt.bool


@kernel("Meta", name="all")
def all_(self, dim=None, keepdim=False):
    return reduction_output(self, dim, keepdim, logical_dtype(self))[0]


@kernel("Meta", name="any")
def any_(self, dim=None, keepdim=False):
    return reduction_output(self, dim, keepdim, logical_dtype(self))[0]


def logsumexp_dtype(self) -> dt.dtype:
    """Floating and complex inputs keep their dtype; integral ones give the default float dtype."""
    return self.dtype if self.dtype.is_floating_point or self.dtype.is_complex else dt.get_default_dtype()


@kernel("Meta")
def logsumexp(self, dim, keepdim=False):
    return reduction_output(self, dim, keepdim, logsumexp_dtype(self))[0]


@kernel("Meta")
def cumsum(self, dim, *, dtype=None, name: str = "cumsum"):
    wrap_dim(dim, self.dim())
    d = sum_dtype(self, dtype)
    if d is dt.bool and self.dim():  # a bool result (dtype=bool): torch's scan kernels have none (0-dim: a copy)
        kernel = f"{name}_cuda" if self.device.type == "cuda" else f"{name}_out_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    return new_output(self._sizes, d, self.device)


@kernel("Meta")
def cumprod(self, dim, *, dtype=None):
    return cumsum(self, dim, dtype=dtype, name="cumprod")


def cummaxmin(self, dim, name: str):
    """(values like self, int64 indices), for every dtype."""
    wrap_dim(dim, self.dim())
    return getattr(return_types, name)((new_output(self._sizes, self.dtype, self.device),
                                        new_output(self._sizes, dt.int64, self.device)))


@kernel("Meta")
def cummax(self, dim):
    return cummaxmin(self, dim, "cummax")


@kernel("Meta")
def cummin(self, dim):
    return cummaxmin(self, dim, "cummin")


@kernel("Meta")
def logcumsumexp(self, dim):
    """Same dtype as the input, which must be floating or complex (torch's CPU error otherwise)."""
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for '{type_name(self.dtype)}'")
    wrap_dim(dim, self.dim())
    return new_output(self._sizes, self.dtype, self.device)
