"""OpInfos: the gamma-family samplers (``_standard_gamma``, ``_sample_dirichlet``, ``poisson``, ``binomial``) and the
implicit reparameterization gradients of the first two (``_standard_gamma_grad``, ``_dirichlet_grad``).

The samplers have no NumPy reference: each ``check`` asserts the support, the shape / dtype / contiguity, rough
moments where a sample holds thousands of draws, and that a seeded ``Generator`` reproduces its draws. The
gradients have exact references, computed independently of torch's approximations (Note [Exact gamma gradients]);
their tolerances are those approximations' accuracy (about 2e-3 relative at worst over the samples).

Note [Exact gamma gradients]
``d x / d alpha = -(dF / dalpha) / f`` for a Gamma(alpha) draw ``x``. For ``x <= alpha`` from the series
``P(a, x) = e^-x sum_n x^(a+n) / Gamma(a+n+1)``: ``-sum_n x^(n+1) Gamma(a) / Gamma(a+n+1) (log x - psi(a+n+1))``
(terms of one sign, about ``10 sqrt(a)`` of them); for ``x > alpha`` from the upper tail,
``int_0^inf (1 + s/x)^(a-1) e^-s (log(x + s) - psi(a)) ds`` by 120-point Gauss-Laguerre. For a Beta(a, b) draw
(``_dirichlet_grad``, ``b = total - a``, scaled by ``1 / (1 - x)``) by Gauss-Legendre over ``u = v^2`` of
``-x / (a (1-x)^b) int_0^1 (1 - x u^(1/a))^(b-1) (log x + log(u) / a - psi(a) + psi(a+b)) du`` for ``x`` below the
mean, and of the mirrored integral over ``1 - x`` above it. Against mpmath: 1e-13 (gamma), 1e-6 (Beta) relative
over the sample ranges.
"""

from __future__ import annotations

import math

import numpy as np

from ... import dtypes as dt
from ...backends.cpu.gamma_functions import digamma
from ...factories import full, tensor
from ...ops import bound
from ...random import Generator
from ..opinfo import FLOATING, OpInfo, SampleInput, make_arg, to_device
from .helpers import err

__all__ = ["OPS", "exact_standard_gamma_grad", "exact_dirichlet_grad"]

_N = 4000  # draws per moment check
_CPU_FLOATS = (dt.float32, dt.float64)  # torch's CPU kernels of these ops (Note [Sampler dtypes and shapes])
_LAGUERRE = np.polynomial.laguerre.laggauss(120)
_LEGENDRE = tuple((n + 1) / 2 if i == 0 else n / 2 for i, n in enumerate(np.polynomial.legendre.leggauss(200)))
_GRAD_TOL = {dt.float64: (2e-3, 1e-12), dt.float32: (2e-3, 1e-5)}


def exact_standard_gamma_grad(alpha, x):
    """``d x / d alpha`` of standard gamma draws, to about 1e-13 (Note [Exact gamma gradients])."""
    a, x = np.broadcast_arrays(np.asarray(alpha, np.float64), np.asarray(x, np.float64))
    out = np.empty(a.shape)
    below = x <= a
    A, X = a[below], x[below]
    c, psi, lx = X / A, digamma(A + 1), np.log(X)
    acc = c * (lx - psi)
    for n in range(1, int(10 * math.sqrt(float(A.max(initial=1.0))) + 60)):
        c = c * X / (A + n)
        psi = psi + 1 / (A + n)
        acc = acc + c * (lx - psi)
    out[below] = -acc
    A, X = a[~below, None], x[~below, None]
    s, w = _LAGUERRE
    out[~below] = (np.exp((A - 1) * np.log1p(s / X)) * (np.log(X + s) - digamma(A))) @ w
    return out


def exact_dirichlet_grad(x, alpha, total):
    """torch's ``_dirichlet_grad`` computed by quadrature (Note [Exact gamma gradients])."""
    x, a, t = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (x, alpha, total)))
    b = t - a
    d = digamma(t) - digamma(a)
    v, w = _LEGENDRE  # nodes and weights on [0, 1]
    u = v**2
    out = np.empty(x.shape)
    low = x <= a / t
    X, A, B, D = (z[low, None] for z in (x, a, b, d))
    g = np.exp((B - 1) * np.log1p(-X * u ** (1 / A))) * (np.log(X) + 2 * np.log(v) / A + D) * 2 * v
    out[low] = -X[:, 0] * (g @ w) / (A[:, 0] * np.exp(B[:, 0] * np.log1p(-X[:, 0])))
    X, A, B, D = (z[~low, None] for z in (x, a, b, d))
    s = (1 - X) * u ** (1 / B)
    k = np.exp((A - 1) * np.log1p(-s)) * (np.log1p(-s) + D) * 2 * v
    out[~low] = (k @ w) / (B[:, 0] * np.exp((A[:, 0] - 1) * np.log(X[:, 0])))
    return out


# -- samplers -------------------------------------------------------------------------------------------------
def _reproducible(op, result, sample):
    runs = []
    for _ in range(2):
        args = to_device(sample.args, result.device.type)
        gen = Generator(result.device).manual_seed(1234)
        runs.append(op(*args, generator=gen).numpy(force=True))
    np.testing.assert_array_equal(runs[0], runs[1], err_msg="a seeded generator must reproduce its draws")


def _layout(result, sample, shape=None):
    first = sample.args[0]
    assert tuple(result.shape) == (tuple(first.shape) if shape is None else shape)
    assert result.dtype is first.dtype and result.is_contiguous()


def _moments(v, mean, var, what):
    if v.size >= _N:
        se = math.sqrt(var / v.size)
        assert abs(v.mean() - mean) < 5 * se, f"{what}: mean {v.mean():.4f}, expected {mean}"
        assert abs(v.var() / var - 1) < 0.15, f"{what}: variance {v.var():.4f}, expected {var}"


def _gamma_samples(d, rng):
    yield SampleInput((full((_N,), 2.5, dtype=d),), {}, "alpha = 2.5: moments")
    yield SampleInput((make_arg((3, 4), d, rng=rng, low=0.05, high=6),), {}, "alpha in (0.05, 6)")
    yield SampleInput((make_arg((2, 3), d, rng=rng, low=0.5, high=3, noncontiguous=True),), {}, "noncontiguous")
    yield SampleInput((make_arg((), d, rng=rng, low=0.5, high=3),), {}, "0-dim")
    yield SampleInput((make_arg((0, 2), d, rng=rng, low=1, high=2),), {}, "zero-size")


def _gamma_check(result, sample):
    _layout(result, sample)
    v = result.numpy(force=True).astype(np.float64)
    assert np.all(v >= np.finfo(result.dtype.numpy_dtype).tiny), "gamma draws are positive"
    _moments(v, 2.5, 2.5, "gamma(2.5)")
    _reproducible(bound._standard_gamma, result, sample)


def _dirichlet_samples(d, rng):
    yield SampleInput((tensor([[1.0, 2.0, 5.0]], dtype=d).expand(_N, 3).contiguous(),), {}, "moments")
    yield SampleInput((make_arg((2, 4, 3), d, rng=rng, low=0.1, high=4),), {}, "batched")
    yield SampleInput((make_arg((3, 5), d, rng=rng, low=0.3, high=2, noncontiguous=True),), {}, "noncontiguous")
    yield SampleInput((make_arg((4,), d, rng=rng, low=0.5, high=2),), {}, "one distribution")
    yield SampleInput((make_arg((), d, rng=rng, low=0.5, high=2),), {}, "0-dim: 1")
    yield SampleInput((make_arg((0, 3), d, rng=rng, low=1, high=2),), {}, "zero-size")


def _dirichlet_check(result, sample):
    _layout(result, sample)
    v = result.numpy(force=True).astype(np.float64)
    if v.size:
        assert np.all((v > 0) & (v < 1)), "Dirichlet draws lie inside the simplex"
        sums = v.sum(-1) if v.ndim else v
        np.testing.assert_allclose(sums, 1, atol=1e-5 if result.dtype is dt.float32 else 1e-12)
    if v.ndim and v.shape[0] == _N:  # concentration (1, 2, 5): means a / 8, variances a (8 - a) / (64 * 9)
        for j, a in enumerate((1.0, 2.0, 5.0)):
            _moments(v[:, j], a / 8, a * (8 - a) / 576, f"Dirichlet component {j}")
    _reproducible(bound._sample_dirichlet, result, sample)


def _poisson_samples(d, rng):
    yield SampleInput((full((_N,), 3.5, dtype=d),), {}, "rate 3.5: moments")
    yield SampleInput((full((_N,), 25.0, dtype=d),), {}, "rate 25: moments (transformed rejection)")
    yield SampleInput((make_arg((3, 4), d, rng=rng, low=0, high=40),), {}, "rates in [0, 40)")
    yield SampleInput((tensor([0.0, 0.0, 1e-4], dtype=d),), {}, "rate 0 is 0")
    yield SampleInput((make_arg((2, 3), d, rng=rng, low=0, high=5, noncontiguous=True),), {}, "noncontiguous")
    yield SampleInput((make_arg((0, 2), d, rng=rng, low=0, high=1),), {}, "zero-size")


def _poisson_check(result, sample):
    _layout(result, sample)
    v = result.numpy(force=True).astype(np.float64)
    rate = sample.args[0].numpy(force=True).astype(np.float64)
    assert np.all(v >= 0) and np.array_equal(v, np.round(v)), "Poisson draws are non-negative integers"
    assert np.all(v[rate == 0] == 0), "rate 0 gives 0"
    if rate.size >= _N:
        _moments(v, float(rate[0]), float(rate[0]), f"poisson({rate[0]})")
    _reproducible(bound.poisson, result, sample)


def _binomial_samples(d, rng):
    yield SampleInput((full((_N,), 12.0, dtype=d), full((_N,), 0.3, dtype=d)), {}, "(12, 0.3): moments (inversion)")
    yield SampleInput((full((_N,), 200.0, dtype=d), full((_N,), 0.7, dtype=d)), {}, "(200, 0.7): moments (BTRS)")
    count = bound.floor(make_arg((3, 4), d, rng=rng, low=0, high=60))
    yield SampleInput((count, make_arg((3, 4), d, rng=rng, low=0, high=1)), {}, "random counts and probs")
    yield SampleInput((tensor([0.0, 5.0, 7.0, 3.0], dtype=d), tensor([0.5, 0.0, 1.0, 0.5], dtype=d)),
                      {}, "certain outcomes")
    yield SampleInput((full((2, 3), 10.0, dtype=d), make_arg((2, 3), d, rng=rng, low=0, high=1, noncontiguous=True)),
                      {}, "noncontiguous prob")
    yield SampleInput((make_arg((0, 2), d, rng=rng, low=0, high=3), make_arg((0, 2), d, rng=rng, low=0, high=1)),
                      {}, "zero-size")


def _binomial_check(result, sample):
    _layout(result, sample)
    v = result.numpy(force=True).astype(np.float64)
    n, p = (a.numpy(force=True).astype(np.float64) for a in sample.args)
    assert np.all((v >= 0) & (v <= n)) and np.array_equal(v, np.round(v)), "draws are whole numbers in [0, count]"
    assert np.all(v[(n == 0) | (p == 0)] == 0) and np.all(v[p == 1] == n[p == 1]), "certain outcomes"
    if n.size >= _N:
        _moments(v, float(n[0] * p[0]), float(n[0] * p[0] * (1 - p[0])), f"binomial({n[0]}, {p[0]})")
    _reproducible(bound.binomial, result, sample)


def _sampler_errors(op_word):
    def errors(rng):
        yield err((make_arg((2,), dt.int64, low=1, high=3),), NotImplementedError,
                  f"\"{op_word}\" not implemented for 'Long'")

    return errors


def _binomial_errors(rng):
    f, g = make_arg((3,), dt.float32, low=0, high=1), make_arg((3,), dt.float64, low=0, high=1)
    yield err((make_arg((3,), dt.int64), f), ValueError, "binomial only supports floating-point dtypes for count, "
              "got: Long")
    yield err((f, make_arg((3,), dt.int64)), ValueError, "binomial only supports floating-point dtypes for prob, "
              "got: Long")
    yield err((g, f), RuntimeError, "Found dtype Float but expected Double")
    yield err((f, make_arg((2,), dt.float32, low=0, high=1)), RuntimeError,
              "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0")


# -- gradients --------------------------------------------------------------------------------------------------
def _gamma_grad_samples(d, rng):
    for lo, hi, what in ((0.05, 1.0, "alpha < 1"), (1.0, 8.0, "rational region"), (8.0, 60.0, "saddle point")):
        alpha = rng.uniform(lo, hi, (4, 5))
        yield SampleInput((tensor(alpha, dtype=d), tensor(rng.gamma(alpha) + 1e-3, dtype=d)), {}, what)
    yield SampleInput((tensor([20.0, 30.0], dtype=d), tensor([21.0, 29.5], dtype=d)), {},
                      "next to x = alpha")
    yield SampleInput((make_arg((3,), d, rng=rng, low=0.5, high=6), tensor(2.0, dtype=d)), {}, "0-dim x broadcast")
    yield SampleInput((make_arg((2, 3), d, rng=rng, low=0.5, high=4, noncontiguous=True),
                       make_arg((2, 3), d, rng=rng, low=0.2, high=5, noncontiguous=True)), {}, "noncontiguous")
    yield SampleInput((make_arg((0, 2), d, rng=rng, low=1, high=2), make_arg((0, 2), d, rng=rng, low=1, high=2)), {},
                      "zero-size")


def _dirichlet_grad_samples(d, rng):
    for lo, hi, what in ((0.2, 2.0, "small concentrations"), (1.0, 6.0, "rational region"), (7.0, 25.0, "both > 6")):
        a, b = rng.uniform(lo, hi, (4, 5)), rng.uniform(lo, hi, (4, 5))
        x = np.clip(rng.beta(a, b), 1e-4, 1 - 1e-4)
        yield SampleInput(tuple(tensor(v, dtype=d) for v in (x, a, a + b)), {}, what)
    yield SampleInput((make_arg((2, 3), d, rng=rng, low=0.1, high=0.9, noncontiguous=True),
                       make_arg((2, 3), d, rng=rng, low=0.5, high=3), full((2, 3), 4.0, dtype=d)), {},
                      "noncontiguous")
    yield SampleInput(tuple(make_arg((0, 2), d, rng=rng, low=0.2, high=0.5) for _ in range(3)), {}, "zero-size")


def _grad_errors(name, arity):
    def errors(rng):
        f, g = make_arg((3,), dt.float32, low=0.5, high=1), make_arg((3,), dt.float64, low=0.5, high=1)
        ints = make_arg((3,), dt.int64, low=1, high=3)
        yield err((f,) + (g,) * (arity - 1), RuntimeError, "Found dtype Double but expected Float")
        yield err((ints,) * arity, NotImplementedError, f"\"{name}_cpu\" not implemented for 'Long'")
        yield err((f,) * (arity - 1) + (make_arg((2,), dt.float32, low=0.5, high=1),), RuntimeError,
                  "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0")

    return errors


OPS = [
    OpInfo("_standard_gamma", _gamma_samples, dtypes=_CPU_FLOATS, check=_gamma_check,
           errors=_sampler_errors("gamma_cpu")),
    OpInfo("_sample_dirichlet", _dirichlet_samples, dtypes=_CPU_FLOATS, check=_dirichlet_check,
           errors=_sampler_errors("dirichlet")),
    OpInfo("poisson", _poisson_samples, dtypes=FLOATING, check=_poisson_check, errors=_sampler_errors("poisson_cpu")),
    OpInfo("binomial", _binomial_samples, dtypes=_CPU_FLOATS, check=_binomial_check, errors=_binomial_errors),
    OpInfo("_standard_gamma_grad", _gamma_grad_samples, ref=exact_standard_gamma_grad, dtypes=_CPU_FLOATS,
           tolerances=_GRAD_TOL, errors=_grad_errors("_standard_gamma_grad", 2)),
    OpInfo("_dirichlet_grad", _dirichlet_grad_samples, ref=exact_dirichlet_grad, dtypes=_CPU_FLOATS,
           tolerances=_GRAD_TOL, errors=_grad_errors("_dirichlet_grad", 3)),
]
