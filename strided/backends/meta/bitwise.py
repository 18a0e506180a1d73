"""Meta functions for the bitwise ops: ``bitwise_and`` / ``or`` / ``xor`` / ``not`` and the shifts.

They take integer and bool operands (promoted as any binary op); floating results raise torch's
AT_DISPATCH error naming its CPU kernel (``"bitwise_and_cpu" not implemented for 'Float'``).
Shifts also refuse bool results (``"lshift_cpu" not implemented for 'Bool'``).
"""

from __future__ import annotations

from ... import dtypes as dt
from ...dispatch.library import kernel
from .common import result_dtype
from .pointwise import not_implemented, pointwise_output

__all__ = ["bitwise_binary", "shift"]


def bitwise_binary(name: str):
    def meta(self, other):
        d = result_dtype(self, other)
        if d.is_floating_point:
            raise not_implemented(f"{name}_cpu", d)
        return pointwise_output(d, self, other)

    meta.__name__ = meta.__qualname__ = name
    return meta


def shift(name: str):
    def meta(self, other):
        d = result_dtype(self, other)
        if d.is_floating_point or d is dt.bool:
            raise not_implemented(f"{name}_cpu", d)
        return pointwise_output(d, self, other)

    meta.__name__ = meta.__qualname__ = name
    return meta


bitwise_and = kernel("Meta", name="bitwise_and")(bitwise_binary("bitwise_and"))
bitwise_or = kernel("Meta", name="bitwise_or")(bitwise_binary("bitwise_or"))
bitwise_xor = kernel("Meta", name="bitwise_xor")(bitwise_binary("bitwise_xor"))
bitwise_left_shift = kernel("Meta", name="bitwise_left_shift")(shift("lshift"))
bitwise_right_shift = kernel("Meta", name="bitwise_right_shift")(shift("rshift"))


@kernel("Meta")
def bitwise_not(self):
    if self.dtype.is_floating_point:
        raise not_implemented("bitwise_not_cpu", self.dtype)
    return pointwise_output(self.dtype, self)
