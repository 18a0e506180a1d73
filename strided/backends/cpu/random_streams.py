"""torch's CPU random streams: mt19937 words transformed as ATen's CPU kernels transform them (Note [CPU random
streams] in ``strided/random.py``), vectorized with NumPy.

Every function takes a CPU ``Generator`` and returns a flat array of ``n`` values in the order torch's kernel
writes them (``cpu_serial_kernel``: memory order; :func:`fill` writes them so). The transforms are ATen's
(``TransformationHelper.h``, ``DistributionsHelper.h``, ``cpu/DistributionTemplates.h``):

- uniform: ``(word & (2^digits - 1)) * 2^-digits * (to - from) + from``; float64 takes one 64-bit word (two draws,
  the first the high half, 53 digits), float32 one 32-bit draw (24 digits); half types round float32's draw,
  a value rounding up to ``to`` replaced by ``from``.
- integers in [base, base + range): ``word % range + base``, a 64-bit word when range >= 2^28 (torch 2.14's
  threshold, found against it), else a 32-bit one; ``random_()``: ``word % (max + 1)`` (64-bit words for int64
  and float64), bools ``word & 1``.
- normal, >= 16 contiguous elements (``normal_fill``): the tensor filled with uniforms, then each 16-block's first
  8 and last 8 paired by Box-Muller (the last 16 redrawn when the size is not a multiple; half types draw float32
  uniforms for the whole blocks only and compute in float32); else element by element from
  ``normal_distribution<double>`` (a 53-bit pair, ``sqrt(-2 log1p(-u2))``, cos then the cached sin).
- ``a * b + c`` is rounded once, as the FMA-contracted C++ rounds it (:func:`fma32`, :func:`fma64`).
- bernoulli(p): ``u < p`` with a 24-bit float uniform for float32 p, 53-bit for float64 p and for ``bernoulli_(p)``.
- randperm: Fisher-Yates, element i swapped with i + ``word % (n - i)``, without a Python loop.
"""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt

__all__ = ["fma32", "fma64", "words32", "words64", "uniform", "integers", "random_full", "full_64_bit_range", "normal",
           "bernoulli", "randperm", "fisher_yates", "memory_order", "fill"]

_DIGITS = {dt.float64: 53, dt.float32: 24, dt.float16: 11, dt.bfloat16: 8}
_U64 = np.uint64
_TWO_PI = 2.0 * np.pi
WIDE_RANGE = 1 << 28  # ranges from here on take 64-bit words


def fma32(a, b, c) -> np.ndarray:
    """``a * b + c`` rounded once to float32, as torch's FMA-contracted float kernels (exact in float64: the
    product of two float32 values fits its mantissa)."""
    if b == 1 and c == 0:
        return np.asarray(a, np.float32)
    return (np.asarray(a, np.float64) * np.float64(b) + np.float64(c)).astype(np.float32)


def fma64(a, b, c) -> np.ndarray:
    """``a * b + c`` as torch's FMA-contracted double kernels round it, through long double (x86's 64-bit mantissa:
    one rounding but for rare double-rounding cases; where long double is double, the plain expression)."""
    if b == 1 and c == 0:
        return np.asarray(a, np.float64)
    return (np.asarray(a, np.longdouble) * np.longdouble(b) + np.longdouble(c)).astype(np.float64)


def words32(gen, n: int) -> np.ndarray:
    """``n`` 32-bit mt19937 outputs (as uint64)."""
    return gen._mt.random_raw(n) if n else np.zeros(0, _U64)


def words64(gen, n: int) -> np.ndarray:
    """``n`` 64-bit words, each two draws: the first the high 32 bits (``CPUGeneratorImpl::random64``)."""
    w = words32(gen, 2 * n)
    return (w[0::2] << _U64(32)) | w[1::2]


def uniform(gen, n: int, dtype, from_=0.0, to=1.0) -> np.ndarray:
    """``uniform_real_distribution<dtype>(from, to)`` draws (float64 for float64, else float32 values)."""
    if dtype is dt.float64:
        x = (words64(gen, n) & _U64((1 << 53) - 1)).astype(np.float64) * 2.0 ** -53
        return fma64(x, float(to) - float(from_), float(from_))
    lo, hi = np.float32(from_), np.float32(to)
    x = (words32(gen, n) & _U64((1 << 24) - 1)).astype(np.float32) * np.float32(2.0 ** -24)
    values = fma32(x, hi - lo, lo)
    if dtype is dt.float32:
        return values
    # a half type draws float32's values rounded to it; one that rounds up to ``to`` becomes ``from`` (torch 2.14,
    # found against it: its uniform stays in [from, to))
    rounded = _round(values, dtype)
    return np.where(rounded == _round(hi, dtype), _round(lo, dtype), rounded)


def _round(v, dtype):
    """float32 ``v`` rounded to ``dtype`` (float32 and below) and widened back: a value stored in a ``dtype``."""
    return v if dtype is dt.float32 else np.asarray(v).astype(dtype.numpy_dtype).astype(np.float32)


def integers(gen, n: int, range_: int, base: int) -> np.ndarray:
    """``uniform_int_from_to_distribution(range, base)`` draws as int64 (two's complement wrap, as torch's casts)."""
    w = words64(gen, n) if range_ >= WIDE_RANGE else words32(gen, n)
    return (w % _U64(range_) + _U64(base & (2 ** 64 - 1))).view(np.int64)


def random_full(gen, n: int, dtype) -> np.ndarray:
    """``random_()``: ``uniform_int_distribution<dtype>`` draws (int64)."""
    if dtype is dt.bool:
        return (words32(gen, n) & _U64(1)).view(np.int64)
    if dtype.is_floating_point:
        modulus = (1 << _DIGITS[dtype]) + 1
    else:
        modulus = int(np.iinfo(dtype.numpy_dtype).max) + 1
    w = words64(gen, n) if dtype in (dt.int64, dt.float64) else words32(gen, n)
    return (w % _U64(modulus)).view(np.int64)


def full_64_bit_range(gen, n: int) -> np.ndarray:
    """``random_(-2^63, None)``: 64-bit words as int64."""
    return words64(gen, n).view(np.int64)


def normal(gen, n: int, dtype, mean: float, std: float, contiguous: bool) -> np.ndarray:
    """``normal_(mean, std)`` draws of a tensor of ``n`` elements (``contiguous``: its layout)."""
    if n >= 16 and contiguous:
        return _normal_fill(gen, n, dtype, mean, std)
    return _normal_serial(gen, n, mean, std)


def _normal_fill(gen, n: int, dtype, mean: float, std: float) -> np.ndarray:
    """ATen's ``normal_fill``: uniforms, Box-Muller over 16-blocks, the last block redrawn for a partial one, in the
    tensor's precision (its kernels' log / sin / cos may round an ulp apart from NumPy's, and float32's AVX2 kernel
    uses its own approximations: values agree to a few ulps, not bits)."""
    whole = n - n % 16
    if dtype in (dt.float16, dt.bfloat16):
        # torch 2.14 (found against it): float32 math, uniforms drawn for the whole blocks only
        data, dtype = uniform(gen, whole, dt.float32), dt.float32
    else:
        data = uniform(gen, n, dtype)
    out = np.empty(n, np.float64 if dtype is dt.float64 else np.float32)
    out[:whole] = _box_muller_16(data[:whole], dtype, mean, std)
    if whole != n:
        out[n - 16:] = _box_muller_16(uniform(gen, 16, dtype), dtype, mean, std)
    return out


def _box_muller_16(data: np.ndarray, dtype, mean: float, std: float) -> np.ndarray:
    """``normal_fill_16`` over consecutive 16-blocks: u1 = 1 - the first 8, u2 = the last 8 (float64 or float32)."""
    blocks = data.reshape(-1, 2, 8)
    out = np.empty_like(blocks)
    if dtype is dt.float64:
        radius = np.sqrt(-2.0 * np.log(1.0 - blocks[:, 0]))
        theta = _TWO_PI * blocks[:, 1]
        out[:, 0] = fma64(radius * np.cos(theta), std, mean)
        out[:, 1] = fma64(radius * np.sin(theta), std, mean)
        return out.reshape(-1)
    f32 = np.float32
    radius = np.sqrt(f32(-2) * np.log(f32(1) - blocks[:, 0]))  # 1 - u exact: the uniforms have 24 bits
    theta = (_TWO_PI * blocks[:, 1].astype(np.float64)).astype(f32)
    out[:, 0] = fma32(radius * np.cos(theta), f32(std), f32(mean))
    out[:, 1] = fma32(radius * np.sin(theta), f32(std), f32(mean))
    return out.reshape(-1)


def _normal_serial(gen, n: int, mean: float, std: float) -> np.ndarray:
    """``normal_distribution<double>`` element by element: the generator's cached sine first, then pairs."""
    out = np.empty(n, np.float64)
    start = 0
    if n and gen.next_double_normal is not None:
        out[0] = fma64(gen.next_double_normal, std, mean)
        gen.next_double_normal = None
        start = 1
    pairs = (n - start + 1) // 2
    if pairs:
        u = (words64(gen, 2 * pairs) & _U64((1 << 53) - 1)).astype(np.float64) * 2.0 ** -53
        u1, u2 = u[0::2], u[1::2]
        r = np.sqrt(-2.0 * np.log1p(-u2))
        theta = 2.0 * np.pi * u1
        z = np.empty(2 * pairs)
        z[0::2], z[1::2] = r * np.cos(theta), r * np.sin(theta)
        out[start:] = fma64(z[:n - start], std, mean)
        if (n - start) % 2:
            gen.next_double_normal = float(z[-1])
    return out


def bernoulli(gen, p: np.ndarray, double: bool) -> np.ndarray:
    """``bernoulli_distribution`` draws against probabilities ``p`` (flat, in write order)."""
    if double:
        return uniform(gen, p.size, dt.float64) < p
    return uniform(gen, p.size, dt.float32) < p.astype(np.float32)


# torch's CPU kernel shuffles by Fisher-Yates below this size and by the inside-out variant over 64-bit words from
# it (ATen's randperm_cpu: n < UINT32_MAX / 20); from it strided sorts random keys instead (Note [randperm])
FISHER_YATES_MAX = (2**32 - 1) // 20 - 1


def randperm(gen, n: int) -> np.ndarray:
    """torch's CPU ``randperm``: Fisher-Yates over 0..n-1 with ``random() % (n - i)`` (Note [Fisher-Yates without a
    loop]), up to ``FISHER_YATES_MAX`` elements; past it the argsort of 64-bit keys, a permutation from the same
    stream but not torch's."""
    if n <= 1:
        return np.arange(n, dtype=np.int64)
    if n > FISHER_YATES_MAX:
        return np.argsort(words64(gen, n), kind="stable").astype(np.int64)
    targets = words32(gen, n - 1)
    targets %= np.arange(n, 1, -1, dtype=_U64)  # in place: a huge n's temporaries stay near the argsort path's
    targets = targets.view(np.int64)
    targets += np.arange(n - 1, dtype=np.int64)
    return fisher_yates(targets, n)


# Note [Fisher-Yates without a loop]
# torch's shuffle is sequential: for i = 0 .. n-2, swap r[i] and r[t_i] (t_i = i + word % (n - i) >= i), starting
# from r = 0..n-1. A Python loop over it costs ~0.5 us per element (0.5 s for a million). The result follows from
# the targets alone. Step i makes position i final, and a position p > i changes before step i only at a step k < i
# with t_k = p, which writes there what position k held just before step k. Call that value W(k). So
#     r[i] = W(k*)  where k* is the last step before i with the same target as i (t_{k*} = t_i), else t_i;
#     W(j) = W(P(j)) where P(j) is the last step before j whose target is j, else j (nothing moved into j);
#     r[n-1] = W(n-1).
# k* and P come from one sort of the (target, step) pairs; W follows the P chains by pointer doubling
# (W = W[W] until it stops changing: about log2 of the longest chain passes). Checked against the loop
# (tests/backend/test_cpu_random_streams.py) and against torch's permutations.
def fisher_yates(targets: np.ndarray, n: int) -> np.ndarray:
    """The permutation torch's Fisher-Yates loop makes from ``targets`` (step i swaps positions i and targets[i] >=
    i; n - 1 steps), computed with whole-array operations (Note [Fisher-Yates without a loop])."""
    steps = n - 1
    index = np.int32 if n < 2**31 else np.int64
    bits = steps.bit_length()
    pairs = targets << bits
    pairs |= np.arange(steps, dtype=np.int64)
    pairs.sort()  # by target, then by step
    target = (pairs >> bits).astype(index)
    step = (pairs & ((1 << bits) - 1)).astype(index)
    del pairs
    same = target[1:] == target[:-1]  # each sorted pair after one of the same target: k* is that one's step
    previous = np.full(steps, -1, index)
    previous[step[1:][same]] = step[:-1][same]
    moved = target != step  # P(j): the last step of j's run that moves something (t_k = k is a no-op)
    target, step = target[moved], step[moved]
    last = np.ones(target.size, bool)
    last[:-1] = target[1:] != target[:-1]
    w = np.arange(n, dtype=index)
    w[target[last]] = step[last]
    del target, step, same, moved, last
    while True:
        jumped = w[w]
        if np.array_equal(jumped, w):
            break
        w = jumped
    out = np.empty(n, np.int64)
    has = previous >= 0
    out[:steps] = targets
    out[:steps][has] = w[previous[has]]
    out[steps] = w[steps]
    return out


def memory_order(t) -> list[int]:
    """``t``'s dims outermost first in memory: the order torch's serial kernels (and :func:`fill`) visit them."""
    strides = t._strides
    return sorted(range(len(t._sizes)), key=lambda i: -strides[i])


def fill(out, values: np.ndarray) -> None:
    """Write flat ``values`` into ``out`` in memory order (the order torch's serial kernels write): its dims sorted
    by stride, outermost first."""
    from .common import store

    sizes = out._sizes
    order = memory_order(out)
    if order == list(range(len(sizes))):
        store(out, values.reshape(sizes))
        return
    shaped = values.reshape([sizes[i] for i in order])
    store(out, np.transpose(shaped, np.argsort(order)))
