"""Complex forms of the CPU math kernels whose NumPy ufunc differs from torch (Note [Complex math ops]).

Note [Complex math ops]
NumPy's complex ufuncs (sqrt, log, sin, tanh, ...) give torch's values, special values included, so the
floating unary kernels run them on complex arrays unchanged. Three differ and are written here as torch's
CPU kernels compute them: ``log1p`` (c10's formula: ``log1p`` of ``x (2 + x) + y^2`` near 0, else
``log(hypot(1 + x, y))``), ``reciprocal`` (c10's division ``1 / z``: ``inf + nan i`` at zero, where NumPy gives
``nan + nan i``) and ``pow`` with a Python-scalar exponent (torch's pow_tensor_scalar_kernel: 0.5, -0.5 and
-1 run sqrt, rsqrt and reciprocal; 2, 3 and -2 multiply; other exponents ``std::pow``).

Note [Complex log-sum-exp]
torch takes complex ``logsumexp`` and ``logcumsumexp``. ``logsumexp`` shifts by the largest *real* part (an
infinite one replaced by 0): ``log(sum(exp(z - m))) + m``. ``logcumsumexp`` folds c10's complex
``_log_add_exp_helper`` (ATen/native/cpu/LogAddExp.h) along the dim from ``-inf + 0i``: of the pair, the one with
the smaller real part is ``min``; ``log1p(exp(min - max)) + max``, with a NaN in either part giving NaN + NaN i,
two ``-inf`` real parts giving ``min`` and two ``+inf`` ones ``log(exp(min) + exp(max))``. The imaginary part is
a logarithm's, so it is defined up to a multiple of 2 pi: the fold keeps ``max``'s and adds an angle in
(-pi, pi], and a scan that combines in another order (torch's CUDA scan, or strided's) may land on another
multiple of 2 pi for the same sum.
"""

from __future__ import annotations

import numpy as np

__all__ = ["COMPLEX_FNS", "log1p", "reciprocal", "pow", "log_add_exp", "logcumsumexp"]


def log1p(z):
    """c10's complex log1p (c10/util/complex_math.h)."""
    z = np.asarray(z)
    x, y = z.real, z.imag
    theta = np.arctan2(y, x + 1)
    small = np.abs(z) < 0.5
    r = x * (2 + x) + y * y
    re = np.where(small, np.where(r == 0, x, 0.5 * np.log1p(r)), np.log(np.hypot(x + 1, y)))
    out = np.empty(z.shape, z.dtype)
    out.real, out.imag = re, theta
    return out


def reciprocal(z):
    """``1 / z`` as c10's complex division: Smith's algorithm, ``inf + nan i`` for a zero ``z``. NumPy's complex
    ``divide`` is that division (its ``reciprocal`` is not: it conjugates, so ``1 / 2`` came out ``0.5 - 0i``
    where torch's is ``0.5 + 0i``)."""
    z = np.asarray(z)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.divide(z.dtype.type(1), z)


def _rsqrt(z):
    return np.divide(1, np.sqrt(z))


_FAST_POW = {0.5: np.sqrt, -0.5: _rsqrt, -1: reciprocal, 2: lambda z: z * z, 3: lambda z: z * z * z,
             -2: lambda z: reciprocal(z * z)}


def pow(base, exponent):  # noqa: A001 - the op's name
    """torch's complex ``pow``: the fast paths of a scalar exponent, else NumPy's ``power``."""
    if isinstance(exponent, np.generic) and isinstance(base, np.ndarray):
        fast = _FAST_POW.get(complex(exponent))
        if fast is not None:
            return fast(base)
    return np.power(base, exponent)


COMPLEX_FNS = {"log1p": log1p, "reciprocal": reciprocal}


def log_add_exp(x, acc):
    """c10's complex ``_log_add_exp_helper(x, acc)``, elementwise (Note [Complex log-sum-exp])."""
    x_first = x.real < acc.real
    lo, hi = np.where(x_first, x, acc), np.where(x_first, acc, x)
    with np.errstate(all="ignore"):
        out = log1p(np.exp(lo - hi)) + hi
        both_inf = ~np.isfinite(lo.real) & (lo.real == hi.real)
        if both_inf.any():
            out = np.where(both_inf, np.where(lo.real < 0, lo, np.log(np.exp(lo) + np.exp(hi))), out)
    nan = np.isnan(x.real) | np.isnan(x.imag) | np.isnan(acc.real) | np.isnan(acc.imag)
    if nan.any():
        out = np.where(nan, np.array(complex(np.nan, np.nan), out.dtype), out)
    return out


def logcumsumexp(a, axis: int):
    """torch's CPU ``logcumsumexp`` of a complex array: the fold of :func:`log_add_exp` along ``axis`` in
    complex128 (c10's accumulate type), vectorized over the other dims."""
    x = np.moveaxis(np.asarray(a, np.complex128), axis, 0)
    out = np.empty(x.shape, np.complex128)
    acc = np.full(x.shape[1:], complex(-np.inf, 0.0))
    for i in range(x.shape[0]):
        acc = out[i] = log_add_exp(x[i], acc)
    return np.moveaxis(out, 0, axis)
