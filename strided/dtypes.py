"""The dtype table: itemsize, NumPy dtype, DLPack code, category, and torch's type promotion.

Note [Type promotion]
torch promotes by *category* (bool < integral < floating < complex) and, within a category, by a fixed
table (``c10/core/ScalarType.cpp`` ``promoteTypes``). ``result_type`` sees three kinds of
participants, in priority order: tensors with ``dim > 0``, zero-dim tensors, and Python scalars
("wrapped numbers"). A lower-priority participant changes the result only when its category is
higher than the category of the result so far: ``int32_tensor + 5`` stays int32,
``float16_tensor + 2.5`` stays float16, but ``int32_tensor + 2.5`` becomes the default float dtype.
A complex participant of lower priority over a floating result keeps the result's precision
(``float64_tensor * 1j`` is complex128), as c10's ``combine_categories``.

Note [Complex dtypes]
complex64 and complex128 (torch's cfloat / cdouble) are dtypes like the others, but ``all_dtypes``
lists only the real ones (it is what "every dtype" means to the op tests and the CUDA kernel
tables); ``complex_dtypes`` lists these two. Which operators take complex tensors is decided in one
place, Note [Complex operators] in ``ops/complex_support.py``. torch's complex32 has no counterpart:
promotions that would make it (``float16_tensor * 1j``) raise.
"""

from __future__ import annotations

import builtins

import ml_dtypes
import numpy as np

__all__ = [
    "dtype", "float16", "half", "bfloat16", "float32", "float", "float64", "double",
    "int8", "int16", "int32", "int64", "long", "int", "short", "uint8", "bool",
    "promote_types", "result_type", "get_default_dtype", "set_default_dtype", "can_cast",
    "all_dtypes", "from_numpy_dtype", "to_dtype", "complex64", "complex128", "cfloat", "cdouble",
    "complex_dtypes",
]

BOOL, INTEGRAL, FLOATING, COMPLEX = 0, 1, 2, 3


class dtype:  # noqa: N801 - torch spells it lower case
    """A tensor element type (``strided.float32`` ...)."""

    __slots__ = ("name", "itemsize", "numpy_dtype", "category", "is_signed", "dlpack_code", "_index", "is_complex",
                 "_real", "_key_bit")

    def __init__(self, name, itemsize, numpy_dtype, category, is_signed, dlpack_code, index):
        self.name = name
        self.itemsize = itemsize
        self.numpy_dtype = np.dtype(numpy_dtype)
        self.category = category
        self.is_signed = is_signed
        self.dlpack_code = dlpack_code
        self._index = index
        self.is_complex = category == COMPLEX  # a plain attribute: read on hot paths
        self._real = self
        self._key_bit = 1 << 6 if self.is_complex else 0  # dispatch.keys.COMPLEX_BIT, set in a tensor's _key

    @property
    def is_floating_point(self) -> bool:
        return self.category == FLOATING

    def to_real(self) -> dtype:
        """The dtype of the real and imaginary parts (complex64 -> float32); a real dtype itself."""
        return self._real

    def to_complex(self) -> dtype:
        """The complex dtype of the same precision (float32 -> complex64), as torch's."""
        if self.is_complex:
            return self
        if self is float64:
            return complex128
        if self is float32:
            return complex64
        raise TypeError(f"strided has no complex dtype of {self.name} precision (torch's complex32 / "
                        "bcomplex32 are not supported); use float32 or float64")

    def __repr__(self) -> str:
        return f"strided.{self.name}"

    def __reduce__(self):
        return (to_dtype, (self.name,))


# DLPack type codes: Int 0, UInt 1, Float 2, Bfloat 4, Bool 6.
uint8 = dtype("uint8", 1, np.uint8, INTEGRAL, False, 1, 0)
int8 = dtype("int8", 1, np.int8, INTEGRAL, True, 0, 1)
int16 = dtype("int16", 2, np.int16, INTEGRAL, True, 0, 2)
int32 = dtype("int32", 4, np.int32, INTEGRAL, True, 0, 3)
int64 = dtype("int64", 8, np.int64, INTEGRAL, True, 0, 4)
float16 = dtype("float16", 2, np.float16, FLOATING, True, 2, 5)
float32 = dtype("float32", 4, np.float32, FLOATING, True, 2, 6)
float64 = dtype("float64", 8, np.float64, FLOATING, True, 2, 7)
bool = dtype("bool", 1, np.bool_, BOOL, False, 6, 8)  # noqa: A001 - torch's name
bfloat16 = dtype("bfloat16", 2, ml_dtypes.bfloat16, FLOATING, True, 4, 9)
complex64 = dtype("complex64", 8, np.complex64, COMPLEX, True, 5, 10)  # DLPack Complex 5
complex128 = dtype("complex128", 16, np.complex128, COMPLEX, True, 5, 11)
complex64._real, complex128._real = float32, float64

half, float, double = float16, float32, float64  # noqa: A001
short, int, long = int16, int32, int64  # noqa: A001
cfloat, cdouble = complex64, complex128

all_dtypes = (uint8, int8, int16, int32, int64, float16, float32, float64, bool, bfloat16)

complex_dtypes = (complex64, complex128)  # Note [Complex dtypes]

_BY_NAME = {d.name: d for d in all_dtypes + complex_dtypes}
_BY_NAME.update(half=float16, float=float32, double=float64, short=int16, int=int32, long=int64, cfloat=complex64,
                cdouble=complex128)
_BY_NUMPY = {d.numpy_dtype: d for d in all_dtypes + complex_dtypes}

# torch's promoteTypes table (c10/core/ScalarType.cpp), rows/cols in the _index order above:
#        u1  i1  i2  i4  i8  f2  f4  f8  b1  bf  c8  c16
_u1, _i1, _i2, _i4, _i8, _f2, _f4, _f8, _b1, _bf = all_dtypes
_c8, _c16 = complex64, complex128
_PROMOTE = [
    [_u1, _i2, _i2, _i4, _i8, _f2, _f4, _f8, _u1, _bf, _c8, _c16],  # u1
    [_i2, _i1, _i2, _i4, _i8, _f2, _f4, _f8, _i1, _bf, _c8, _c16],  # i1
    [_i2, _i2, _i2, _i4, _i8, _f2, _f4, _f8, _i2, _bf, _c8, _c16],  # i2
    [_i4, _i4, _i4, _i4, _i8, _f2, _f4, _f8, _i4, _bf, _c8, _c16],  # i4
    [_i8, _i8, _i8, _i8, _i8, _f2, _f4, _f8, _i8, _bf, _c8, _c16],  # i8
    [_f2, _f2, _f2, _f2, _f2, _f2, _f4, _f8, _f2, _f4, _c8, _c16],  # f2
    [_f4, _f4, _f4, _f4, _f4, _f4, _f4, _f8, _f4, _f4, _c8, _c16],  # f4
    [_f8, _f8, _f8, _f8, _f8, _f8, _f8, _f8, _f8, _f8, _c16, _c16],  # f8
    [_u1, _i1, _i2, _i4, _i8, _f2, _f4, _f8, _b1, _bf, _c8, _c16],  # b1
    [_bf, _bf, _bf, _bf, _bf, _f4, _f4, _f8, _bf, _bf, _c8, _c16],  # bf
    [_c8, _c8, _c8, _c8, _c8, _c8, _c8, _c16, _c8, _c8, _c8, _c16],  # c8
    [_c16] * 12,  # c16
]

_default_dtype = float32


def get_default_dtype() -> dtype:
    """The dtype of floating tensors made from Python floats (``float32`` unless changed)."""
    return _default_dtype


def set_default_dtype(d: dtype) -> None:
    """Set the default floating dtype; only floating dtypes are allowed, as in torch."""
    global _default_dtype
    d = to_dtype(d)
    if not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default_dtype = d


def to_dtype(d) -> dtype:
    """Normalize a dtype, a dtype name or a NumPy dtype to a ``strided.dtype``."""
    if type(d) is dtype:
        return d
    if isinstance(d, str):
        name = d.removeprefix("strided.").removeprefix("torch.")
        try:
            return _BY_NAME[name]
        except KeyError:
            raise TypeError(f"unknown dtype '{d}'; expected one of {sorted(_BY_NAME)}") from None
    return from_numpy_dtype(d)


def from_numpy_dtype(d) -> dtype:
    """The ``strided.dtype`` of a NumPy dtype (raises TypeError for unsupported ones)."""
    try:
        return _BY_NUMPY[np.dtype(d)]
    except (KeyError, TypeError):
        raise TypeError(
            f"can't convert np.ndarray of type {d}. The only supported types are: complex128, complex64, "
            "float64, float32, float16, bfloat16, int64, int32, int16, int8, uint8, and bool."
        ) from None


def promote_types(a: dtype, b: dtype) -> dtype:
    """The smallest dtype both ``a`` and ``b`` can be cast to (torch.promote_types)."""
    try:
        return _PROMOTE[a._index][b._index]
    except AttributeError:  # checked only on failure: this is on every op's path
        _dtype_arguments("promote_types", ("type1", a), ("type2", b))
        raise


def mantissa_digits(d: dtype) -> int:
    """Bits of significand of a floating dtype (with the implicit one): the largest run of integers it
    holds exactly is [0, 2**digits] (``random_()``'s range, as torch's ``std::numeric_limits::digits``)."""
    return {float16: 11, bfloat16: 8, float32: 24, float64: 53}[d.to_real()]


def can_cast(from_: dtype, to: dtype) -> bool:
    """torch.can_cast: no casting to a lower category (float -> int, int -> bool)."""
    try:
        return from_.category <= to.category
    except AttributeError:
        _dtype_arguments("can_cast", ("from_", from_), ("to", to))
        raise


def _dtype_arguments(fn: str, *named) -> None:
    """torch's binding error for the first argument that is not a dtype."""
    for position, (name, value) in enumerate(named, 1):
        if not isinstance(value, dtype):
            t = type(value)
            shown = t.__name__ if t.__module__ == "builtins" else t.__qualname__
            raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be strided.dtype, not {shown}")


def default_complex_dtype() -> dtype:
    """The dtype of tensors made from Python complex numbers: complex128 when the default dtype is
    float64, else complex64 (torch's rule)."""
    return complex128 if _default_dtype is float64 else complex64


def scalar_dtype(value) -> dtype:
    """The dtype a Python scalar would get as a tensor (bool, int64, the default float or complex)."""
    if isinstance(value, (builtins.bool, np.bool_)):
        return bool
    if isinstance(value, (builtins.int, np.integer)):
        return int64
    if isinstance(value, (builtins.complex, np.complexfloating)):
        return default_complex_dtype()
    return _default_dtype


def _combine(higher: dtype | None, lower: dtype) -> dtype:
    """c10's combine_categories: ``lower`` (a lower-priority participant) wins only by category; a complex
    one over a floating result keeps the result's precision."""
    if higher is None:
        return lower
    if lower.category > higher.category:
        return higher.to_complex() if lower.is_complex and higher.category == FLOATING else lower
    return higher


_TENSOR = []  # [strided.Tensor], filled on the first call (tensor.py imports this module)


def result_type(*operands) -> dtype:
    """torch.result_type over tensors and Python scalars (see Note [Type promotion])."""
    if not _TENSOR:
        from .tensor import Tensor as _T

        _TENSOR.append(_T)
    Tensor = _TENSOR[0]
    dim_t = zero_t = None
    scalar_cat = -1
    for x in operands:
        if isinstance(x, Tensor):
            if x._sizes:
                dim_t = x.dtype if dim_t is None else _PROMOTE[dim_t._index][x.dtype._index]
            else:
                zero_t = x.dtype if zero_t is None else _PROMOTE[zero_t._index][x.dtype._index]
        elif isinstance(x, dtype):
            dim_t = x if dim_t is None else _PROMOTE[dim_t._index][x._index]
        else:
            cat = scalar_dtype(x).category
            scalar_cat = cat if cat > scalar_cat else scalar_cat
    result = dim_t
    if zero_t is not None:
        result = _combine(result, zero_t)
    if scalar_cat >= 0:
        result = _combine(result, (bool, int64, _default_dtype, default_complex_dtype())[scalar_cat])
    if result is None:
        raise TypeError("result_type() needs at least one tensor, dtype or scalar operand")
    return result
