"""Factories composed from ``empty`` and a fill (zeros, ones, full, rand*, *_like, zero_)."""

from __future__ import annotations

import numbers

import numpy as np

from ... import dtypes as dt
from ...backends.meta.pointwise import scalar_type_name
from ...dispatch.library import kernel
from ...random import default_generator_for
from ...tensor import Tensor
from .. import bound as ops

__all__ = []


def _full_dtype(fill_value, dtype):
    if dtype is not None:
        return dtype
    return dt.scalar_dtype(fill_value.item() if isinstance(fill_value, Tensor) else fill_value)


@kernel("CompositeExplicitAutograd")
def zeros(size, *, dtype=None, layout=None, device=None, pin_memory=None):
    dims = size if isinstance(size, (list, tuple)) else (size,)  # a SymInt[] may come as one int
    if any(isinstance(s, int) and s < 0 for s in dims):  # torch's zeros checks before allocating, in its words
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    return ops.empty(size, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory).fill_(0)


@kernel("CompositeExplicitAutograd")
def ones(size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return ops.empty(size, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory).fill_(1)


@kernel("CompositeExplicitAutograd")
def full(size, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None):
    if not isinstance(fill_value, (numbers.Number, np.generic, Tensor)):  # torch's binding words, not math's
        raise TypeError(f"full(): argument 'fill_value' (position 2) must be Number, not {type(fill_value).__name__}")
    d = _full_dtype(fill_value, dtype)
    return ops.empty(size, dtype=d, layout=layout, device=device, pin_memory=pin_memory).fill_(fill_value)


def _random_dtype(dtype, op):
    d = dt.to_dtype(dtype) if dtype is not None else dt.get_default_dtype()
    if not (d.is_floating_point or d.is_complex):
        raise NotImplementedError(f"\"{op}\" not implemented for '{scalar_type_name(d)}'")  # torch's words
    return d


# torch's complex samples: each part uniform on [0, 1) (rand), or normal with variance 1/2 so that |z|^2 has mean 1
_COMPLEX_NORMAL_STD = 0.5 ** 0.5


def _parts(t):
    """``t`` itself, or the (re, im) real view of a complex ``t`` (filled in place)."""
    return ops.view_as_real(t) if t.dtype.is_complex else t


def _std(t) -> float:
    return _COMPLEX_NORMAL_STD if t.dtype.is_complex else 1.0


def _generator(generator, device):
    from ...device import get_default_device

    return generator if generator is not None else default_generator_for(device or get_default_device())


@kernel("CompositeExplicitAutograd")
def rand(size, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    d = _random_dtype(dtype, "check_uniform_bounds")
    t = ops.empty(size, dtype=d, layout=layout, device=device, pin_memory=pin_memory)
    _parts(t).uniform_(0, 1, generator=_generator(generator, t.device))
    return t


@kernel("CompositeExplicitAutograd")
def randn(size, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    d = _random_dtype(dtype, "normal_kernel")
    t = ops.empty(size, dtype=d, layout=layout, device=device, pin_memory=pin_memory)
    _parts(t).normal_(0, _std(t), generator=_generator(generator, t.device))
    return t


@kernel("CompositeExplicitAutograd")
def randint(low, high, size, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    if not low < high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    t = ops.empty(size, dtype=dtype or dt.int64, layout=layout, device=device, pin_memory=pin_memory)
    return t.random_(low, high, generator=_generator(generator, t.device))


@kernel("CompositeImplicitAutograd")
def random_to(self, to, *, generator=None):
    """``random_(to)``: integers in ``[0, to)``."""
    return self.random_(0, to, generator=generator)


@kernel("CompositeImplicitAutograd")
def random_full(self, *, generator=None):
    """``random_()``: integers over the dtype's range (for floats, those its mantissa holds exactly)."""
    return self.random_(0, None, generator=generator)


@kernel("CompositeExplicitAutograd")
def zero_(self):
    return self.fill_(0)


def _like(self, dtype, layout, device, pin_memory, memory_format):
    """torch's preserve_format: a contiguous or non-dense input gives a contiguous result, a dense
    permuted one (channels_last included) the same strides."""
    mf = memory_format or "preserve_format"
    d = dtype or self.dtype
    dev = device if device is not None else self.device
    if mf == "preserve_format":
        if self.is_contiguous():
            mf = "contiguous_format"
        elif self._is_non_overlapping_and_dense():
            return ops.empty_strided(self._sizes, self._strides, dtype=d, layout=layout, device=dev,
                                     pin_memory=pin_memory)
        else:
            from ...conversion import suggest_memory_format

            mf = suggest_memory_format(self)
    return ops.empty(self._sizes, dtype=d, layout=layout, device=dev, pin_memory=pin_memory, memory_format=mf)


@kernel("CompositeExplicitAutograd")
def empty_like(self, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _like(self, dtype, layout, device, pin_memory, memory_format)


@kernel("CompositeExplicitAutograd")
def zeros_like(self, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _like(self, dtype, layout, device, pin_memory, memory_format).fill_(0)


@kernel("CompositeExplicitAutograd")
def ones_like(self, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _like(self, dtype, layout, device, pin_memory, memory_format).fill_(1)


@kernel("CompositeExplicitAutograd")
def full_like(self, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _like(self, dtype, layout, device, pin_memory, memory_format).fill_(fill_value)


@kernel("CompositeExplicitAutograd")
def rand_like(self, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None,
              memory_format=None):
    t = _like(self, dtype, layout, device, pin_memory, memory_format)
    _random_dtype(t.dtype, "check_uniform_bounds")
    _parts(t).uniform_(0, 1, generator=_generator(generator, t.device))
    return t


@kernel("CompositeExplicitAutograd")
def randn_like(self, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None,
               memory_format=None):
    t = _like(self, dtype, layout, device, pin_memory, memory_format)
    _random_dtype(t.dtype, "normal_kernel")
    _parts(t).normal_(0, _std(t), generator=_generator(generator, t.device))
    return t


# Note [randperm]
# On CUDA (and Meta) a permutation is the argsort of n random 62-bit keys (``random_`` then ``sort``):
# one fill and one sort, reproducible per Generator, as torch's CUDA randperm sorts keys (its values are
# not Philox-compatible with torch's). Key ties (probability about n^2 / 2^63) are broken by index, so
# the result is always a permutation. The CPU kernel (backends/cpu/factories.py) is torch's Fisher-Yates
# shuffle over the mt19937 stream: torch's permutation for the same seed (Note [CPU random streams]), computed
# without a Python loop (Note [Fisher-Yates without a loop]), below torch's own switch to the inside-out shuffle
# over 64-bit words (n >= 2^32 / 20), where the CPU sorts keys too.
_RANDPERM_CPP = {dt.int8: "int8_t", dt.uint8: "uint8_t", dt.int16: "int16_t", dt.int32: "int", dt.int64: "int64_t"}


@kernel("CompositeExplicitAutograd")
def randperm(n, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    d = randperm_dtype(n, dtype)
    keys = ops.empty((n,), dtype=dt.int64, layout=layout, device=device)
    keys.random_(0, 1 << 62, generator=_generator(generator, keys.device))
    perm = ops.sort(keys)[1]
    out = perm if d is dt.int64 else perm.to(d)
    return out.pin_memory() if pin_memory else out


def randperm_dtype(n, dtype):
    """torch's checks of ``randperm``'s arguments; its dtype."""
    from ...backends.meta.pointwise import scalar_type_name

    if n.__class__ is not int:
        raise TypeError(f"randperm(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    d = dt.int64 if dtype is None else dt.to_dtype(dtype)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    if d is dt.bool:
        raise NotImplementedError(f"\"randperm\" not implemented for '{scalar_type_name(d)}'")
    if d is dt.float16 and n > 2049:
        raise RuntimeError("n cannot be greater than 2049 for Half type.")
    if d in _RANDPERM_CPP and n - 1 > int(np.iinfo(d.numpy_dtype).max):
        raise RuntimeError(f"value cannot be converted to type {_RANDPERM_CPP[d]} without overflow")
    return d


def _tri_indices(op, row, col, offset, dtype, layout, device, pin_memory):
    for name, v in (("row", row), ("col", col)):
        if v < 0:
            raise RuntimeError(f"{name} must be non-negative, got{v}")
    d = dt.int64 if dtype is None else dt.to_dtype(dtype)
    if d not in (dt.int64, dt.int32):
        from ...backends.meta.reductions import type_name

        raise NotImplementedError(f"\"{op}\" not implemented for '{type_name(d)}'")
    rows, cols = (np.tril_indices if op == "tril_indices" else np.triu_indices)(row, offset, col)
    coords = np.stack([rows, cols]).astype(np.int64).reshape(2, -1)
    out = ops.empty(coords.shape, dtype=d, layout=layout, device=device, pin_memory=pin_memory)
    if out.device.type != "meta" and coords.size:
        from ...factories import tensor

        out.copy_(tensor(coords, dtype=d))
    return out


@kernel("CompositeExplicitAutograd")
def tril_indices(row, col, offset=0, *, dtype=None, layout=None, device=None, pin_memory=None):
    """The (row, column) coordinates of a (row x col) matrix's lower triangle, as a 2 x N tensor."""
    return _tri_indices("tril_indices", row, col, offset, dtype, layout, device, pin_memory)


@kernel("CompositeExplicitAutograd")
def triu_indices(row, col, offset=0, *, dtype=None, layout=None, device=None, pin_memory=None):
    """The (row, column) coordinates of a (row x col) matrix's upper triangle, as a 2 x N tensor."""
    return _tri_indices("triu_indices", row, col, offset, dtype, layout, device, pin_memory)
