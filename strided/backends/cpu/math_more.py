"""CPU kernels for further elementwise math (igamma, igammac, special_zeta, nextafter, gcd, lcm, frexp) and
scatter_reduce; Meta functions in ``meta/math_more.py``.

Note [Regularized incomplete gamma]
``igamma(a, x) = P(a, x)`` and ``igammac(a, x) = Q(a, x) = 1 - P(a, x)`` by Cephes' ``igam`` /
``igamc``: the power series of P where ``x <= 1`` or ``x <= a``, Legendre's continued fraction of Q
otherwise, the other one as ``1 - `` it. The prefactor ``x^a e^-x / Gamma(a)`` is
``exp(a log x - x - lgamma(a))`` in float64 (every dtype computes in float64 here and rounds once).
For large ``a`` near ``x``, Temme's expansion (Note [Incomplete gamma for large a]).
Edge cases are torch's ``calc_igamma``: NaN for ``a < 0`` or ``x < 0`` or ``a == x == 0``, P = 1 for
``a == 0 < x`` or ``x = inf``, P = 0 for ``x == 0`` or ``a = inf`` (NaN when both are inf). The
iterations run vectorized until every lane has converged (at most ``_MAX_ITER``).
"""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ... import return_types
from ...dispatch.library import kernel
from ..meta import math_more as meta
from ..meta.common import wrap_dim
from ..meta.pointwise import scalar_type_name
from .common import as_numpy, compute_dtype, operand
from .gamma_functions import lgamma
from .hurwitz_zeta import zeta
from .igamma_asymptotic import asymptotic_regime, log_prefactor, temme
from .indexing import out_of_bounds
from .pointwise import quiet, store_result

__all__ = ["igam", "igamc"]

_EPS = np.finfo(np.float64).eps
_BIG, _BIGINV = 4.503599627370496e15, 2.22044604925031308085e-16
_MAX_ITER = 5000


def _prefactor(a, x):
    """x^a e^-x / Gamma(a); for a >= 10 without the cancellation of its logarithm's terms (Note [Incomplete gamma
    for large a])."""
    large = a >= 10
    if not large.any():
        return np.exp(a * np.log(x) - x - lgamma(a))
    out = np.empty(np.broadcast(a, x).shape)
    out[large] = np.exp(log_prefactor(a[large], x[large]))
    small = ~large
    out[small] = np.exp(a[small] * np.log(x[small]) - x[small] - lgamma(a[small]))
    return out


def _series(a, x):
    """P(a, x) by its power series (converges for every x; fast for x < a + 1). Converged elements leave the
    working arrays (Note [Shrinking iterations])."""
    out = np.ones(a.size)
    idx = np.arange(a.size)
    r, xs = a.ravel().copy(), x.ravel()
    c, total = np.ones(a.size), np.ones(a.size)
    for _ in range(_MAX_ITER):
        if not idx.size:
            break
        r = r + 1
        c = c * xs / r
        total = total + c
        done = ~(np.abs(c) > _EPS * np.abs(total))
        if done.any():
            out[idx[done]] = total[done]
            keep = ~done
            idx, r, xs, c, total = idx[keep], r[keep], xs[keep], c[keep], total[keep]
    out[idx] = total
    return out.reshape(a.shape) * _prefactor(a, x) / a


def _continued_fraction(a, x):
    """Q(a, x) by Legendre's continued fraction (for x > 1 and x > a); converged elements leave the working
    arrays (Note [Shrinking iterations])."""
    xs = x.ravel()
    y, z, c = 1 - a.ravel(), xs + 2 - a.ravel(), np.zeros(a.size)
    pkm2, qkm2, pkm1, qkm1 = np.ones(a.size), xs.copy(), xs + 1, z * xs
    ans = pkm1 / qkm1
    out = ans.copy()
    idx = np.arange(a.size)
    for _ in range(_MAX_ITER):
        if not idx.size:
            break
        c, y, z = c + 1, y + 1, z + 2
        yc = y * c
        pk, qk = pkm1 * z - pkm2 * yc, qkm1 * z - qkm2 * yc
        ok = qk != 0
        r = np.where(ok, pk / np.where(ok, qk, 1), ans)
        t = np.where(ok, np.abs((ans - r) / np.where(r == 0, 1, r)), 1.0)
        ans = r
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        scale = np.where(np.abs(pkm1) > _BIG, _BIGINV, 1.0)
        pkm2, pkm1, qkm2, qkm1 = pkm2 * scale, pkm1 * scale, qkm2 * scale, qkm1 * scale
        done = ~(t > _EPS)
        if done.any():
            out[idx[done]] = ans[done]
            keep = ~done
            idx, c, y, z, ans = idx[keep], c[keep], y[keep], z[keep], ans[keep]
            pkm2, pkm1, qkm2, qkm1 = pkm2[keep], pkm1[keep], qkm2[keep], qkm1[keep]
    out[idx] = ans
    return out.reshape(a.shape) * _prefactor(a, x)


# Note [Shrinking iterations]
# The series and the continued fraction need from a few to thousands of steps depending on (a, x). Each step
# runs on the elements that have not converged yet: an element leaves the working arrays at the step its
# convergence test passes, with exactly the values that step computed, so the results are those of iterating
# every element separately, and a few slow elements no longer make the whole array iterate.


def _regularized(a, x, upper: bool):
    """P(a, x) (``upper`` False) or Q(a, x) of float64 arrays (Note [Regularized incomplete gamma])."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    out = np.full(a.shape, np.nan)
    nan = np.isnan(a) | np.isnan(x) | (a < 0) | (x < 0) | ((a == 0) & (x == 0)) | (np.isinf(a) & np.isinf(x))
    p_one = ~nan & (((a == 0) & (x > 0)) | (np.isinf(x) & ~np.isinf(a)))
    p_zero = ~nan & ~p_one & ((x == 0) | np.isinf(a))
    out[p_one] = 0.0 if upper else 1.0
    out[p_zero] = 1.0 if upper else 0.0
    rest = ~(nan | p_one | p_zero)
    ar, xr = a[rest], x[rest]
    vals = np.empty(ar.shape)
    asymptotic = asymptotic_regime(ar, xr)  # Note [Incomplete gamma for large a]
    if asymptotic.any():
        vals[asymptotic] = temme(ar[asymptotic], xr[asymptotic], upper)
        out_rest = vals
        keep = ~asymptotic
        ar, xr = ar[keep], xr[keep]
        vals = np.empty(ar.shape)
    use_cf = (xr > 1) & (xr > ar)
    if (~use_cf).any():
        p = _series(ar[~use_cf], xr[~use_cf])
        vals[~use_cf] = 1 - p if upper else p
    if use_cf.any():
        q = _continued_fraction(ar[use_cf], xr[use_cf])
        vals[use_cf] = q if upper else 1 - q
    if asymptotic.any():
        out_rest[keep] = vals
        vals = out_rest
    out[rest] = np.clip(vals, 0.0, 1.0)
    return out


def igam(a, x) -> np.ndarray:
    """The regularized lower incomplete gamma function P(a, x) of float64 arrays."""
    return quiet(_regularized, a, x, False)


def igamc(a, x) -> np.ndarray:
    """The regularized upper incomplete gamma function Q(a, x) of float64 arrays."""
    return quiet(_regularized, a, x, True)


def _binary(name, fn):
    meta_fn = getattr(meta, name)

    def binary(self, other):
        out = meta_fn(self, other)
        return store_result(out, quiet(fn, operand(self, out.dtype), operand(other, out.dtype)))

    binary.__name__ = binary.__qualname__ = name
    return kernel("CPU", name=name)(binary)


def _f64(t):
    return as_numpy(t).astype(np.float64)


def _igamma_kernel(name, fn):
    meta_fn = getattr(meta, name)

    def binary(self, other):
        out = meta_fn(self, other)
        return store_result(out, fn(_f64(self), _f64(other)))

    binary.__name__ = binary.__qualname__ = name
    return kernel("CPU", name=name)(binary)


def _lcm(a, b):
    g = np.gcd(a, b)
    return np.abs(np.where(g == 0, 0, a // np.where(g == 0, 1, g) * b))


igamma = _igamma_kernel("igamma", igam)
special_zeta = _igamma_kernel("special_zeta", zeta)  # float64 for every dtype, as torch's CPU kernel
igammac = _igamma_kernel("igammac", igamc)
gcd = _binary("gcd", np.gcd)
lcm = _binary("lcm", _lcm)


@kernel("CPU")
def nextafter(self, other):
    out = meta.nextafter(self, other)
    np_d = out.dtype.numpy_dtype
    if out.dtype is dt.bfloat16:  # NumPy's nextafter has no bfloat16 loop: step the bits
        a, b = as_numpy(self).astype(np.float32), as_numpy(other).astype(np.float32)
        return store_result(out, _nextafter_bits(np.asarray(a).astype(np_d), np.asarray(b).astype(np_d)))
    return store_result(out, np.nextafter(as_numpy(self).astype(np_d), as_numpy(other).astype(np_d)))


def _nextafter_bits(a, b):
    """nextafter of bfloat16 arrays by stepping the 16-bit pattern (IEEE order of sign-magnitude)."""
    a, b = np.broadcast_arrays(a, b)
    bits = a.view(np.uint16).astype(np.int32)
    af, bf = a.astype(np.float32), b.astype(np.float32)
    up = (bf > af) == (af >= 0)
    step = np.where(af == 0, 1, np.where(up, 1, -1))
    new = np.where(af == 0, np.where(bf > 0, 1, 0x8001), bits + step)
    res = new.astype(np.uint16).view(a.dtype)
    return np.where(np.isnan(af) | np.isnan(bf), np.float32(np.nan), np.where(af == bf, b, res))


@kernel("CPU")
def frexp(self):
    mantissa, exponent = meta.frexp(self)
    m, e = np.frexp(as_numpy(self).astype(np.float32 if self.dtype in (dt.float16, dt.bfloat16) else None))
    finite = np.isfinite(m)
    store_result(mantissa, m)
    store_result(exponent, np.where(finite, e, 0))
    return return_types.frexp((mantissa, exponent))


_IDENTITY = {"sum": 0, "mean": 0, "prod": 1}
_UFUNCS = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}


@kernel("CPU")
def scatter_reduce(self, dim, index, src, reduce, *, include_self=True):
    """Reduce ``src`` into a copy of ``self`` at ``index`` along ``dim`` (torch's scatter_reduce.two)."""
    out = meta.scatter_reduce(self, dim, index, src, reduce, include_self=include_self)
    if (self.dtype.is_complex and reduce in ("amax", "amin")) or (self.dtype is dt.bool and reduce == "mean"):
        # torch's CPU has sum, prod and mean of complex, and every reduction of bool but the mean
        raise NotImplementedError(f'"scatter_gather_tensor_cpu_reduce_{reduce}" not implemented for '
                                  f"'{scalar_type_name(self.dtype)}'")
    cd = compute_dtype(self.dtype)
    acc = np.array(as_numpy(self), dtype=cd, ndmin=1)
    if index.numel():
        d = wrap_dim(dim, max(self.dim(), 1))
        idx = np.array(as_numpy(index), dtype=np.int64, ndmin=1)
        bad = out_of_bounds(idx, acc.shape[d])
        if bad is not None:
            raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {acc.shape[d]}")
        values = np.array(as_numpy(src), dtype=cd, ndmin=1)[tuple(slice(0, n) for n in idx.shape)]
        where = list(np.ix_(*(np.arange(n) for n in idx.shape)))
        where[d] = idx
        where = tuple(where)
        if not include_self:
            acc[where] = _identity(reduce, cd)
        _reduce_at(acc, where, values, reduce)
        if reduce == "mean":
            count = np.full(acc.shape, 1 if include_self else 0, np.int64)
            np.add.at(count, where, 1)
            count = np.maximum(count, 1)
            inexact = self.dtype.is_floating_point or self.dtype.is_complex
            acc = acc / count if inexact else np.floor_divide(acc, count)
    return store_result(out, acc.reshape(out._sizes))


def _identity(reduce, cd):
    if reduce in _IDENTITY:
        return _IDENTITY[reduce]
    if np.issubdtype(cd, np.floating):
        return -np.inf if reduce == "amax" else np.inf
    info = np.iinfo(cd) if cd != np.bool_ else None
    if info is None:
        return reduce == "amin"
    return info.min if reduce == "amax" else info.max


def _reduce_at(acc, where, values, reduce):
    """``acc[where] op= values`` unbuffered; amax / amin propagate NaN (np.maximum does, as torch), without NumPy's
    "invalid value" warning for it."""
    with np.errstate(invalid="ignore"):
        _UFUNCS[reduce].at(acc, where, values)


