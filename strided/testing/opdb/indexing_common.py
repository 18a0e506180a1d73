"""Sample helpers shared by the indexing OpInfos (``indexing``, ``indexing_more``)."""

from __future__ import annotations

import re

import numpy as np

from ... import dtypes as dt
from ...tensor import Tensor
from ..opinfo import ErrorInput, SampleInput

__all__ = ["index_tensor", "inplace", "error", "scalar_for"]


def index_tensor(values, dtype=dt.int64, noncontiguous=False) -> Tensor:
    """A CPU tensor holding ``values`` (optionally through a stride-2 view: same values)."""
    from ...factories import from_numpy

    a = np.asarray(values).astype(dtype.numpy_dtype)
    if not noncontiguous or a.ndim == 0 or a.size <= 1:
        return from_numpy(np.array(a, order="C"))
    wide = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), dtype=a.dtype)
    wide[..., ::2] = a
    return from_numpy(wide)[..., ::2]


def inplace(method: str):
    """Call ``method`` (an in-place autogen overload) on a copy of self with self's strides."""
    from ...factories import empty_strided

    def fn(self, *args, **kwargs):
        dst = empty_strided(self.shape, self.stride(), dtype=self.dtype, device=self.device)
        dst.copy_(self)
        result = getattr(dst, method)(*args, **kwargs)
        assert result is dst, f"{method} must return self"
        return dst

    fn.__name__ = method
    return fn


def error(args, exc, message, kwargs=None) -> ErrorInput:
    return ErrorInput(SampleInput(tuple(args), kwargs or {}), exc, re.escape(message))


def scalar_for(dtype):
    return True if dtype is dt.bool else (2.5 if dtype.is_floating_point else 3)
