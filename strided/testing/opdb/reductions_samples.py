"""Sample builders and references shared by the reduction OpInfos.

Samples reduce a contiguous and a non-contiguous 3-d tensor over single, negative, multiple and
all dims (``None`` and ``[]``), with and without keepdim, a 0-dim tensor, and zero-size tensors
(reducing a non-empty dim of an empty tensor; reducing the empty dim where the op has an identity).
"""

from __future__ import annotations

import math

import numpy as np

from ... import dtypes as dt
from ..opinfo import FLOATING, INTEGRAL, TOLERANCES, SampleInput, make_arg
from .pointwise_samples import tensor_of

__all__ = ["NO_BOOL", "FLOAT_RESULT_TOL", "SUM_TOL", "axis_of", "acc_dtype", "reduce_samples", "full_samples",
           "special_values", "other_dtypes"]

NO_BOOL = FLOATING + INTEGRAL
# Results computed in the default float dtype from integral inputs compare like float32.
FLOAT_RESULT_TOL = {d: TOLERANCES[dt.float32] for d in INTEGRAL + (dt.bool,)}
# Sums of a dozen values rounded once to a half type.
SUM_TOL = {dt.float16: (2e-3, 2e-2), dt.bfloat16: (1.6e-2, 1e-1)}


def axis_of(a, dim):
    """NumPy axis for a reduction ``dim`` (None / [] = all; a 0-dim array has no axes)."""
    a = np.asarray(a)
    if dim is None or a.ndim == 0 or (not isinstance(dim, int) and len(dim) == 0):
        return None
    return (dim % a.ndim,) if isinstance(dim, int) else tuple(d % a.ndim for d in dim)


def acc_dtype(a, dtype):
    """NumPy dtype of sum/prod/cumsum results (``dtype=`` or int64 for integral/bool inputs)."""
    if dtype is not None:
        return np.float64 if dtype.is_floating_point else dtype.numpy_dtype
    return np.float64 if np.asarray(a).dtype.kind == "f" else np.int64


def reduce_samples(dtype, rng, *, dims=(1, -1, (0, 2), None, ()), low=None, high=None, empty_dim=True,
                    keepdim=True, extra=None):
    """(self, dim, keepdim) samples over several layouts and dims."""
    extra = extra or {}

    def a(shape, **kw):
        return make_arg(shape, dtype, low=low, high=high, rng=rng, **kw)

    x, xn = a((2, 3, 4)), a((2, 3, 4), noncontiguous=True)
    for d in dims:
        dim = list(d) if isinstance(d, tuple) else d
        yield SampleInput((x, dim), dict(extra), f"dim={dim}")
        if keepdim:
            yield SampleInput((xn, dim, True), dict(extra), f"dim={dim} keepdim noncontiguous")
    yield SampleInput((a(()), 0), dict(extra), "0-dim")
    yield SampleInput((a(()), -1, keepdim), dict(extra), "0-dim keepdim")
    yield SampleInput((a((0, 3)), 1), dict(extra), "zero-size, non-empty dim")
    if empty_dim:
        yield SampleInput((a((0, 3)), 0, keepdim), dict(extra), "zero-size, empty dim")


def full_samples(dtype, rng, *, low=None, high=None, empty=True, extra=None):
    """(self,) samples: contiguous, non-contiguous, 0-dim and (if the op allows) empty."""
    extra = extra or {}

    def a(shape, **kw):
        return make_arg(shape, dtype, low=low, high=high, rng=rng, **kw)

    yield SampleInput((a((3, 4)),), dict(extra), "2-d")
    yield SampleInput((a((2, 3, 4), noncontiguous=True),), dict(extra), "noncontiguous")
    yield SampleInput((a(()),), dict(extra), "0-dim")
    if empty:
        yield SampleInput((a((0, 3)),), dict(extra), "zero-size")


def special_values(dtype):
    return tensor_of([[1.0, math.nan, 3.0], [2.0, 0.0, -math.inf], [5.0, math.inf, 5.0]], dtype)


def other_dtypes(dtype):
    return (dt.float64, dt.int64) if dtype.is_floating_point else (dt.float32, dt.int32)
