"""CPU kernels for pointwise binary and ternary ops (NumPy, half types computed in float32).

Each kernel asks the Meta function for its output (validation, shape, dtype, strides), then
computes with NumPy ufuncs writing straight into the output's memory where it can.

Note [Floating-point warnings]
torch never warns about a division by zero, an overflow or ``inf - inf``; NumPy does, through
RuntimeWarnings. Kernels that can hit those compute under ``quiet``, which switches NumPy's error
state off for the call. ``np.errstate`` costs a few microseconds per use, so on NumPy 2 ``quiet``
sets NumPy's error-state context variable directly (what ``errstate`` does inside); it lives in
``common.py``, whose casts use it too (Note [Casts as torch rounds them]).

Note [Scalar operands]
A Python scalar operand is converted to the compute dtype with C casting (``uint8 + -1`` wraps to
255 as in torch, where NumPy 2 would raise). Comparisons first round the scalar to the common
dtype (torch compares ``half_tensor == 0.1`` in half), and so do half-type ``add``, ``sub``, ``remainder`` and
``fmod`` (Note [add and sub as torch's CPU kernels round]); ``mul`` and ``div`` keep it in the compute dtype
(torch's ``opmath`` scalar, ``original_scalar_value``).
"""

from __future__ import annotations

import functools

import numpy as np

from ... import dtypes as dt
from ...dispatch.library import kernel
from ...tensor import Tensor
from ..meta import pointwise as meta
from . import complex_math
from .common import as_numpy, compute_dtype, operand, quiet, store

__all__ = ["quiet", "scalar_operand", "arg", "rounded_arg", "apply_ufunc", "store_result"]


def scalar_operand(x, d: dt.dtype, exact: bool = False):
    """A Python scalar as a NumPy scalar of ``d``'s compute dtype (Note [Scalar operands])."""
    cd = compute_dtype(d)
    if exact and cd is not d.numpy_dtype:
        return np.array(x).astype(d.numpy_dtype).astype(cd)[()]
    try:
        return cd.type(x)
    except (OverflowError, ValueError):
        return np.array(x).astype(cd)[()]


def arg(x, d: dt.dtype):
    """A tensor or scalar operand in the compute dtype of ``d``."""
    if isinstance(x, Tensor):
        return operand(x, d)
    return None if x is None else scalar_operand(x, d)


def apply_ufunc(ufunc, out: Tensor, *args) -> Tensor:
    """Run ``ufunc(*args)`` into ``out``'s memory (cast to its dtype on the way)."""
    dst = as_numpy(out)
    if dst.size:
        if out.dtype is dt.float16:  # float32 results past 65504 round to inf: quietly, as in torch
            quiet(functools.partial(ufunc, out=dst, casting="unsafe"), *args)
        else:
            ufunc(*args, out=dst, casting="unsafe")
    return out


def store_result(out: Tensor, value) -> Tensor:
    """``store`` for kernel results (float16 overflow to inf is not a warning; see apply_ufunc)."""
    return quiet(store, out, value) if out.dtype is dt.float16 else store(out, value)


def _zero_division_check(b) -> None:
    if np.any(b == 0):
        raise RuntimeError("ZeroDivisionError")


# ---------------------------------------------------------------------------- arithmetic
# Note [add and sub as torch's CPU kernels round]
# Measured against torch's CPU kernels (x86): float16 / bfloat16 ``add`` / ``sub`` of a Python scalar or a 0-dim
# tensor of another dtype round that operand to the half type first (TensorIterator casts it to the common dtype;
# ``mul`` and ``div`` keep it in float, Note [Scalar operands]), and so is ``alpha`` (torch's ufunc kernel reads it
# as ``scalar_t``); their float32 product is then exact, so the float32 sum is torch's fmadd: bit for bit (a few
# elements at torch's thread-chunk edges take its scalar path, which rounds ``alpha * other`` to the half type).
# float32 ``add`` / ``sub`` with ``alpha != 1`` and ``addcmul`` are one fmadd in torch (compiled with FMA
# contraction) and two roundings here: emulating the fused form in float64 matched torch bit for bit but cost
# 3.5-5x on 1M elements (Adam's CPU step +54%, SGD's +68%), so results may differ from torch's in the last bit.
_HALF = (dt.float16, dt.bfloat16)


def rounded_arg(x, d: dt.dtype):
    """``arg(x, d)``, a Python scalar or a 0-dim tensor of another dtype first rounded to a half type ``d`` (as
    torch's TensorIterator casts it to the common dtype: Note [add and sub as torch's CPU kernels round])."""
    b = arg(x, d)
    if d in _HALF and (not isinstance(x, Tensor) or x.dtype is not d):
        b = np.asarray(b).astype(d.numpy_dtype).astype(np.float32)[()]
    return b


def _with_alpha(ufunc, out, self, other, alpha):
    """``out = ufunc(self, alpha * other)``, the shape of add and sub (alpha in the result dtype)."""
    d = out.dtype
    if alpha == 1:
        b = rounded_arg(other, d) if d in _HALF else arg(other, d)  # no extra call on the common path
    elif d in _HALF:  # alpha (and a scalar other) as the half type: their float32 product is exact, so the sum is fmadd
        b = quiet(np.multiply, rounded_arg(other, d), scalar_operand(alpha, d, exact=True))
    else:
        b = quiet(np.multiply, arg(other, d), scalar_operand(alpha, d))
    return quiet(apply_ufunc, ufunc, out, operand(self, d), b)


@kernel("CPU")
def add(self, other, alpha=1):
    return _with_alpha(np.add, meta.add(self, other, alpha), self, other, alpha)


@kernel("CPU")
def sub(self, other, alpha=1):
    return _with_alpha(np.subtract, meta.sub(self, other, alpha), self, other, alpha)


@kernel("CPU")
def mul(self, other):
    out = meta.mul(self, other)
    d = out.dtype
    return quiet(apply_ufunc, np.multiply, out, operand(self, d), arg(other, d))


def _trunc_divide(a, b):
    """Integer division rounding toward zero (NumPy's // rounds toward -inf)."""
    q, r = np.divmod(a, b)
    if np.dtype(q.dtype).kind == "u":
        return q
    return q + ((r != 0) & ((np.asarray(a) < 0) != (np.asarray(b) < 0)))


def _div(out, a, b, rounding_mode):
    d = out.dtype
    if rounding_mode is None:
        return apply_ufunc(np.true_divide, out, a, b)
    if d.is_floating_point:
        if rounding_mode == "floor":
            return apply_ufunc(np.floor_divide, out, a, b)
        return store_result(out, np.trunc(np.true_divide(a, b)))
    _zero_division_check(b)
    if rounding_mode == "floor":
        return apply_ufunc(np.floor_divide, out, a, b)
    return store_result(out, _trunc_divide(a, b))


@kernel("CPU")
def div(self, other, *, rounding_mode=None):
    out = meta.div(self, other, rounding_mode=rounding_mode)
    d = out.dtype
    return quiet(_div, out, operand(self, d), arg(other, d), rounding_mode)


@kernel("CPU")
def floor_divide(self, other):
    out = meta.floor_divide(self, other)
    d = out.dtype
    return quiet(_div, out, operand(self, d), arg(other, d), "floor")


@kernel("CPU")
def remainder(self, other):
    out = meta.remainder(self, other)
    d = out.dtype
    b = rounded_arg(other, d)  # torch's kernel reads the divisor as the half type
    if not d.is_floating_point:
        _zero_division_check(b)
    a = operand(self, d)
    quiet(apply_ufunc, np.remainder, out, a, b)
    if d.is_floating_point:  # a zero takes the dividend's sign, as torch's fmod-based kernel (NumPy: the divisor's)
        dst = as_numpy(out)
        zero = dst == 0
        if zero.any():
            np.copysign(dst, a, out=dst, where=zero, casting="unsafe")
    return out


def _int_pow(a, b):
    """Integer power with torch's rule for negative exponents: 1, (-1)**b, or 0."""
    b = np.asarray(b)
    if b.dtype.kind == "u" or not np.any(b < 0):
        return np.power(a, b)
    negative = b < 0
    r = np.power(a, np.where(negative, 0, b))
    odd = (b & 1).astype(bool)
    small = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0))
    return np.where(negative, small, r)


def _pow(out, a, b):
    d = out.dtype
    if d.is_floating_point:
        return apply_ufunc(np.power, out, a, b)
    if d.is_complex:  # Note [Complex math ops]
        return store_result(out, complex_math.pow(a, b))
    if d is dt.bool:  # bool ** bool scalar (torch allows it): compute on 0/1 integers
        return store_result(out, np.power(np.asarray(a, np.int8), np.int8(b)))
    return store_result(out, _int_pow(a, b))


@kernel("CPU")
def pow(self, exponent):  # noqa: A001 - the op's name
    out = meta.pow(self, exponent)
    d = out.dtype
    return quiet(_pow, out, operand(self, d), arg(exponent, d))


@kernel("CPU")
def pow_scalar_base(self, exponent):
    out = meta.pow_scalar_base(self, exponent)
    d = out.dtype
    return quiet(_pow, out, scalar_operand(self, d), operand(exponent, d))


@kernel("CPU")
def maximum(self, other):
    out = meta.maximum(self, other)
    d = out.dtype
    return apply_ufunc(np.maximum, out, operand(self, d), operand(other, d))


@kernel("CPU")
def minimum(self, other):
    out = meta.minimum(self, other)
    d = out.dtype
    return apply_ufunc(np.minimum, out, operand(self, d), operand(other, d))


# ---------------------------------------------------------------------------- comparisons, logical
def _comparison(name, ufunc):
    def compare(self, other):
        out = meta.comparison(self, other, name)
        d = dt.result_type(self, other)
        b = operand(other, d) if isinstance(other, Tensor) else scalar_operand(other, d, exact=True)
        return apply_ufunc(ufunc, out, operand(self, d), b)

    compare.__name__ = compare.__qualname__ = name
    return kernel("CPU")(compare)


eq = _comparison("eq", np.equal)
ne = _comparison("ne", np.not_equal)
lt = _comparison("lt", np.less)
le = _comparison("le", np.less_equal)
gt = _comparison("gt", np.greater)
ge = _comparison("ge", np.greater_equal)


def _truth(t: Tensor) -> np.ndarray:
    a = as_numpy(t)
    return a if t.dtype is dt.bool else a.astype(bool)


def _logical(name, ufunc):
    def logical(self, other):
        out = meta.comparison(self, other)
        return apply_ufunc(ufunc, out, _truth(self), _truth(other))

    logical.__name__ = logical.__qualname__ = name
    return kernel("CPU")(logical)


logical_and = _logical("logical_and", np.logical_and)
logical_or = _logical("logical_or", np.logical_or)
logical_xor = _logical("logical_xor", np.logical_xor)


@kernel("CPU")
def logical_not(self):
    return apply_ufunc(np.logical_not, meta.logical_not(self), _truth(self))


# ---------------------------------------------------------------------------- ternary
@kernel("CPU")
def where(condition, self, other):
    out = meta.where(condition, self, other)
    d = out.dtype
    return store_result(out, np.where(_truth(condition), arg(self, d), arg(other, d)))


@kernel("CPU")
def clamp(self, min=None, max=None):  # noqa: A002 - the schema's names
    out = meta.clamp(self, min, max)
    d = out.dtype
    r = operand(self, d)
    if min is not None:
        r = np.maximum(r, arg(min, d))
    if max is not None:
        r = np.minimum(r, arg(max, d))
    return store_result(out, r)


# Note [Lerp as torch's fmadd]
# torch's CPU lerp is one fused multiply-add, fmadd(coeff, end - self, base) with (coeff, base) = (w, self) for
# |w| < 0.5, else (w - 1, end); here it is a multiply and an add, so results may differ from torch's in the last bit
# (and overflow where the fused form does not, e.g. weight -0.5 between 1e-40 and -3e38). Emulating the fused form
# in float64 matched torch bit for bit but made lerp 2.5x slower on 256K elements (Adam's CPU step +25%).


def _lerp(a, e, w):
    # torch's formula: exact at weight 0 and 1, and monotone (ATen/native/Lerp.h)
    diff = e - a  # Note [Lerp as torch's fmadd]
    if np.ndim(w) == 0 and not isinstance(w, np.ndarray):
        return a + w * diff if abs(w) < 0.5 else e - diff * (1 - w)
    small = np.abs(w) < 0.5
    if np.size(w) < np.size(diff) or 0 in np.shape(w) or 0 in getattr(w, "strides", (1,)):
        # a broadcast weight (bilinear interpolation's): e - diff (1 - w) is e + diff (w - 1) exactly (1 - w and
        # w - 1 are exact negations), so one expression serves both branches and the selects run on the small
        # weight and the base (8x faster than computing both full results)
        return np.where(small, a, e) + diff * np.where(small, w, w - 1)
    return np.where(small, a + w * diff, e - diff * (1 - w))


@kernel("CPU")
def lerp(self, end, weight):
    out = meta.lerp(self, end, weight)
    d = out.dtype
    return store_result(out, quiet(_lerp, operand(self, d), operand(end, d), arg(weight, d)))


def _addcmul(a, t1, t2, value):
    r = t1 * t2
    return a + (r if value == 1 else value * r)


def _addcdiv(a, t1, t2, value):
    return a + (t1 if value == 1 else value * t1) / t2  # torch: self + value * t1 / t2


@kernel("CPU")
def addcmul(self, tensor1, tensor2, *, value=1):
    out = meta.addcmul(self, tensor1, tensor2, value=value)
    d = out.dtype
    r = quiet(_addcmul, operand(self, d), operand(tensor1, d), operand(tensor2, d), scalar_operand(value, d))
    return store_result(out, r)


@kernel("CPU")
def addcdiv(self, tensor1, tensor2, *, value=1):
    out = meta.addcdiv(self, tensor1, tensor2, value=value)
    d = out.dtype
    r = quiet(_addcdiv, operand(self, d), operand(tensor1, d), operand(tensor2, d), scalar_operand(value, d))
    return store_result(out, r)


@kernel("CPU")
def masked_fill(self, mask, value):
    out = meta.masked_fill(self, mask, value)
    dst = as_numpy(out)
    if not dst.size:
        return out
    np.copyto(dst, as_numpy(self), casting="unsafe")
    v = as_numpy(value) if isinstance(value, Tensor) else np.array(value)
    if v.dtype.kind == "c" and dst.dtype.kind != "c":
        v = v.real  # the Meta function refused a non-zero imaginary part
    np.copyto(dst, v.astype(dst.dtype), where=as_numpy(mask))
    return out
