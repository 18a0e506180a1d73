"""CUDA kernels for the binary math functions on the elementwise engine (Meta functions and
semantics as ``backends/cpu/pointwise_binary_math.py``; integer ``fmod`` by zero is unchecked, as
torch's CUDA kernel: Note [CUDA integer division by zero] in ``pointwise_ops.py``)."""

from __future__ import annotations

from .... import dtypes as dt
from ....dispatch.library import kernel
from ...meta import pointwise_binary_math as meta
from ..elementwise import opmath, run

__all__ = ["NAMES"]

_C4 = {d: (opmath(d),) * 4 for d in dt.all_dtypes + dt.complex_dtypes}  # complex: logaddexp
NAMES = ("atan2", "copysign", "xlogy", "hypot", "logaddexp", "logaddexp2", "fmod", "fmax", "fmin")
_EXPRS = {"atan2": "ew_atan2(x0, x1)", "copysign": "ew_copysign(x0, x1)", "xlogy": "ew_xlogy(x0, x1)",
          "hypot": "ew_hypot(x0, x1)", "logaddexp": "ew_logaddexp(x0, x1)", "logaddexp2": "ew_logaddexp2(x0, x1)",
          "fmax": "ew_fmax(x0, x1)", "fmin": "ew_fmin(x0, x1)"}


def _binary(name: str):
    meta_fn = getattr(meta, name)
    expr = _EXPRS.get(name)

    def binary(self, other):
        out = meta_fn(self, other)
        d = out.dtype
        e = expr if expr is not None else ("ew_fmod(x0, x1)" if d.is_floating_point else "x0 % x1")
        return run(e, out, (self, other), _C4[d])

    binary.__name__ = binary.__qualname__ = name
    return kernel("CUDA", name=name)(binary)


for _name in NAMES:
    globals()[_name] = _binary(_name)
