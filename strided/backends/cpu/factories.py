"""CPU kernels for factories, random fills, copies and scalars."""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ...dispatch.library import kernel
from ...random import default_generator
from ...tensor import Tensor
from ..meta import factories as meta
from .common import as_numpy, discard_imag, scalar_as, store

__all__ = []


def _gen(generator):
    return (generator or default_generator).numpy


@kernel("CPU")
def arange(start, end, step=1, *, dtype=None, layout=None, device=None, pin_memory=None):
    out = meta.arange(start, end, step, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)
    n = out._sizes[0]
    # torch computes start + i * step in double (accscalar) and casts once.
    return store(out, start + np.arange(n, dtype=np.float64 if out.dtype.is_floating_point else np.int64) * step)


@kernel("CPU")
def linspace(start, end, steps, *, dtype=None, layout=None, device=None, pin_memory=None):
    out = meta.linspace(start, end, steps, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)
    return store(out, np.linspace(start, end, steps, dtype=np.float64))


@kernel("CPU")
def eye(n, m, *, dtype=None, layout=None, device=None, pin_memory=None):
    out = meta.eye(n, m, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)
    return store(out, np.eye(n, m))


@kernel("CPU")
def uniform_(self, from_=0, to=1, *, generator=None):
    meta.uniform_(self, from_, to)
    # As torch's uniform_real_distribution: u is a multiple of 2**-digits (the dtype's mantissa),
    # so a float16/bfloat16 rand() never rounds up to 1.
    digits = _UNIFORM_DIGITS.get(self.dtype, 53)
    u = np.floor(_gen(generator).random(size=self._sizes) * 2.0 ** digits) * 2.0 ** -digits
    return store(self, from_ + u * (to - from_))


_UNIFORM_DIGITS = {dt.float16: 11, dt.bfloat16: 8, dt.float32: 24}


@kernel("CPU")
def normal_(self, mean=0, std=1, *, generator=None):
    meta.normal_(self, mean, std)
    return store(self, _gen(generator).normal(mean, std, size=self._sizes))


@kernel("CPU")
def random_(self, from_, to, *, generator=None):
    meta.random_(self, from_, to)
    if to is None:
        to = 2 ** (8 * self.dtype.itemsize - (1 if self.dtype.is_signed else 0)) if self.dtype.category else 2
        if self.dtype.is_floating_point:
            to = 2 ** dt.mantissa_digits(self.dtype) + 1
    return store(self, _gen(generator).integers(from_, to, size=self._sizes))


@kernel("CPU")
def bernoulli(self, *, generator=None):
    out = meta.bernoulli(self)
    p = as_numpy(self).astype(np.float64)
    if p.size and (np.any(p < 0) or np.any(p > 1) or np.any(np.isnan(p))):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    return store(out, _gen(generator).random(size=self._sizes) < p)


@kernel("CPU")
def bernoulli_(self, p=0.5, *, generator=None):
    meta.bernoulli_(self, p)
    return store(self, _gen(generator).random(size=self._sizes) < p)


@kernel("CPU")
def fill_(self, value):
    meta.fill_(self, value)
    if isinstance(value, Tensor):
        value = value.item()
    return store(self, scalar_as(value, self.dtype))


@kernel("CPU")
def copy_(self, src, non_blocking=False):
    """Copy ``src`` into ``self`` (broadcast, cast); safe when the two overlap in memory."""
    meta.copy_(self, src, non_blocking)
    if self.device.type == "meta":
        return self
    if src.device.type == "meta":
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    dst = as_numpy(self)
    if not dst.size:
        return self
    s = as_numpy(src)
    if self._storage is src._storage and np.shares_memory(dst, s):
        s = s.copy()
    if src.dtype.is_complex and not self.dtype.is_complex:
        # to bool: nonzero in either part, without a warning (torch's); to other real dtypes: the real part
        s = s != 0 if self.dtype is dt.bool else discard_imag(s)
    np.copyto(dst, s, casting="unsafe")
    return self


@kernel("CPU")
def _local_scalar_dense(self):
    if self.numel() != 1:
        raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
    v = as_numpy(self).reshape(())[()]
    if self.dtype is dt.bool:
        return bool(v)
    if self.dtype.is_floating_point:
        return float(v)
    if self.dtype.is_complex:
        return complex(v)
    return int(v)
