"""kl_divergence for every pair torch registers with Gamma, Chi2 (through Gamma), Beta, Dirichlet, Poisson and Binomial
(kl_gamma_family.py): values and gradients against torch (when installed) on every available backend (meta: shapes),
finite pairs against a Monte Carlo estimate from strided's own samplers and log densities, the same-family pairs
against closed forms in NumPy, and the infinite and refused cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

import strided as st
from strided import distributions as D
from strided.testing import available_devices

DEVICES = available_devices()
DATA_DEVICES = [d for d in DEVICES if d != "meta"]
RNG = np.random.default_rng(31)
B = (3,)
_lgamma = np.vectorize(math.lgamma, otypes=[np.float64])


def _digamma(x):
    """psi by the recurrence to x >= 10 and the asymptotic series (float64, x > 0)."""
    x = np.array(x, dtype=np.float64)
    acc = np.zeros_like(x)
    while np.any(x < 10):
        small = x < 10
        acc = acc - np.where(small, 1 / x, 0)
        x = np.where(small, x + 1, x)
    z = 1 / (x * x)
    return acc + np.log(x) - 0.5 / x - z * (1 / 12 - z * (1 / 120 - z * (1 / 252 - z * (1 / 240 - z / 132))))


def _lbeta(a, b):
    return _lgamma(a) + _lgamma(b) - _lgamma(a + b)


def _host(t) -> np.ndarray:
    return np.asarray(t.detach().cpu().numpy(), dtype=np.float64)

c1, c2, c3, c4 = (RNG.uniform(0.6, 4.0, B) for _ in range(4))
r1, r2 = RNG.uniform(0.5, 2.0, B), RNG.uniform(0.5, 2.0, B)
loc, sc = RNG.standard_normal(B), RNG.uniform(0.5, 2.0, B)
pr1, pr2 = RNG.uniform(0.1, 0.9, B), RNG.uniform(0.1, 0.9, B)
n1 = np.array([10.0, 10.0, 10.0])
lo, hi = np.array([0.1, 0.2, 0.05]), np.array([0.6, 0.9, 0.3])
dc1, dc2 = RNG.uniform(0.5, 3.0, B + (4,)), RNG.uniform(0.5, 3.0, B + (4,))


def _gamma_gamma(a, r, b, s):
    return b * np.log(r / s) + _lgamma(b) - _lgamma(a) + (a - b) * _digamma(a) + (s - r) * a / r


def _beta_beta(a, b, c, d):
    return (_lbeta(c, d) - _lbeta(a, b) + (a - c) * _digamma(a) + (b - d) * _digamma(b)
            + (c - a + d - b) * _digamma(a + b))


# (name, p(M, *params), q(M, *params), params, NumPy closed form or None, Monte Carlo?)
PAIRS = [
    ("Gamma-Gamma", lambda M, a, r, b, s: M.Gamma(a, r), lambda M, a, r, b, s: M.Gamma(b, s), (c1, r1, c2, r2),
     _gamma_gamma, True),
    ("Chi2-Chi2", lambda M, a, b: M.Chi2(a), lambda M, a, b: M.Chi2(b), (c1, c2),
     lambda a, b: _gamma_gamma(a / 2, 0.5, b / 2, 0.5), True),
    ("Beta-Beta", lambda M, a, b, c, d: M.Beta(a, b), lambda M, a, b, c, d: M.Beta(c, d), (c1, c2, c3, c4),
     _beta_beta, True),
    ("Dirichlet-Dirichlet", lambda M, a, b: M.Dirichlet(a), lambda M, a, b: M.Dirichlet(b), (dc1, dc2),
     lambda a, b: (_lgamma(a.sum(-1)) - _lgamma(b.sum(-1)) - (_lgamma(a) - _lgamma(b)).sum(-1)
                   + ((a - b) * (_digamma(a) - _digamma(a.sum(-1, keepdims=True)))).sum(-1)), True),
    ("Poisson-Poisson", lambda M, a, b: M.Poisson(a), lambda M, a, b: M.Poisson(b), (r1 * 3, r2 * 3),
     lambda a, b: a * np.log(a / b) - a + b, True),
    ("Binomial-Binomial", lambda M, n, p, q: M.Binomial(n, p), lambda M, n, p, q: M.Binomial(n, q), (n1, pr1, pr2),
     lambda n, p, q: n * (p * np.log(p / q) + (1 - p) * np.log((1 - p) / (1 - q))), True),
    ("Bernoulli-Poisson", lambda M, p, r: M.Bernoulli(p), lambda M, p, r: M.Poisson(r), (pr1, r1), None, True),
    ("Beta-ContinuousBernoulli", lambda M, a, b, p: M.Beta(a, b), lambda M, a, b, p: M.ContinuousBernoulli(p),
     (c1, c2, pr1), None, True),
    ("Beta-Pareto", lambda M, a, b, s, al: M.Beta(a, b), lambda M, a, b, s, al: M.Pareto(s, al), (c1, c2, r1, c3),
     lambda *a: np.full(B, np.inf), False),
    ("Beta-Exponential", lambda M, a, b, r: M.Beta(a, b), lambda M, a, b, r: M.Exponential(r), (c1, c2, r1), None,
     True),
    ("Beta-Gamma", lambda M, a, b, c, r: M.Beta(a, b), lambda M, a, b, c, r: M.Gamma(c, r), (c1, c2, c3, r1), None,
     True),
    ("Beta-Normal", lambda M, a, b, m, s: M.Beta(a, b), lambda M, a, b, m, s: M.Normal(m, s), (c1, c2, loc, sc), None,
     True),
    ("Beta-Uniform", lambda M, a, b, l, h: M.Beta(a, b), lambda M, a, b, l, h: M.Uniform(l, h),
     (c1, c2, np.array([0.0, -1.0, 0.1]), np.array([1.0, 2.0, 1.0])), None, False),
    ("Exponential-Beta", lambda M, r, a, b: M.Exponential(r), lambda M, r, a, b: M.Beta(a, b), (r1, c1, c2),
     lambda *a: np.full(B, np.inf), False),
    ("Exponential-Gamma", lambda M, r, a, s: M.Exponential(r), lambda M, r, a, s: M.Gamma(a, s), (r1, c1, r2), None,
     True),
    ("Gamma-Beta", lambda M, a, r, b, c: M.Gamma(a, r), lambda M, a, r, b, c: M.Beta(b, c), (c1, r1, c2, c3),
     lambda *a: np.full(B, np.inf), False),
    ("Gamma-ContinuousBernoulli", lambda M, a, r, p: M.Gamma(a, r), lambda M, a, r, p: M.ContinuousBernoulli(p),
     (c1, r1, pr1), lambda *a: np.full(B, np.inf), False),
    ("Gamma-Pareto", lambda M, a, r, s, al: M.Gamma(a, r), lambda M, a, r, s, al: M.Pareto(s, al), (c1, r1, r2, c2),
     lambda *a: np.full(B, np.inf), False),
    ("Gamma-Uniform", lambda M, a, r, l, h: M.Gamma(a, r), lambda M, a, r, l, h: M.Uniform(l, h), (c1, r1, lo, hi),
     lambda *a: np.full(B, np.inf), False),
    ("Gamma-Exponential", lambda M, a, r, s: M.Gamma(a, r), lambda M, a, r, s: M.Exponential(s), (c1, r1, r2), None,
     True),
    ("Gamma-Gumbel", lambda M, a, r, m, s: M.Gamma(a, r), lambda M, a, r, m, s: M.Gumbel(m, s), (c1, r1, loc, sc),
     None, True),
    ("Gamma-Normal", lambda M, a, r, m, s: M.Gamma(a, r), lambda M, a, r, m, s: M.Normal(m, s), (c1, r1, loc, sc),
     None, True),
    ("Gumbel-Beta", lambda M, m, s, a, b: M.Gumbel(m, s), lambda M, m, s, a, b: M.Beta(a, b), (loc, sc, c1, c2),
     lambda *a: np.full(B, np.inf), False),
    ("Gumbel-Gamma", lambda M, m, s, a, r: M.Gumbel(m, s), lambda M, m, s, a, r: M.Gamma(a, r), (loc, sc, c1, r1),
     lambda *a: np.full(B, np.inf), False),
    ("Laplace-Beta", lambda M, m, s, a, b: M.Laplace(m, s), lambda M, m, s, a, b: M.Beta(a, b), (loc, sc, c1, c2),
     lambda *a: np.full(B, np.inf), False),
    ("Laplace-Gamma", lambda M, m, s, a, r: M.Laplace(m, s), lambda M, m, s, a, r: M.Gamma(a, r), (loc, sc, c1, r1),
     lambda *a: np.full(B, np.inf), False),
    ("Normal-Beta", lambda M, m, s, a, b: M.Normal(m, s), lambda M, m, s, a, b: M.Beta(a, b), (loc, sc, c1, c2),
     lambda *a: np.full(B, np.inf), False),
    ("Normal-Gamma", lambda M, m, s, a, r: M.Normal(m, s), lambda M, m, s, a, r: M.Gamma(a, r), (loc, sc, c1, r1),
     lambda *a: np.full(B, np.inf), False),
    ("Pareto-Beta", lambda M, s, al, a, b: M.Pareto(s, al), lambda M, s, al, a, b: M.Beta(a, b), (r1, c1, c2, c3),
     lambda *a: np.full(B, np.inf), False),
    ("Pareto-Gamma", lambda M, s, al, a, r: M.Pareto(s, al), lambda M, s, al, a, r: M.Gamma(a, r),
     (r1, np.array([0.8, 2.5, 3.5]), c1, r2), None, False),  # alpha <= 1: infinite (the first)
    ("Poisson-Bernoulli", lambda M, r, p: M.Poisson(r), lambda M, r, p: M.Bernoulli(p), (r1, pr1),
     lambda *a: np.full(B, np.inf), False),
    ("Poisson-Binomial", lambda M, r, n, p: M.Poisson(r), lambda M, r, n, p: M.Binomial(n, p), (r1, n1, pr1),
     lambda *a: np.full(B, np.inf), False),
    ("Uniform-Beta", lambda M, l, h, a, b: M.Uniform(l, h), lambda M, l, h, a, b: M.Beta(a, b),
     (np.array([0.1, -0.2, 0.0]), np.array([0.6, 0.5, 1.0]), c1, c2), None, False),  # (the second leaves [0, 1])
    ("Uniform-Gamma", lambda M, l, h, a, r: M.Uniform(l, h), lambda M, l, h, a, r: M.Gamma(a, r),
     (np.array([0.1, -0.5, 0.0]), np.array([0.6, 2.0, 3.0]), c1, r1), None, False),
]
IDS = [p[0] for p in PAIRS]


def _build(pair, M, params):
    return pair[1](M, *params), pair[2](M, *params)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("pair", PAIRS, ids=IDS)
def test_kl_shape_and_closed_form(pair, device):
    params = [st.tensor(p, device=device) for p in pair[3]]
    p, q = _build(pair, D, params)
    kl = D.kl_divergence(p, q)
    assert tuple(kl.shape) == tuple(p.batch_shape) and kl.dtype == st.float64 and kl.device.type == device
    if device != "meta" and pair[4] is not None:
        np.testing.assert_allclose(_host(kl), pair[4](*pair[3]), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("pair", PAIRS, ids=IDS)
def test_kl_matches_torch_with_gradients(pair, device):
    torch = pytest.importorskip("torch")
    sp = [st.tensor(p, device=device, requires_grad=True) for p in pair[3]]
    tp = [torch.tensor(p, requires_grad=True) for p in pair[3]]
    s_kl = D.kl_divergence(*_build(pair, D, sp))
    t_kl = torch.distributions.kl_divergence(*_build(pair, torch.distributions, tp))
    assert tuple(s_kl.shape) == tuple(t_kl.shape)
    if device == "meta":
        return
    want = t_kl.detach().numpy()
    np.testing.assert_allclose(_host(s_kl), want, rtol=1e-10, atol=1e-12)
    finite = np.isfinite(want)
    if not finite.any():
        return
    w = np.where(finite, RNG.standard_normal(want.shape), 0.0)
    s_g = st.autograd.grad((st.where(st.tensor(finite, device=device), s_kl, 0.0) * st.tensor(w, device=device)).sum(),
                           sp, allow_unused=True)
    t_g = torch.autograd.grad((torch.where(torch.tensor(finite), t_kl, 0.0) * torch.tensor(w)).sum(), tp,
                              allow_unused=True)
    for sg, tg in zip(s_g, t_g):
        if tg is None:
            assert sg is None or not _host(sg).any()
        else:  # (trigamma in the Beta / Dirichlet gradients: torch's is good to ~1e-9)
            np.testing.assert_allclose(_host(sg), tg.numpy(), rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("pair", [p for p in PAIRS if p[5]], ids=[p[0] for p in PAIRS if p[5]])
def test_kl_matches_monte_carlo(pair, device):
    """``E_p[log p(x) - log q(x)]`` over 40000 of strided's draws, within 6 standard errors."""
    params = [st.tensor(p, device=device) for p in pair[3]]
    p, q = _build(pair, D, params)
    st.manual_seed(123)
    x = p.sample((40000,))
    d = _host(p.log_prob(x) - q.log_prob(x))
    kl = _host(D.kl_divergence(p, q))
    assert np.all(np.abs(d.mean(0) - kl) < 6 * d.std(0) / math.sqrt(d.shape[0]) + 1e-12), (d.mean(0), kl)


def test_binomial_kl_cases():
    p = D.Binomial(st.tensor([10.0, 12.0]), st.tensor([0.3, 0.3]))
    q = D.Binomial(st.tensor([10.0, 10.0]), st.tensor([0.4, 0.4]))
    kl = _host(D.kl_divergence(p, q))
    assert np.isfinite(kl[0]) and kl[1] == np.inf  # q cannot reach 11 or 12
    with pytest.raises(NotImplementedError, match="KL between Binomials where q.total_count > p.total_count"):
        D.kl_divergence(q, p)


def test_chi2_dispatches_to_gamma():
    from strided.distributions import kl_gamma_family

    assert D.kl.__dict__["_dispatch_kl"](D.Chi2, D.Chi2) is kl_gamma_family._kl_gamma_gamma
    assert D.kl.__dict__["_dispatch_kl"](D.Chi2, D.Beta) is kl_gamma_family._kl_gamma_infinity
