"""Random fills by inverse CDF over ``uniform_`` / ``normal_`` draws: exponential_, geometric_, log_normal_,
cauchy_ (CompositeExplicitAutograd, zero gradient as torch's), the ``normal`` factories and randint_like.

Note [Inverse-CDF fills]
Each fill draws from the tensor's device generator (the one given, else the device's default), so a
seeded Generator reproduces the fill on that device; the draws are uniform in [0, 1) (normal for
log_normal_) in float64 for float64 tensors and float32 otherwise, transformed, then copied into
``self`` (integer tensors too, for geometric_). These composites serve CUDA (whose streams are
strided's Philox, not torch's); the CPU has kernels of its own (backends/cpu/random_fills.py) that
transform torch's stream as torch does (Note [CPU random streams]).
"""

from __future__ import annotations

import math

from ... import dtypes as dt
from ...backends.meta.pointwise import scalar_type_name
from ...dispatch.library import kernel
from ...random import default_generator_for
from ...tensor import Tensor
from .. import bound as ops

__all__ = []


def _num(v) -> str:
    """A double as torch's messages print it (C++ stream formatting)."""
    return f"{v:g}"


def _draw(self, generator, normal=False):
    acc = dt.float64 if self.dtype is dt.float64 else dt.float32
    u = ops.empty(self._sizes, dtype=acc, device=self.device)
    gen = generator if generator is not None else default_generator_for(self.device)
    return ops.normal_(u, 0, 1, generator=gen) if normal else ops.uniform_(u, 0, 1, generator=gen)


def _continuous(self, name: str, kernel_word: str):
    if not self.dtype.is_floating_point:
        word = scalar_type_name(self.dtype) if kernel_word == "Exponential" else "long int"
        raise RuntimeError(f"{kernel_word} distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {word}")


def check_exponential(self, lambd) -> None:
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_num(lambd)}")
    _continuous(self, "exponential_", "Exponential")


def check_geometric(self, p) -> None:
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_num(p)}")


def check_log_normal(self, std) -> None:
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_num(std)}")
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f"\"log_normal_cpu\" not implemented for '{scalar_type_name(self.dtype)}'")


def check_cauchy(self, sigma) -> None:
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_num(sigma)}")
    _continuous(self, "cauchy_", "Cauchy")


@kernel("CompositeExplicitAutograd")
def exponential_(self, lambd=1, *, generator=None):
    """Fill with Exponential(lambd) samples: ``-log1p(-u) / lambd``."""
    check_exponential(self, lambd)
    return ops.copy_(self, ops.div(ops.neg(ops.log1p(ops.neg(_draw(self, generator)))), lambd))


@kernel("CompositeExplicitAutograd")
def geometric_(self, p, *, generator=None):
    """Fill with Geometric(p) samples (trials to the first success, >= 1): ``ceil(log(1 - u) / log1p(-p))``."""
    check_geometric(self, p)
    u = _draw(self, generator)
    k = ops.ceil(ops.div(ops.log1p(ops.neg(u)), math.log1p(-p)))
    return ops.copy_(self, ops.clamp_min(k, 1))


@kernel("CompositeExplicitAutograd")
def log_normal_(self, mean=1, std=2, *, generator=None):
    """Fill with ``exp(N(mean, std))`` samples."""
    check_log_normal(self, std)
    return ops.copy_(self, ops.exp(ops.add(ops.mul(_draw(self, generator, normal=True), std), mean)))


@kernel("CompositeExplicitAutograd")
def cauchy_(self, median=0, sigma=1, *, generator=None):
    """Fill with Cauchy(median, sigma) samples: ``median + sigma * tan(pi (u - 1/2))``."""
    check_cauchy(self, sigma)
    u = _draw(self, generator)
    return ops.copy_(self, ops.add(ops.mul(ops.tan(ops.mul(ops.sub(u, 0.5), math.pi)), sigma), median))


def _normal_out(shape, like: Tensor, generator):
    if not like.dtype.is_floating_point:
        raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for '{scalar_type_name(like.dtype)}'")
    out = ops.empty(shape, dtype=like.dtype, device=like.device)
    gen = generator if generator is not None else default_generator_for(like.device)
    return ops.normal_(out, 0, 1, generator=gen)


def _check_std_tensor(std: Tensor) -> None:
    if std.numel() and std.device.type != "meta" and float(ops.amin(std, [])) < 0:
        raise RuntimeError("normal expects all elements of std >= 0.0")


def _check_std(std) -> None:
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(std)}")


@kernel("CompositeExplicitAutograd")
def normal_tensor_float(mean, std=1, *, generator=None):
    """Samples of N(mean[i], std), shaped like ``mean``."""
    _check_std(std)
    return ops.add(ops.mul(_normal_out(mean._sizes, mean, generator), std), mean)


@kernel("CompositeExplicitAutograd")
def normal_float_tensor(mean, std, *, generator=None):
    """Samples of N(mean, std[i]), shaped like ``std``."""
    _check_std_tensor(std)
    return ops.add(ops.mul(_normal_out(std._sizes, std, generator), std), mean)


@kernel("CompositeExplicitAutograd")
def normal_tensor_tensor(mean, std, *, generator=None):
    """Samples of N(mean[i], std[i]) over the broadcast shape, in ``mean``'s dtype."""
    _check_std_tensor(std)
    shape = ops.broadcast_tensors([mean, std])[0]._sizes
    return ops.add(ops.mul(_normal_out(shape, mean, generator), std), mean).to(mean.dtype)


@kernel("CompositeExplicitAutograd")
def normal_float_float(mean, std, size, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    """A tensor of ``size`` of N(mean, std) samples."""
    _check_std(std)
    out = ops.empty(size, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)
    gen = generator if generator is not None else default_generator_for(out.device)
    return ops.normal_(out, mean, std, generator=gen)


@kernel("CompositeExplicitAutograd")
def randint_like(self, high, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    """Integers in ``[0, high)`` shaped like ``self``."""
    return randint_like_low_dtype(self, 0, high, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
                                  memory_format=memory_format)


@kernel("CompositeExplicitAutograd")
def randint_like_low_dtype(self, low, high, *, dtype=None, layout=None, device=None, pin_memory=None,
                           memory_format=None):
    """Integers in ``[low, high)`` shaped like ``self``."""
    if not low < high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    t = ops.empty_like(self, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
                       memory_format=memory_format)
    return t.random_(low, high, generator=default_generator_for(t.device))
