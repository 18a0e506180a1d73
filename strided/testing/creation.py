"""``make_tensor``: a tensor of random values for tests, as torch.testing.make_tensor (same arguments, bounds,
defaults and errors; values drawn from strided's generators)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

from .. import dtypes as dt
from ..type_info import finfo, iinfo

__all__ = ["make_tensor"]

_INTEGRAL = (dt.uint8, dt.int8, dt.int16, dt.int32, dt.int64)
_FLOATING = (dt.float16, dt.bfloat16, dt.float32, dt.float64)
_COMPLEX = (dt.complex64, dt.complex128)


def _bounds(low, high, dtype, *, lowest, highest, default_low, default_high):
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and dtype in _FLOATING + _COMPLEX:
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or complex types is deprecated "
                      "since 2.1 and will be removed in 2.3. Use `torch.full(...)` instead.", FutureWarning,
                      stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), but {dtype} only "
                         f"supports [{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if dtype is dt.bool or dtype in _INTEGRAL:
        return math.ceil(low), math.ceil(high)
    return low, high


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad: bool = False, noncontiguous: bool = False,
                exclude_zero: bool = False, memory_format=None):
    """A tensor of ``shape`` with values drawn uniformly from ``[low, high)`` (default [-9, 9) for floating and
    complex types, [-9, 10) for integers clamped to the dtype, {False, True} for bool). ``noncontiguous`` gives
    every other element of a tensor twice as long in the last dimension; ``exclude_zero`` replaces zeros by 1
    (integers) or the dtype's smallest normal number."""
    from .. import factories
    from ..ops.bound import view_as_real

    if len(shape) == 1 and isinstance(shape[0], Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(f"The parameters `noncontiguous` and `memory_format` are mutually exclusive, but got "
                         f"noncontiguous={noncontiguous} and memory_format={memory_format}")
    if requires_grad and (dtype is dt.bool or dtype in _INTEGRAL):
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral dtypes, but got "
                         f"dtype={dtype}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:
        shape = (*shape[:-1], 2 * shape[-1])
    if dtype is dt.bool:
        low, high = _bounds(low, high, dtype, lowest=0, highest=2, default_low=0, default_high=2)
        result = factories.randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _INTEGRAL:
        info = iinfo(dtype)
        low, high = _bounds(low, high, dtype, lowest=info.min, highest=info.max + (1 if dtype is not dt.int64 else 0),
                            default_low=-9, default_high=10)
        result = factories.randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _FLOATING + _COMPLEX:
        info = finfo(dtype)
        low, high = _bounds(low, high, dtype, lowest=info.min, highest=info.max, default_low=-9, default_high=9)
        result = factories.empty(shape, device=device, dtype=dtype)
        target = view_as_real(result) if dtype in _COMPLEX else result
        if high - low >= info.max:  # uniform_ needs to - from to be finite
            target.uniform_(low / 2, high / 2).mul_(2)
        else:
            target.uniform_(low, high)
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by torch.testing.make_tensor(). To request "
                        "support, file an issue at: https://github.com/pytorch/pytorch/issues")
    if noncontiguous:
        result = result[..., 1::2]  # offset by one to catch offset bugs too
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if dtype is dt.bool or dtype in _INTEGRAL else finfo(dtype).tiny
    if dtype in _FLOATING + _COMPLEX:
        result.requires_grad = requires_grad
    return result
