"""strided.distributions.kl_divergence: every registered pair against a Monte Carlo estimate from strided's own
samplers and log densities, the same-family pairs against closed forms in NumPy, all pairs against torch (values and
gradients, when installed), on every available backend (meta: shapes only); and register_kl's dispatch rule."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import strided as st
from strided import distributions as D
from strided.distributions import kl as KL
from strided.testing import available_devices

DEVICES = available_devices()
DATA_DEVICES = [d for d in DEVICES if d != "meta"]
RNG = np.random.default_rng(99)
B = (3,)


def _host(t) -> np.ndarray:
    return np.asarray(t.detach().cpu().numpy(), dtype=np.float64)


def _spd(n):
    a = RNG.standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


loc1, loc2 = RNG.standard_normal(B), RNG.standard_normal(B)
sc1, sc2 = RNG.uniform(0.5, 2.0, B), RNG.uniform(0.5, 2.0, B)
pr1, pr2 = RNG.uniform(0.1, 0.9, B), RNG.uniform(0.1, 0.9, B)
cat1, cat2 = RNG.uniform(0.1, 1.0, B + (4,)), RNG.uniform(0.1, 1.0, B + (4,))
mvl1, mvl2 = RNG.standard_normal(B + (3,)), RNG.standard_normal(B + (3,))
cov1, cov2 = _spd(3), _spd(3)
lo1, lo2 = np.array([0.2, 0.1, 0.5]), np.array([0.0, 0.1, 0.0])
hi1, hi2 = lo1 + np.array([0.5, 1.0, 0.3]), lo2 + np.array([2.0, 1.5, 1.0])

# (name, p(M, params), q(M, params), params, numpy closed form or None); M: strided's or torch's distributions
PAIRS = [
    ("Normal-Normal", lambda M, a, b, c, d: M.Normal(a, b), lambda M, a, b, c, d: M.Normal(c, d),
     (loc1, sc1, loc2, sc2), lambda a, b, c, d: np.log(d / b) + (b**2 + (a - c) ** 2) / (2 * d**2) - 0.5),
    ("Bernoulli-Bernoulli", lambda M, a, b: M.Bernoulli(a), lambda M, a, b: M.Bernoulli(b), (pr1, pr2),
     lambda a, b: a * np.log(a / b) + (1 - a) * np.log((1 - a) / (1 - b))),
    ("Categorical-Categorical", lambda M, a, b: M.Categorical(a), lambda M, a, b: M.Categorical(b), (cat1, cat2),
     lambda a, b: (a / a.sum(-1, keepdims=True) * (np.log(a / a.sum(-1, keepdims=True))
                                                   - np.log(b / b.sum(-1, keepdims=True)))).sum(-1)),
    ("OneHotCategorical-OneHotCategorical", lambda M, a, b: M.OneHotCategorical(a),
     lambda M, a, b: M.OneHotCategorical(b), (cat1, cat2), None),
    ("Cauchy-Cauchy", lambda M, a, b, c, d: M.Cauchy(a, b), lambda M, a, b, c, d: M.Cauchy(c, d),
     (loc1, sc1, loc2, sc2), lambda a, b, c, d: np.log(((b + d) ** 2 + (a - c) ** 2) / (4 * b * d))),
    ("Exponential-Exponential", lambda M, a, b: M.Exponential(a), lambda M, a, b: M.Exponential(b), (sc1, sc2),
     lambda a, b: np.log(a / b) + b / a - 1),
    ("Geometric-Geometric", lambda M, a, b: M.Geometric(a), lambda M, a, b: M.Geometric(b), (pr1, pr2),
     lambda a, b: np.log(a / b) + (1 - a) / a * np.log((1 - a) / (1 - b))),
    ("Laplace-Laplace", lambda M, a, b, c, d: M.Laplace(a, b), lambda M, a, b, c, d: M.Laplace(c, d),
     (loc1, sc1, loc2, sc2),
     lambda a, b, c, d: np.log(d / b) + np.abs(a - c) / d + b / d * np.exp(-np.abs(a - c) / b) - 1),
    ("MultivariateNormal-MultivariateNormal", lambda M, a, b, c, d: M.MultivariateNormal(a, b),
     lambda M, a, b, c, d: M.MultivariateNormal(c, scale_tril=d), (mvl1, cov1, mvl2, np.linalg.cholesky(cov2)),
     lambda a, b, c, d: 0.5 * (np.trace(np.linalg.solve(d @ d.T, b)) - 3 + np.linalg.slogdet(d @ d.T)[1]
                               - np.linalg.slogdet(b)[1]
                               + np.einsum("...i,ij,...j->...", c - a, np.linalg.inv(d @ d.T), c - a))),
    ("Uniform-Uniform", lambda M, a, b, c, d: M.Uniform(a, b), lambda M, a, b, c, d: M.Uniform(c, d),
     (lo1, hi1, lo2, hi2),
     lambda a, b, c, d: np.where((c > a) | (d < b), np.inf, np.log((d - c) / (b - a)))),
    ("Independent-Independent", lambda M, a, b, c, d: M.Independent(M.Normal(a, b), 1),
     lambda M, a, b, c, d: M.Independent(M.Normal(c, d), 1), (loc1, sc1, loc2, sc2),
     lambda a, b, c, d: (np.log(d / b) + (b**2 + (a - c) ** 2) / (2 * d**2) - 0.5).sum(-1)),
    ("LogNormal-LogNormal", lambda M, a, b, c, d: M.LogNormal(a, b), lambda M, a, b, c, d: M.LogNormal(c, d),
     (loc1, sc1, loc2, sc2), lambda a, b, c, d: np.log(d / b) + (b**2 + (a - c) ** 2) / (2 * d**2) - 0.5),
    ("Exponential-Uniform", lambda M, a, b, c: M.Exponential(a), lambda M, a, b, c: M.Uniform(b, c),
     (sc1, lo2, hi2), lambda a, b, c: np.full(B, np.inf)),
    ("Exponential-Gumbel", lambda M, a, b, c: M.Exponential(a), lambda M, a, b, c: M.Gumbel(b, c),
     (sc1, loc2, sc2), None),
    ("Exponential-Normal", lambda M, a, b, c: M.Exponential(a), lambda M, a, b, c: M.Normal(b, c),
     (sc1, loc2, sc2), None),
    ("Gumbel-Gumbel", lambda M, a, b, c, d: M.Gumbel(a, b), lambda M, a, b, c, d: M.Gumbel(c, d),
     (loc1, sc1, loc2, sc2),
     lambda a, b, c, d: (-np.log(b / d) - c / d + a / d + b / d * np.euler_gamma
                         + np.exp(c / d + np.vectorize(math.lgamma)(1 + b / d) - a / d) - (1 + np.euler_gamma))),
    ("Gumbel-Exponential", lambda M, a, b, c: M.Gumbel(a, b), lambda M, a, b, c: M.Exponential(c),
     (loc1, sc1, sc2), lambda a, b, c: np.full(B, np.inf)),
    ("Gumbel-Uniform", lambda M, a, b, c, d: M.Gumbel(a, b), lambda M, a, b, c, d: M.Uniform(c, d),
     (loc1, sc1, lo2, hi2), lambda a, b, c, d: np.full(B, np.inf)),
    ("Gumbel-Normal", lambda M, a, b, c, d: M.Gumbel(a, b), lambda M, a, b, c, d: M.Normal(c, d),
     (loc1, sc1, loc2, sc2), None),
    ("Laplace-Exponential", lambda M, a, b, c: M.Laplace(a, b), lambda M, a, b, c: M.Exponential(c),
     (loc1, sc1, sc2), lambda a, b, c: np.full(B, np.inf)),
    ("Laplace-Uniform", lambda M, a, b, c, d: M.Laplace(a, b), lambda M, a, b, c, d: M.Uniform(c, d),
     (loc1, sc1, lo2, hi2), lambda a, b, c, d: np.full(B, np.inf)),
    ("Laplace-Normal", lambda M, a, b, c, d: M.Laplace(a, b), lambda M, a, b, c, d: M.Normal(c, d),
     (loc1, sc1, loc2, sc2), None),
    ("Normal-Exponential", lambda M, a, b, c: M.Normal(a, b), lambda M, a, b, c: M.Exponential(c),
     (loc1, sc1, sc2), lambda a, b, c: np.full(B, np.inf)),
    ("Normal-Uniform", lambda M, a, b, c, d: M.Normal(a, b), lambda M, a, b, c, d: M.Uniform(c, d),
     (loc1, sc1, lo2, hi2), lambda a, b, c, d: np.full(B, np.inf)),
    ("Normal-Gumbel", lambda M, a, b, c, d: M.Normal(a, b), lambda M, a, b, c, d: M.Gumbel(c, d),
     (loc1, sc1, loc2, sc2), None),
    ("Normal-Laplace", lambda M, a, b, c, d: M.Normal(a, b), lambda M, a, b, c, d: M.Laplace(c, d),
     (loc1, sc1, loc2, sc2), None),
    ("Uniform-Exponential", lambda M, a, b, c: M.Uniform(a, b), lambda M, a, b, c: M.Exponential(c),
     (lo1 - np.array([0.0, 0.5, 0.0]), hi1, sc2), None),  # the middle one starts below 0: infinite
    ("Uniform-Gumbel", lambda M, a, b, c, d: M.Uniform(a, b), lambda M, a, b, c, d: M.Gumbel(c, d),
     (lo1, hi1, loc2, sc2), None),
    ("Uniform-Normal", lambda M, a, b, c, d: M.Uniform(a, b), lambda M, a, b, c, d: M.Normal(c, d),
     (lo1, hi1, loc2, sc2), None),
]
IDS = [p[0] for p in PAIRS]


def _build(pair, M, params):
    _, make_p, make_q, _, _ = pair
    return make_p(M, *params), make_q(M, *params)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("pair", PAIRS, ids=IDS)
def test_kl_shape_and_closed_form(pair, device):
    params = [st.tensor(p, device=device) for p in pair[3]]
    p, q = _build(pair, D, params)
    kl = D.kl_divergence(p, q)
    assert tuple(kl.shape) == tuple(p.batch_shape) and kl.dtype == st.float64 and kl.device.type == device
    if device != "meta" and pair[4] is not None:
        np.testing.assert_allclose(_host(kl), pair[4](*pair[3]), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("pair", PAIRS, ids=IDS)
def test_kl_matches_monte_carlo(pair, device):
    """KL(p || q) = E_p[log p(x) - log q(x)]: a finite KL lies within 5 standard errors of the mean over samples of
    p; an infinite one has samples of p outside q's support (log q = -inf there) or q's support is excluded."""
    params = [st.tensor(p, device=device) for p in pair[3]]
    p, q = _build(pair, D, params)
    kl = _host(D.kl_divergence(p, q))
    n = 20000
    st.manual_seed(21)
    x = p.sample((n,))
    q._validate_args = False  # samples outside q's support are scored, not rejected
    diff = _host(p.log_prob(x) - q.log_prob(x))
    finite = np.isfinite(kl)
    diff, kl_finite = diff.reshape(n, -1)[:, finite.reshape(-1)], kl[finite]
    mc, se = diff.mean(0), diff.std(0) / np.sqrt(n)
    assert np.all(np.abs(mc - kl_finite) < 5 * se + 1e-9), (mc, kl_finite)
    outside = ~_host(q.support.check(x)).astype(bool)
    assert np.array_equal(outside.any(0), ~finite)  # infinite exactly where p puts mass outside q's support

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("pair", PAIRS, ids=IDS)
def test_kl_matches_torch_with_gradients(pair, device):
    torch = pytest.importorskip("torch")
    sp = [st.tensor(p, device=device, requires_grad=True) for p in pair[3]]
    tp = [torch.tensor(p, requires_grad=True) for p in pair[3]]
    s_kl = D.kl_divergence(*_build(pair, D, sp))
    t_kl = torch.distributions.kl_divergence(*_build(pair, torch.distributions, tp))
    assert tuple(s_kl.shape) == tuple(t_kl.shape)
    if device != "meta":
        np.testing.assert_allclose(_host(s_kl), t_kl.detach().numpy(), rtol=1e-9, atol=1e-12)
    finite = torch.isfinite(t_kl)
    if not finite.any() or not t_kl.requires_grad:
        return
    w = RNG.standard_normal(tuple(t_kl.shape)) * finite.numpy()
    s_grads = st.autograd.grad(st.where(st.tensor(finite.numpy(), device=device), s_kl, 0.0).mul(
        st.tensor(w, device=device)).sum(), sp, allow_unused=True)
    t_grads = torch.autograd.grad(torch.where(finite, t_kl, 0.0).mul(torch.tensor(w)).sum(), tp, allow_unused=True)
    for sg, tg in zip(s_grads, t_grads):
        if tg is None:
            assert sg is None or device == "meta" or not _host(sg).any()
        elif device == "meta":
            assert tuple(sg.shape) == tuple(tg.shape)
        else:
            np.testing.assert_allclose(_host(sg), tg.numpy(), rtol=1e-8, atol=1e-11)


def test_kl_support_edges():
    """Bernoulli and Categorical with zero probabilities: 0 where p has none, infinite where q has none."""
    p, q = D.Bernoulli(st.tensor([0.0, 1.0, 0.5, 0.3])), D.Bernoulli(st.tensor([0.5, 0.5, 0.0, 1.0]))
    got = _host(D.kl_divergence(p, q))
    np.testing.assert_allclose(got[:2], [np.log(2.0), np.log(2.0)], rtol=1e-6)
    assert np.isinf(got[2:]).all()
    p = D.Categorical(st.tensor([[0.0, 0.5, 0.5], [0.5, 0.5, 0.0]]))
    q = D.Categorical(st.tensor([[0.2, 0.4, 0.4], [0.0, 0.5, 0.5]]))
    got = _host(D.kl_divergence(p, q))
    np.testing.assert_allclose(got[0], np.log(0.5 / 0.4), rtol=1e-6)
    assert np.isinf(got[1])
    same = D.Categorical(st.tensor([0.0, 0.5, 0.5]))  # a class neither has counts 0, not inf
    assert _host(D.kl_divergence(same, same)) == 0.0
    assert _host(D.kl_divergence(D.Bernoulli(st.tensor(1.0)), D.Bernoulli(st.tensor(1.0)))) == 0.0
    assert _host(D.kl_divergence(D.Uniform(0.0, 1.0), D.Uniform(0.0, 1.0))) == 0.0
    got = _host(D.kl_divergence(D.Uniform(st.tensor([0.0, 0.0]), 1.0), D.Uniform(st.tensor([0.5, -1.0]), 2.0)))
    assert np.isinf(got[0]) and got[1] == pytest.approx(np.log(3.0))


def test_exponential_family_bregman_kl():
    """The Bregman fallback (for same-type exponential families) reproduces the registered closed forms."""
    pairs = [(D.Normal(st.tensor(loc1), st.tensor(sc1)), D.Normal(st.tensor(loc2), st.tensor(sc2))),
             (D.Exponential(st.tensor(sc1)), D.Exponential(st.tensor(sc2))),
             (D.Bernoulli(st.tensor(pr1)), D.Bernoulli(st.tensor(pr2)))]
    for p, q in pairs:
        np.testing.assert_allclose(_host(KL._kl_expfamily_expfamily(p, q)), _host(D.kl_divergence(p, q)),
                                   rtol=1e-9)
    with pytest.raises(NotImplementedError, match="cross KL-divergence between different exponential families"):
        KL._kl_expfamily_expfamily(pairs[0][0], pairs[1][0])


def test_kl_mismatches():
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p type Categorical and "
                                                  "q type Normal"):
        D.kl_divergence(D.Categorical(st.ones(2)), D.Normal(0.0, 1.0))
    with pytest.raises(NotImplementedError, match="cross KL-divergence"):  # both exponential families: Bregman rule
        D.kl_divergence(D.Bernoulli(0.5), D.Exponential(1.0))
    with pytest.raises(NotImplementedError):
        base = D.Normal(st.zeros(2, 2), 1.0)
        D.kl_divergence(D.Independent(base, 1), D.Independent(base, 2))
    with pytest.raises(ValueError, match="KL-divergence between two Multivariate Normals with different event shapes"):
        D.kl_divergence(D.MultivariateNormal(st.zeros(2), st.eye(2)), D.MultivariateNormal(st.zeros(3), st.eye(3)))


def test_register_kl_dispatch():
    """Note [KL dispatch]: the most specific registration wins; ties warn; registering clears the memo."""

    class P1(D.Normal):
        pass

    class P2(P1):
        pass

    class Q1(D.Normal):
        pass

    class Q2(Q1):
        pass

    added = []

    def reg(a, b, value):
        added.append((a, b))
        return D.register_kl(a, b)(lambda p, q: st.tensor(value))

    try:
        p, q = P2(0.0, 1.0), Q2(0.0, 1.0)
        assert float(D.kl_divergence(p, q)) == 0.0  # (Normal, Normal) until something more specific
        reg(P1, Q1, 1.0)
        assert float(D.kl_divergence(p, q)) == 1.0
        assert float(D.kl_divergence(D.Normal(0.0, 1.0), q)) == 0.0
        reg(P2, D.Normal, 2.0)
        reg(D.Normal, Q2, 3.0)
        with pytest.warns(RuntimeWarning, match="Ambiguous kl_divergence\\(P2, Q2\\). Please register_kl\\(P2, Q2\\)"):
            assert float(D.kl_divergence(p, q)) == 2.0  # the left-to-right order's choice, as torch
        reg(P2, Q2, 4.0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert float(D.kl_divergence(p, q)) == 4.0
    finally:
        for key in added:
            KL._KL_REGISTRY.pop(key, None)
        KL._KL_MEMOIZE.clear()
    assert float(D.kl_divergence(P2(0.0, 1.0), Q2(0.0, 1.0))) == 0.0
    with pytest.raises(TypeError, match="Expected type_p to be a Distribution subclass but got <class 'int'>"):
        D.register_kl(int, D.Normal)
    with pytest.raises(TypeError, match="Expected type_q to be a Distribution subclass"):
        D.register_kl(D.Normal, 3)


def test_kl_registry_matches_torch():
    """Every pair registered here is one torch registers (with the same classes by name)."""
    tkl = pytest.importorskip("torch.distributions.kl")

    torch_pairs = {(a.__name__, b.__name__) for a, b in tkl._KL_REGISTRY}
    ours = {(a.__name__, b.__name__) for a, b in KL._KL_REGISTRY}
    assert ours <= torch_pairs
    ours_classes = {c.__name__ for pair in KL._KL_REGISTRY for c in pair}
    missing = {pair for pair in torch_pairs if set(pair) <= ours_classes} - ours
    assert not missing
