"""Meta functions of the complex ops with kernels: ``conj_physical``, ``angle``, ``polar`` and ``complex``
(output dtype and shape, torch's checks). The views are composite (ops/composite/complex_ops.py)."""

from __future__ import annotations

from ... import dtypes as dt
from ...dispatch.library import kernel
from .common import check, new_output_like
from .pointwise import pointwise_output, scalar_type_name
from .pointwise_unary import float_unary_dtype

__all__ = ["angle_dtype"]

_PARTS = (dt.float32, dt.float64, dt.float16)  # torch's kHalf, kFloat, kDouble


@kernel("Meta")
def conj_physical(self):
    return new_output_like(self)


def angle_dtype(d: dt.dtype) -> dt.dtype:
    """``angle``'s result dtype: the real dtype of a complex input, else as a floating unary op."""
    return d.to_real() if d.is_complex else float_unary_dtype(d)


@kernel("Meta")
def angle(self):
    return new_output_like(self, angle_dtype(self.dtype))


def _complex_parts(a, b):
    """torch's complex_check_dtype for ``polar(abs, angle)`` and ``complex(real, imag)``: the result dtype."""
    da, db = a.dtype, b.dtype
    check(da in _PARTS and db in _PARTS,
          lambda: "Expected both inputs to be Half, Float or Double tensors but got "
                  f"{scalar_type_name(da)} and {scalar_type_name(db)}")
    check(da is db, lambda: f"Expected object of scalar type {scalar_type_name(da)} but got scalar type "
                            f"{scalar_type_name(db)} for second argument")
    return da.to_complex()  # float16 raises: strided has no complex32


@kernel("Meta")
def polar(abs, angle):  # noqa: A002 - torch's argument names
    return pointwise_output(_complex_parts(abs, angle), abs, angle)


@kernel("Meta")
def complex(real, imag):  # noqa: A001 - the op's name
    return pointwise_output(_complex_parts(real, imag), real, imag)
