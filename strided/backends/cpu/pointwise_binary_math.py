"""CPU kernels for the binary math functions (Meta functions in ``meta/pointwise_binary_math.py``)."""

from __future__ import annotations

import numpy as np

from ...dispatch.library import kernel
from ..meta import pointwise_binary_math as meta
from . import complex_math
from .common import operand
from .pointwise import _zero_division_check, apply_ufunc, arg, quiet, rounded_arg, store_result

__all__ = []


def _ufunc_kernel(name: str, ufunc):
    meta_fn = getattr(meta, name)

    def binary(self, other):
        out = meta_fn(self, other)
        d = out.dtype
        return quiet(apply_ufunc, ufunc, out, operand(self, d), arg(other, d))

    binary.__name__ = binary.__qualname__ = name
    return kernel("CPU", name=name)(binary)


atan2 = _ufunc_kernel("atan2", np.arctan2)
copysign = _ufunc_kernel("copysign", np.copysign)
hypot = _ufunc_kernel("hypot", np.hypot)


def _logaddexp(x, y, out=None, casting="same_kind"):
    """NumPy's logaddexp (a ufunc's signature); of complex values c10's ``_log_add_exp_helper`` (Note [Complex
    log-sum-exp])."""
    if np.iscomplexobj(x) or np.iscomplexobj(y):
        x, y = np.broadcast_arrays(np.asarray(x, np.complex128), np.asarray(y, np.complex128))
        r = complex_math.log_add_exp(x, y)
        if out is None:
            return r
        out[...] = r
        return out
    return np.logaddexp(x, y, out=out, casting=casting)


logaddexp = _ufunc_kernel("logaddexp", _logaddexp)
logaddexp2 = _ufunc_kernel("logaddexp2", np.logaddexp2)
fmax = _ufunc_kernel("fmax", np.fmax)
fmin = _ufunc_kernel("fmin", np.fmin)


@kernel("CPU")
def fmod(self, other):
    out = meta.fmod(self, other)
    d = out.dtype
    b = rounded_arg(other, d)  # torch's kernel reads the divisor as the half type
    if not d.is_floating_point:
        _zero_division_check(b)
    return quiet(apply_ufunc, np.fmod, out, operand(self, d), b)


@kernel("CPU")
def xlogy(self, other):
    """``self * log(other)``, 0 where ``self`` is 0 (unless ``other`` is NaN), as torch."""
    out = meta.xlogy(self, other)
    d = out.dtype
    x, y = np.asarray(operand(self, d)), np.asarray(arg(other, d))

    def compute():
        r = x * np.log(y)
        return np.where((x == 0) & ~np.isnan(y), 0, r)

    return store_result(out, quiet(compute))
