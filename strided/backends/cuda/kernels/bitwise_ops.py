"""CUDA kernels for the bitwise ops, on the elementwise engine (Meta functions and the shift rule,
Note [Shift counts], as in ``backends/cpu/bitwise.py``)."""

from __future__ import annotations

from .... import dtypes as dt
from ....dispatch.library import kernel
from ...meta import bitwise as meta
from ..elementwise import opmath, run

__all__ = ["NAMES"]

_C4 = {d: (opmath(d),) * 4 for d in dt.all_dtypes}
NAMES = ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift")


def _binary(name: str, expr: str):
    meta_fn = getattr(meta, name)

    def bitwise(self, other):
        out = meta_fn(self, other)
        return run(expr, out, (self, other), _C4[out.dtype])

    bitwise.__name__ = bitwise.__qualname__ = name
    return kernel("CUDA", name=name)(bitwise)


bitwise_and = _binary("bitwise_and", "x0 & x1")
bitwise_or = _binary("bitwise_or", "x0 | x1")
bitwise_xor = _binary("bitwise_xor", "x0 ^ x1")
bitwise_left_shift = _binary("bitwise_left_shift", "ew_lshift(x0, x1)")
bitwise_right_shift = _binary("bitwise_right_shift", "ew_rshift(x0, x1)")


@kernel("CUDA")
def bitwise_not(self):
    out = meta.bitwise_not(self)
    return run("!x0" if out.dtype is dt.bool else "~x0", out, (self,), _C4[out.dtype])
