"""CPU kernels for factories, random fills, copies and scalars."""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ...dispatch.library import kernel
from ...random import default_generator
from ...tensor import Tensor
from ..meta import factories as meta
from . import random_streams as streams
from .common import as_numpy, cast_into, discard_imag, scalar_as, store

__all__ = []


def _gen(generator):
    """The CPU generator to draw from (torch's error for another device's)."""
    if generator is None:
        return default_generator
    if generator.device.type != "cpu":
        raise RuntimeError(f"Expected a 'cpu' device type for generator but found '{generator.device.type}'")
    return generator


@kernel("CPU")
def arange(start, end, step=1, *, dtype=None, layout=None, device=None, pin_memory=None):
    out = meta.arange(start, end, step, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)
    n = out._sizes[0]
    if out.dtype.is_floating_point:  # torch computes start + i * step in double (accscalar) and casts once
        return store(out, start + np.arange(n, dtype=np.float64) * step)
    # an integer dtype: start and step are cast to it first (truncated: arange(0.5, 2.5, 0.5, dtype=int32) is all
    # zeros in torch), as the CUDA kernel does
    return store(out, int(start) + np.arange(n, dtype=np.int64) * int(step))


@kernel("CPU")
def linspace(start, end, steps, *, dtype=None, layout=None, device=None, pin_memory=None):
    out = meta.linspace(start, end, steps, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)
    if steps and out.dtype.category == dt.INTEGRAL:
        return store(out, meta.integer_linspace(start, end, steps, out.dtype))
    return store(out, np.linspace(start, end, steps, dtype=np.float64))


@kernel("CPU")
def eye(n, m, *, dtype=None, layout=None, device=None, pin_memory=None):
    out = meta.eye(n, m, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)
    return store(out, np.eye(n, m))


@kernel("CPU")
def uniform_(self, from_=0, to=1, *, generator=None):
    meta.uniform_(self, from_, to)
    # torch's uniform_real_distribution: u is a multiple of 2**-digits (the dtype's mantissa), so a
    # float16/bfloat16 rand() never rounds up to 1 (Note [CPU random streams])
    streams.fill(self, streams.uniform(_gen(generator), self.numel(), self.dtype, from_, to))
    return self


@kernel("CPU")
def normal_(self, mean=0, std=1, *, generator=None):
    meta.normal_(self, mean, std)
    values = streams.normal(_gen(generator), self.numel(), self.dtype, mean, std, self.is_contiguous())
    streams.fill(self, values)
    return self


@kernel("CPU")
def random_(self, from_, to, *, generator=None):
    meta.random_(self, from_, to)
    gen, n, d = _gen(generator), self.numel(), self.dtype
    if to is not None:
        values = streams.integers(gen, n, to - from_, from_)
    elif from_ == 0:  # random_(): uniform_int_distribution (Note [CPU random streams])
        values = streams.random_full(gen, n, d)
    elif from_ == -(1 << 63):
        values = streams.full_64_bit_range(gen, n)
    else:  # [from, the dtype's largest value]
        top = 1 if d is dt.bool else (1 << dt.mantissa_digits(d)) if d.is_floating_point else \
            int(np.iinfo(d.numpy_dtype).max)
        values = streams.integers(gen, n, top - from_ + 1, from_)
    streams.fill(self, values)
    return self


@kernel("CPU")
def bernoulli(self, *, generator=None):
    out = meta.bernoulli(self)
    p = as_numpy(self)
    if p.size and (np.any(p < 0) or np.any(p > 1) or np.any(np.isnan(p))):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    order = streams.memory_order(out)
    flat = np.transpose(p.astype(np.float64), order).reshape(-1)
    streams.fill(out, streams.bernoulli(_gen(generator), flat, self.dtype is dt.float64))
    return out


@kernel("CPU")
def bernoulli_(self, p=0.5, *, generator=None):
    meta.bernoulli_(self, p)
    streams.fill(self, streams.uniform(_gen(generator), self.numel(), dt.float64) < p)
    return self


@kernel("CPU")
def randperm(n, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    """torch's CPU randperm: a Fisher-Yates shuffle over the generator's stream (Note [randperm])."""
    from ...ops.composite.factories import randperm_dtype

    d = randperm_dtype(n, dtype)
    out = meta.empty((n,), dtype=d, layout=layout, device=device)
    store(out, streams.randperm(_gen(generator), n))
    return out.pin_memory() if pin_memory else out


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
    cast_into(dst, s, explicit=True)
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
