"""``strided.finfo`` / ``strided.iinfo``: the numeric limits of a dtype (torch.finfo / torch.iinfo)."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from . import dtypes as _dt

__all__ = ["finfo", "iinfo"]


class finfo:  # noqa: N801 - torch's name
    """Limits of a floating dtype (default: the default dtype; a complex dtype gives its real part's): bits, eps,
    max, min, tiny, resolution."""

    def __init__(self, type=None):  # noqa: A002 - torch's argument name
        d = _dt.get_default_dtype() if type is None else _dt.to_dtype(type)
        if d.is_complex:  # torch: finfo(complex64) is finfo(float32)
            d = _dt.float32 if d is _dt.complex64 else _dt.float64
        if not d.is_floating_point:
            raise TypeError("strided.finfo() requires a floating point input type. Use strided.iinfo to handle "
                            f"'{d.name}'")
        info = ml_dtypes.finfo(d.numpy_dtype) if d is _dt.bfloat16 else np.finfo(d.numpy_dtype)
        self.dtype = d.name
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.tiny)
        self.resolution = 10.0 ** -int(info.precision)  # torch: 10^-(decimal digits of precision)

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:  # noqa: N801 - torch's name
    """Limits of an integer (or bool) dtype: bits, min, max."""

    def __init__(self, type):  # noqa: A002 - torch's argument name
        d = _dt.to_dtype(type)
        if d.is_floating_point:
            raise TypeError(f"strided.iinfo() requires an integer input type. Use strided.finfo to handle '{d.name}'")
        if d is _dt.bool:
            self.bits, self.min, self.max = 8, 0, 1
        else:
            info = np.iinfo(d.numpy_dtype)
            self.bits, self.min, self.max = int(info.bits), int(info.min), int(info.max)
        self.dtype = d.name

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"
