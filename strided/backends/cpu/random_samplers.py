"""CPU kernels of the gamma-family samplers (``_standard_gamma``, ``_sample_dirichlet``, ``poisson``, ``binomial``)
and their reparameterization gradients (``_standard_gamma_grad``, ``_dirichlet_grad``: sampler_grads.py).

Note [CPU samplers]
Draws come from the CPU generator's NumPy ``Generator`` (Note [CPU random streams] in strided/random.py):
``standard_gamma``, ``poisson`` and ``binomial`` over the parameters in float64, cast once to the output dtype, as
torch's CPU kernels sample in double. The distributions are torch's; the streams are NumPy's algorithms (not
torch's mt19937 draws). Edge cases follow torch:

* ``_standard_gamma``: the result is at least the dtype's smallest normal (torch's clamp; ``alpha = 0`` and tiny
  ``alpha`` whose draws underflow give it), ``inf`` gives ``inf``;
* ``_sample_dirichlet``: gammas in float64 (clamped to float64's smallest normal), normalized along the last dim,
  cast, then clamped into ``[tiny, nextafter(1, 0)]`` of the dtype;
* ``poisson``: rate 0 gives 0, ``inf`` gives ``inf``; a negative or NaN rate raises torch's error. Rates past
  NumPy's limit (about 9.2e18) draw ``round(N(rate, rate))``, the normal limit, off by a skewness of
  ``1 / sqrt(rate) < 4e-10`` (torch's CPU kernel overflows its int64 count there);
* ``binomial``: ``count <= 0`` or ``prob <= 0`` gives 0, ``prob >= 1`` gives ``count``, an infinite count ``inf``;
  counts are whole numbers (``floor``: torch's inversion sampler counts whole trials too). Counts past 2**62 draw
  ``round(N(np, np(1-p)))``.

Where torch's CPU kernels produce NaN, garbage or hang, strided gives NaN instead: a NaN or negative ``alpha``
(torch: the smallest normal), a NaN ``count`` or ``prob`` (torch: an endless loop for a NaN count).
"""

from __future__ import annotations

import numpy as np

from ...dispatch.library import kernel
from ..meta import random_samplers as meta
from .common import as_numpy, store
from .sampler_grads import dirichlet_grad, standard_gamma_grad

__all__ = ["gamma64"]

_POISSON_MAX = 9.2e18  # NumPy's poisson raises past ~9.2234e18 (int64 range minus 10 standard deviations)
_BINOMIAL_MAX = float(2**62)


def _gen(generator) -> np.random.Generator:
    from .factories import _gen as cpu_generator

    return cpu_generator(generator).numpy


def _float64(t) -> np.ndarray:
    return as_numpy(t).astype(np.float64)


def gamma64(gen: np.random.Generator, alpha: np.ndarray) -> np.ndarray:
    """Standard gamma draws of shape ``alpha`` (float64); 0 for alpha 0, inf for inf, NaN for NaN or negative."""
    out = np.full(alpha.shape, np.nan)
    finite = (alpha > 0) & (alpha < np.inf)
    out[finite] = gen.standard_gamma(alpha[finite])
    out[alpha == 0] = 0.0
    out[alpha == np.inf] = np.inf
    return out


def _clamp_tiny(values: np.ndarray, np_dtype) -> np.ndarray:
    """``values`` cast to ``np_dtype`` and raised to its smallest normal (NaN stays NaN)."""
    cast = values.astype(np_dtype)
    tiny = np.finfo(np_dtype).tiny
    return np.where(cast < tiny, np_dtype.type(tiny), cast)


@kernel("CPU")
def _standard_gamma(self, generator=None):
    out = meta._standard_gamma(self)
    meta.cpu_floating_only("gamma_cpu", out.dtype)
    draws = gamma64(_gen(generator), _float64(self))
    return store(out, _clamp_tiny(draws, out.dtype.numpy_dtype))


@kernel("CPU")
def _sample_dirichlet(self, generator=None):
    out = meta._sample_dirichlet(self)
    meta.cpu_floating_only("dirichlet", out.dtype)
    if not out.numel():
        return out
    gamma = gamma64(_gen(generator), _float64(self))
    gamma = np.where(gamma < np.finfo(np.float64).tiny, np.finfo(np.float64).tiny, gamma)
    total = gamma.sum(-1, keepdims=True) if gamma.ndim else gamma
    np_dtype = out.dtype.numpy_dtype
    x = _clamp_tiny(gamma / total, np_dtype)
    top = np.nextafter(np_dtype.type(1), np_dtype.type(0))
    return store(out, np.where(x > top, top, x))


@kernel("CPU")
def poisson(self, generator=None):
    out = meta.poisson(self)
    rate = _float64(self)
    if not (rate >= 0).all():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    draws = np.zeros(rate.shape)
    gen = _gen(generator)
    small = (rate > 0) & (rate <= _POISSON_MAX)
    draws[small] = gen.poisson(rate[small])
    big = (rate > _POISSON_MAX) & (rate < np.inf)
    draws[big] = np.rint(rate[big] + np.sqrt(rate[big]) * gen.standard_normal(int(big.sum())))
    draws[rate == np.inf] = np.inf
    return store(out, draws)


@kernel("CPU")
def binomial(count, prob, generator=None):
    out = meta.binomial(count, prob)
    meta.cpu_floating_only("binomial_cpu", out.dtype)
    n, p = np.broadcast_arrays(_float64(count), _float64(prob))
    n = np.floor(n)
    draws = np.full(n.shape, np.nan)
    draws[(n <= 0) | (p <= 0)] = 0.0
    certain = (p >= 1) & (n > 0)
    draws[certain] = n[certain]
    trials = (n > 0) & (p > 0) & (p < 1)  # excludes NaN count or prob
    gen = _gen(generator)
    endless = trials & (n == np.inf)
    draws[endless] = np.inf
    normal = trials & (n > _BINOMIAL_MAX) & ~endless
    exact = trials & (n <= _BINOMIAL_MAX)
    draws[exact] = gen.binomial(n[exact].astype(np.int64), p[exact])
    if normal.any():
        nn, pp = n[normal], p[normal]
        draws[normal] = np.clip(np.rint(nn * pp + np.sqrt(nn * pp * (1 - pp)) * gen.standard_normal(nn.shape)), 0, nn)
    return store(out, draws)


@kernel("CPU")
def _standard_gamma_grad(self, output):
    out = meta._standard_gamma_grad(self, output)
    meta.cpu_floating_only("_standard_gamma_grad_cpu", out.dtype)
    alpha, x = np.broadcast_arrays(_float64(self), _float64(output))
    return store(out, standard_gamma_grad(alpha, x))


@kernel("CPU")
def _dirichlet_grad(x, alpha, total):
    out = meta._dirichlet_grad(x, alpha, total)
    meta.cpu_floating_only("_dirichlet_grad_cpu", out.dtype)
    xs, a, t = np.broadcast_arrays(_float64(x), _float64(alpha), _float64(total))
    return store(out, dirichlet_grad(xs, a, t))
