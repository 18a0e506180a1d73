"""CPU kernels for the bitwise ops (Meta functions in ``backends/meta/bitwise.py``).

Note [Shift counts]
As torch's kernels (ATen/native/cpu/BinaryOpsKernel.cpp): a left shift by a negative count or by
the type's width or more gives 0; a right shift by such a count gives the sign fill (-1 for
negative signed values, else 0). Other counts shift in two's complement, wrapping at the width.
"""

from __future__ import annotations

import numpy as np

from ...dispatch.library import kernel
from ..meta import bitwise as meta
from .common import as_numpy, operand
from .pointwise import apply_ufunc, arg, store_result

__all__ = []


def _binary(name: str, ufunc):
    meta_fn = getattr(meta, name)

    def bitwise(self, other):
        out = meta_fn(self, other)
        d = out.dtype
        return apply_ufunc(ufunc, out, operand(self, d), arg(other, d))

    bitwise.__name__ = bitwise.__qualname__ = name
    return kernel("CPU", name=name)(bitwise)


bitwise_and = _binary("bitwise_and", np.bitwise_and)
bitwise_or = _binary("bitwise_or", np.bitwise_or)
bitwise_xor = _binary("bitwise_xor", np.bitwise_xor)


@kernel("CPU")
def bitwise_not(self):
    out = meta.bitwise_not(self)
    return apply_ufunc(np.invert, out, as_numpy(self))


def _shift(self, other, left: bool):
    out = (meta.bitwise_left_shift if left else meta.bitwise_right_shift)(self, other)
    d = out.dtype
    a, b = np.asarray(operand(self, d)), np.asarray(arg(other, d))
    bits = d.itemsize * 8
    bad = (b < 0) | (b >= bits)  # Note [Shift counts]
    count = np.where(bad, 0, b).astype(a.dtype)
    if left:
        r = np.where(bad, 0, np.left_shift(a, count))
    else:
        fill = np.right_shift(a, bits - 1) if d.is_signed else np.zeros_like(a)
        r = np.where(bad, fill, np.right_shift(a, count))
    return store_result(out, r.astype(a.dtype, copy=False))


@kernel("CPU")
def bitwise_left_shift(self, other):
    return _shift(self, other, True)


@kernel("CPU")
def bitwise_right_shift(self, other):
    return _shift(self, other, False)
