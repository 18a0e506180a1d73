"""strided.distributions' distributions with events or index values (Categorical, OneHotCategorical,
MultivariateNormal, Independent, RelaxedBernoulli, RelaxedOneHotCategorical) and TransformedDistribution with its
transforms, on every available backend: values against NumPy closed forms, against torch (when installed) with
gradients, sample statistics under a fixed seed, shapes, expand. Meta checks shapes and dtypes only."""

from __future__ import annotations

import math

import numpy as np
import pytest

import strided as st
from strided import distributions as D
from strided.distributions import transforms as T
from strided.testing import available_devices

DEVICES = available_devices()
DATA_DEVICES = [d for d in DEVICES if d != "meta"]
RNG = np.random.default_rng(77)


def _host(t) -> np.ndarray:
    return np.asarray(t.detach().cpu().numpy(), dtype=np.float64)


def _t(a, device="cpu", grad=False, dtype=None):
    t = st.tensor(np.asarray(a), device=device, dtype=dtype)
    return t.requires_grad_() if grad else t


def _check(got, want, device, rtol=1e-10, atol=1e-12):
    want = np.asarray(want, dtype=np.float64)
    assert tuple(got.shape) == want.shape
    if device != "meta":
        np.testing.assert_allclose(_host(got), want, rtol=rtol, atol=atol)


def _spd(n, batch=()):
    a = RNG.standard_normal((*batch, n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _grads_match(torch, s_out, sp, t_out, tp, device, rtol=1e-9):
    w = RNG.standard_normal(tuple(t_out.shape))
    # retain_graph: derived parameters (the Cholesky factor, lazy logits) are shared between methods' graphs
    s_grads = st.autograd.grad((s_out * _t(w, device)).sum(), sp, allow_unused=True, retain_graph=True)
    t_grads = torch.autograd.grad((t_out * torch.tensor(w)).sum(), tp, allow_unused=True, retain_graph=True)
    for sg, tg in zip(s_grads, t_grads):
        if tg is None:
            assert sg is None or device == "meta" or not _host(sg).any()
        else:
            _check(sg, tg.numpy(), device, rtol=rtol, atol=1e-11)


# -- Categorical / OneHotCategorical ----------------------------------------------------------------------------------
PROBS = RNG.uniform(0.1, 1.0, (2, 4))  # unnormalized: Categorical normalizes
P = PROBS / PROBS.sum(-1, keepdims=True)
LOGITS = RNG.standard_normal((2, 4))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("by", ["probs", "logits"])
def test_categorical_values(device, by):
    param = PROBS if by == "probs" else LOGITS
    p = P if by == "probs" else np.exp(LOGITS) / np.exp(LOGITS).sum(-1, keepdims=True)
    d = D.Categorical(**{by: _t(param, device)})
    assert d.batch_shape == (2,) and d.event_shape == () and d.param_shape == (2, 4)
    assert repr(d.support) == "IntegerInterval(lower_bound=0, upper_bound=3)"
    _check(d.probs, p, device)
    _check(d.logits, np.log(p), device)
    value = np.array([[0, 3], [2, 1], [1, 1]])
    lp = d.log_prob(_t(value, device))
    assert lp.dtype == st.float64
    _check(lp, np.log(p[np.arange(2), value]), device)
    _check(d.entropy(), -(p * np.log(p)).sum(-1), device)
    assert d.mode.dtype == st.int64
    _check(d.mode, p.argmax(-1), device)
    _check(d.mean, np.full(2, np.nan), device)
    _check(d.variance, np.full(2, np.nan), device)
    support = d.enumerate_support()
    assert tuple(support.shape) == (4, 2) and support.dtype == st.int64
    _check(support, np.repeat(np.arange(4)[:, None], 2, 1), device)
    assert tuple(d.enumerate_support(expand=False).shape) == (4, 1)
    e = d.expand((3, 2))
    assert e.batch_shape == (3, 2) and tuple(e.sample((5,)).shape) == (5, 3, 2)
    _check(e.log_prob(_t(value, device)), np.log(p[np.arange(2), value]), device)


def test_categorical_zero_probability_entropy():
    # a zero probability contributes 0, not 0 * -inf = nan (the logits clamp to the dtype's min)
    d = D.Categorical(st.tensor([0.0, 0.25, 0.75]))
    want = -(0.25 * np.log(0.25) + 0.75 * np.log(0.75))
    np.testing.assert_allclose(_host(d.entropy()), want, rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_categorical_matches_torch(device):
    torch = pytest.importorskip("torch")
    value = np.array([[0, 3], [2, 1]])
    for by, param in (("probs", PROBS), ("logits", LOGITS)):
        sp, tp = _t(param, device, grad=True), torch.tensor(param, requires_grad=True)
        sd, td = D.Categorical(**{by: sp}), torch.distributions.Categorical(**{by: tp})
        assert repr(sd) == repr(td).replace("torch.", "strided.")
        s_lp, t_lp = sd.log_prob(_t(value, device)), td.log_prob(torch.tensor(value))
        _check(s_lp, t_lp.detach().numpy(), device)
        _grads_match(torch, s_lp, [sp], t_lp, [tp], device)
        _check(sd.entropy(), td.entropy().detach().numpy(), device)
        _grads_match(torch, sd.entropy(), [sp], td.entropy(), [tp], device)


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_categorical_sample_frequencies(device):
    d = D.Categorical(_t(PROBS, device))
    st.manual_seed(3)
    n = 20000
    x = _host(d.sample((n,)))
    assert x.shape == (n, 2)
    freq = np.stack([(x == k).mean(0) for k in range(4)], -1)
    assert np.all(np.abs(freq - P) < 5 * np.sqrt(P * (1 - P) / n))
    st.manual_seed(3)
    np.testing.assert_array_equal(_host(d.sample((n,))), x)


@pytest.mark.parametrize("device", DEVICES)
def test_one_hot_categorical(device):
    d = D.OneHotCategorical(_t(PROBS, device))
    assert d.batch_shape == (2,) and d.event_shape == (4,)
    st.manual_seed(4)
    x = d.sample((3,))
    assert tuple(x.shape) == (3, 2, 4) and x.dtype == st.float64
    _check(d.mean, P, device)
    _check(d.variance, P * (1 - P), device)
    _check(d.entropy(), -(P * np.log(P)).sum(-1), device)
    mode = np.eye(4)[P.argmax(-1)]
    _check(d.mode, mode, device)
    value = np.eye(4)[[[1, 3], [0, 0]]]
    _check(d.log_prob(_t(value, device)), np.log(P[np.arange(2), [[1, 3], [0, 0]]]), device)
    support = d.enumerate_support()
    assert tuple(support.shape) == (4, 2, 4)
    _check(support[:, 0], np.eye(4), device)
    if device != "meta":
        xs = _host(x)
        assert np.all(xs.sum(-1) == 1) and np.all((xs == 0) | (xs == 1))
        st.manual_seed(4)
        np.testing.assert_array_equal(_host(d.sample((3,))), xs)
        n = 20000
        freq = _host(d.sample((n,))).mean(0)
        assert np.all(np.abs(freq - P) < 5 * np.sqrt(P * (1 - P) / n))
    e = d.expand((5, 2))
    assert e.batch_shape == (5, 2) and e.event_shape == (4,) and tuple(e.sample().shape) == (5, 2, 4)


@pytest.mark.parametrize("device", DEVICES)
def test_one_hot_straight_through_gradient(device):
    p = _t(PROBS, device, grad=True)
    d = D.OneHotCategoricalStraightThrough(p)
    assert d.has_rsample and not D.OneHotCategorical(p).has_rsample
    x = d.rsample((3,))
    w = RNG.standard_normal((3, 2, 4))
    (g,) = st.autograd.grad((x * _t(w, device)).sum(), [p])
    # d sample / d probs_normalized = identity: the gradient is that of sum_s w_s . (p / p.sum(-1))
    ws = w.sum(0)
    s = PROBS.sum(-1, keepdims=True)
    _check(g, ws / s - (ws * PROBS).sum(-1, keepdims=True) / s**2, device, rtol=1e-9)


# -- MultivariateNormal -----------------------------------------------------------------------------------------------
MVN_LOC = RNG.standard_normal((4, 1, 3))
MVN_COV = _spd(3, (2,))
MVN_X = RNG.standard_normal((5, 4, 2, 3))


def _mvn_logpdf(x, mu, cov):
    diff = x - mu
    sol = np.linalg.solve(np.broadcast_to(cov, diff.shape + (3,)), diff[..., None])[..., 0]
    _, logdet = np.linalg.slogdet(cov)
    return -0.5 * ((diff * sol).sum(-1) + 3 * np.log(2 * np.pi) + logdet)


def _mvn_param(kind):
    return {"covariance_matrix": MVN_COV, "precision_matrix": np.linalg.inv(MVN_COV),
            "scale_tril": np.linalg.cholesky(MVN_COV)}[kind]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kind", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_multivariate_normal_values(device, kind):
    d = D.MultivariateNormal(_t(MVN_LOC, device), **{kind: _t(_mvn_param(kind), device)})
    assert d.batch_shape == (4, 2) and d.event_shape == (3,)
    _check(d.log_prob(_t(MVN_X, device)), _mvn_logpdf(MVN_X, MVN_LOC, MVN_COV), device, rtol=1e-9)
    _, logdet = np.linalg.slogdet(MVN_COV)
    _check(d.entropy(), np.broadcast_to(0.5 * (3 * (1 + np.log(2 * np.pi)) + logdet), (4, 2)), device, rtol=1e-9)
    _check(d.mean, np.broadcast_to(MVN_LOC, (4, 2, 3)), device)
    _check(d.mode, np.broadcast_to(MVN_LOC, (4, 2, 3)), device)
    _check(d.variance, np.broadcast_to(np.diagonal(MVN_COV, 0, -2, -1), (4, 2, 3)), device, rtol=1e-9)
    _check(d.covariance_matrix, np.broadcast_to(MVN_COV, (4, 2, 3, 3)), device, rtol=1e-9)
    _check(d.precision_matrix, np.broadcast_to(np.linalg.inv(MVN_COV), (4, 2, 3, 3)), device, rtol=1e-8)
    _check(d.scale_tril, np.broadcast_to(np.linalg.cholesky(MVN_COV), (4, 2, 3, 3)), device, rtol=1e-9)
    e = d.expand((6, 4, 2))
    assert e.batch_shape == (6, 4, 2) and tuple(e.rsample((2,)).shape) == (2, 6, 4, 2, 3)
    _check(e.log_prob(_t(MVN_X[0], device)), np.broadcast_to(_mvn_logpdf(MVN_X[0], MVN_LOC, MVN_COV), (6, 4, 2)),
           device, rtol=1e-9)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kind", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_multivariate_normal_matches_torch(device, kind):
    torch = pytest.importorskip("torch")
    sl, tl = _t(MVN_LOC, device, grad=True), torch.tensor(MVN_LOC, requires_grad=True)
    sm, tm = _t(_mvn_param(kind), device, grad=True), torch.tensor(_mvn_param(kind), requires_grad=True)
    sd = D.MultivariateNormal(sl, **{kind: sm})
    td = torch.distributions.MultivariateNormal(tl, **{kind: tm})
    assert repr(sd) == repr(td).replace("torch.", "strided.")
    s_lp, t_lp = sd.log_prob(_t(MVN_X, device)), td.log_prob(torch.tensor(MVN_X))
    _check(s_lp, t_lp.detach().numpy(), device, rtol=1e-9)
    _grads_match(torch, s_lp, [sl, sm], t_lp, [tl, tm], device, rtol=1e-7)
    _grads_match(torch, sd.entropy(), [sl, sm], td.entropy(), [tl, tm], device, rtol=1e-7)


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_multivariate_normal_sample_moments(device):
    """The sample mean and covariance lie within 5 standard errors of loc and the covariance matrix."""
    loc, cov = np.array([1.0, -2.0, 0.5]), _spd(3)
    d = D.MultivariateNormal(_t(loc, device), _t(cov, device))
    st.manual_seed(9)
    n = 20000
    x = _host(d.sample((n,)))
    assert x.shape == (n, 3)
    se = np.sqrt(np.diag(cov) / n)
    assert np.all(np.abs(x.mean(0) - loc) < 5 * se)
    emp = np.cov(x.T)
    se_cov = np.sqrt((np.outer(np.diag(cov), np.diag(cov)) + cov**2) / n)
    assert np.all(np.abs(emp - cov) < 5 * se_cov)


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_multivariate_normal_rsample_matches_torch(device, monkeypatch):
    torch = pytest.importorskip("torch")
    import torch.distributions.multivariate_normal as tmvn

    loc, cov = np.array([1.0, -2.0, 0.5]), _spd(3)
    sl, sc = _t(loc, device, grad=True), _t(np.linalg.cholesky(cov), device, grad=True)
    tl, tc = torch.tensor(loc, requires_grad=True), torch.tensor(np.linalg.cholesky(cov), requires_grad=True)
    st.manual_seed(2)
    eps = _host(st.randn((4, 3), dtype=st.float64, device=device))
    monkeypatch.setattr(tmvn, "_standard_normal", lambda *a, **k: torch.tensor(eps))
    st.manual_seed(2)
    sx = D.MultivariateNormal(sl, scale_tril=sc).rsample((4,))
    tx = torch.distributions.MultivariateNormal(tl, scale_tril=tc).rsample((4,))
    _check(sx, tx.detach().numpy(), device)
    _grads_match(torch, sx, [sl, sc], tx, [tl, tc], device)


def test_multivariate_normal_errors():
    with pytest.raises(ValueError, match="loc must be at least one-dimensional."):
        D.MultivariateNormal(st.tensor(0.0), st.eye(1))
    with pytest.raises(ValueError, match="Exactly one of covariance_matrix or precision_matrix or scale_tril"):
        D.MultivariateNormal(st.zeros(2))
    with pytest.raises(ValueError, match="Exactly one of"):
        D.MultivariateNormal(st.zeros(2), st.eye(2), scale_tril=st.eye(2))
    with pytest.raises(ValueError, match="covariance_matrix must be at least two-dimensional, with optional"):
        D.MultivariateNormal(st.zeros(2), st.ones(2))
    with pytest.raises(ValueError, match="scale_tril matrix must be at least two-dimensional"):
        D.MultivariateNormal(st.zeros(2), scale_tril=st.ones(2))
    with pytest.raises(ValueError, match="precision_matrix must be at least two-dimensional"):
        D.MultivariateNormal(st.zeros(2), precision_matrix=st.ones(2))
    with pytest.raises(ValueError, match="to satisfy the constraint PositiveDefinite"):
        D.MultivariateNormal(st.zeros(2), st.tensor([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match="to satisfy the constraint LowerCholesky"):
        D.MultivariateNormal(st.zeros(2), scale_tril=st.tensor([[1.0, 1.0], [0.0, 1.0]]))


# -- Independent ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_independent(device):
    loc, scale = RNG.standard_normal((4, 2, 3)), RNG.uniform(0.5, 2, (4, 2, 3))
    base = D.Normal(_t(loc, device), _t(scale, device))
    d = D.Independent(base, 2)
    assert d.batch_shape == (4,) and d.event_shape == (2, 3) and d.has_rsample
    assert repr(d) == "Independent(Normal(loc: strided.Size([4, 2, 3]), scale: strided.Size([4, 2, 3])), 2)"
    assert repr(d.support) == "IndependentConstraint(Real(), 2)"
    x = RNG.standard_normal((5, 4, 2, 3))
    ref = (-((x - loc) ** 2) / (2 * scale**2) - np.log(scale) - 0.5 * np.log(2 * np.pi)).sum((-1, -2))
    _check(d.log_prob(_t(x, device)), ref, device)
    _check(d.entropy(), (0.5 + 0.5 * np.log(2 * np.pi) + np.log(scale)).sum((-1, -2)), device)
    _check(d.mean, loc, device)
    _check(d.variance, scale**2, device)
    st.manual_seed(1)
    assert tuple(d.rsample((7,)).shape) == (7, 4, 2, 3)
    e = d.expand((5, 4))
    assert e.batch_shape == (5, 4) and e.event_shape == (2, 3) and e.base_dist.batch_shape == (5, 4, 2, 3)
    with pytest.raises(ValueError, match=r"Expected reinterpreted_batch_ndims <= len\(base_distribution.batch_shape\)"
                                         r", actual 4 vs 3"):
        D.Independent(base, 4)
    assert D.Independent(D.Bernoulli(st.ones(2) / 2), 0).has_enumerate_support
    assert not D.Independent(D.Bernoulli(st.ones(2) / 2), 1).has_enumerate_support
    with pytest.raises(NotImplementedError, match="Enumeration over cartesian product is not implemented"):
        D.Independent(D.Bernoulli(st.ones(2) / 2), 1).enumerate_support()


# -- relaxed distributions --------------------------------------------------------------------------------------------
def _concrete_logpdf(x, p, temp):
    """The log density of the Concrete (Gumbel-softmax) distribution on the simplex (Maddison et al., 2017)."""
    k = x.shape[-1]
    return (math.lgamma(k) + (k - 1) * np.log(temp) + (np.log(p) - (temp + 1) * np.log(x)).sum(-1)
            - k * np.log((p * x**-temp).sum(-1)))


def _binary_concrete_logpdf(x, p, temp):
    a = p / (1 - p)
    return (np.log(temp * a) - (temp + 1) * (np.log(x) + np.log1p(-x))
            - 2 * np.log(a * x**-temp + (1 - x) ** -temp))


RB_TEMP, RB_PROBS = np.array(0.7), RNG.uniform(0.2, 0.8, (3,))
RC_TEMP, RC_LOGITS = np.array(0.5), RNG.standard_normal((2, 4))


@pytest.mark.parametrize("device", DEVICES)
def test_relaxed_bernoulli(device):
    st_t, st_p = _t(RB_TEMP, device, grad=True), _t(RB_PROBS, device, grad=True)
    d = D.RelaxedBernoulli(st_t, probs=st_p)
    assert d.has_rsample and d.batch_shape == (3,) and repr(d) == "RelaxedBernoulli()"
    assert repr(d.support) == "Interval(lower_bound=0.0, upper_bound=1.0)"
    st.manual_seed(6)
    x = d.rsample((5,))
    assert tuple(x.shape) == (5, 3) and x.requires_grad
    xv = _host(x) if device != "meta" else np.full((5, 3), 0.5)
    _check(d.log_prob(_t(xv, device)), _binary_concrete_logpdf(xv, RB_PROBS, RB_TEMP), device, rtol=1e-9)
    if device != "meta":
        assert np.all((xv > 0) & (xv < 1))
        # pathwise: logit(x) = (logit(u) + logit(p)) / T, so d x / d logit(p) = x (1 - x) / T
        (g,) = st.autograd.grad(x.sum(), [st_p])
        want = (xv * (1 - xv)).sum(0) / RB_TEMP / (RB_PROBS * (1 - RB_PROBS))
        np.testing.assert_allclose(_host(g), want, rtol=1e-8)
    lb = D.LogitRelaxedBernoulli(_t(RB_TEMP, device), logits=_t(np.zeros(3), device))
    assert tuple(lb.expand((2, 3)).rsample((4,)).shape) == (4, 2, 3)
    assert d.expand((2, 3)).batch_shape == (2, 3)


@pytest.mark.parametrize("device", DEVICES)
def test_relaxed_one_hot_categorical(device):
    st_t, st_l = _t(RC_TEMP, device, grad=True), _t(RC_LOGITS, device, grad=True)
    d = D.RelaxedOneHotCategorical(st_t, logits=st_l)
    assert d.batch_shape == (2,) and d.event_shape == (4,) and repr(d) == "RelaxedOneHotCategorical()"
    st.manual_seed(6)
    x = d.rsample((3,))
    assert tuple(x.shape) == (3, 2, 4)
    xv = _host(x) if device != "meta" else np.full((3, 2, 4), 0.25)
    p = np.exp(RC_LOGITS) / np.exp(RC_LOGITS).sum(-1, keepdims=True)
    _check(d.log_prob(_t(xv, device)), _concrete_logpdf(xv, p, RC_TEMP), device, rtol=1e-9)
    assert d.expand((3, 2)).batch_shape == (3, 2)
    if device == "meta":
        return
    np.testing.assert_allclose(xv.sum(-1), 1.0, rtol=1e-12)
    # the argmax of a relaxed sample follows the categorical (Gumbel-max); frequencies within 5 SE
    n = 20000
    st.manual_seed(8)
    idx = _host(d.sample((n,))).argmax(-1)
    freq = np.stack([(idx == k).mean(0) for k in range(4)], -1)
    assert np.all(np.abs(freq - p) < 5 * np.sqrt(p * (1 - p) / n))


@pytest.mark.parametrize("device", DEVICES)
def test_relaxed_match_torch(device):
    torch = pytest.importorskip("torch")
    cases = [("RelaxedBernoulli", "probs", RB_TEMP, RB_PROBS, RNG.uniform(0.05, 0.95, (5, 3))),
             ("RelaxedOneHotCategorical", "logits", RC_TEMP, RC_LOGITS, RNG.dirichlet(np.ones(4), (3, 2)))]
    for name, by, temp, param, value in cases:
        st_t, st_p = _t(temp, device, grad=True), _t(param, device, grad=True)
        to_t, to_p = torch.tensor(temp, requires_grad=True), torch.tensor(param, requires_grad=True)
        sd = getattr(D, name)(st_t, **{by: st_p})
        td = getattr(torch.distributions, name)(to_t, **{by: to_p})
        assert repr(sd) == repr(td) and repr(sd.base_dist) == repr(td.base_dist).replace("torch.", "strided.")
        s_lp, t_lp = sd.log_prob(_t(value, device)), td.log_prob(torch.tensor(value))
        _check(s_lp, t_lp.detach().numpy(), device, rtol=1e-9)
        _grads_match(torch, s_lp, [st_t, st_p], t_lp, [to_t, to_p], device)


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_relaxed_samples_follow_the_concrete_formulas(device):
    """Given the uniforms strided's generator draws first (same seed), rsample is the Gumbel-softmax / binary
    Concrete transform of them at the given temperature."""
    eps = np.finfo(np.float64).eps
    temp, logits = 0.4, RNG.standard_normal((2, 4))
    st.manual_seed(12)
    u = np.clip(_host(st.rand((3, 2, 4), dtype=st.float64, device=device)), eps, 1 - eps)
    st.manual_seed(12)
    x = _host(D.RelaxedOneHotCategorical(_t(temp, device), logits=_t(logits, device)).rsample((3,)))
    scores = (logits - np.log(-np.log(u))) / temp
    np.testing.assert_allclose(x, np.exp(scores) / np.exp(scores).sum(-1, keepdims=True), rtol=1e-10)
    probs = RNG.uniform(0.2, 0.8, (4,))
    st.manual_seed(13)
    u = np.clip(_host(st.rand((3, 4), dtype=st.float64, device=device)), eps, 1 - eps)
    st.manual_seed(13)
    x = _host(D.RelaxedBernoulli(_t(temp, device), probs=_t(probs, device)).rsample((3,)))
    z = (np.log(u) - np.log1p(-u) + np.log(probs) - np.log1p(-probs)) / temp
    np.testing.assert_allclose(x, 1 / (1 + np.exp(-z)), rtol=1e-10)


# -- transforms and TransformedDistribution ---------------------------------------------------------------------------
def _transforms(M):
    return {"exp": M.ExpTransform(), "sigmoid": M.SigmoidTransform(), "tanh": M.TanhTransform(),
            "softplus": M.SoftplusTransform(), "affine": M.AffineTransform(0.5, -2.0),
            "exp_inv": M.ExpTransform().inv,
            "compose": M.ComposeTransform([M.AffineTransform(0.3, 1.5), M.SigmoidTransform()])}


@pytest.mark.parametrize("name", list(_transforms(T)))
@pytest.mark.parametrize("device", DEVICES)
def test_transforms_match_torch(name, device):
    torch = pytest.importorskip("torch")
    s, t = _transforms(T)[name], _transforms(torch.distributions.transforms)[name]
    assert repr(s) == repr(t) and s.sign == t.sign and s.bijective == t.bijective
    assert repr(s.domain) == repr(t.domain) and repr(s.codomain) == repr(t.codomain)
    x = RNG.uniform(0.1, 2.0, (3, 4)) if name == "exp_inv" else RNG.standard_normal((3, 4))
    sx, tx = _t(x, device, grad=True), torch.tensor(x, requires_grad=True)
    sy, ty = s(sx), t(tx)
    _check(sy, ty.detach().numpy(), device)
    _check(s.inv(sy), tx.detach().numpy() if device != "meta" else x, device, rtol=1e-7)
    s_ld, t_ld = s.log_abs_det_jacobian(sx, sy), t.log_abs_det_jacobian(tx, ty)
    _check(s_ld, t_ld.detach().numpy(), device, rtol=1e-9)
    _grads_match(torch, s_ld + sy, [sx], t_ld + ty, [tx], device)
    assert s.inv.inv is s and s == _transforms(T)[name] and s != T.AffineTransform(0.0, 1.0)


def test_transform_details():
    a = T.AffineTransform(st.tensor([0.0, 1.0]), st.tensor([2.0, -1.0]), event_dim=1)
    x = st.tensor([[1.0, 2.0]])
    np.testing.assert_allclose(_host(a.log_abs_det_jacobian(x, a(x))), [np.log(2.0)])
    assert a.domain.event_dim == 1 and a.forward_shape((5, 2)) == (5, 2)
    np.testing.assert_array_equal(_host(a.sign), [1.0, -1.0])
    assert T.AffineTransform(0.0, -3.0).sign == -1 and T.AffineTransform(0.0, 0.0).sign == 0
    cached = T.ExpTransform(cache_size=1)
    y = cached(x)
    assert cached(x) is y and cached.inv(y) is x
    assert T.ExpTransform().with_cache(1)._cache_size == 1
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        T.ExpTransform(cache_size=2)
    ind = T.IndependentTransform(T.ExpTransform(), 1)
    assert repr(ind) == "IndependentTransform(ExpTransform(), 1)" and ind.domain.event_dim == 1
    np.testing.assert_allclose(_host(ind.log_abs_det_jacobian(x, ind(x))), [3.0])
    assert repr(T.identity_transform) == "ComposeTransform(\n    \n)"
    assert T.ExpTransform().event_dim == 0 and ind.event_dim == 1 and ind.inv.event_dim == 1
    compose = T.ComposeTransform([T.ExpTransform(), ind])
    assert compose.domain.event_dim == 1 and compose.inv.inv is compose


@pytest.mark.parametrize("device", DEVICES)
def test_transformed_distribution(device):
    """A user-built TransformedDistribution (Normal through an affine map and a sigmoid: a logit-normal), against
    the closed form and against torch; a decreasing transform reflects the cdf."""
    loc, scale = RNG.standard_normal(3), RNG.uniform(0.5, 1.5, 3)
    base = D.Normal(_t(loc, device), _t(scale, device))
    d = D.TransformedDistribution(base, [T.AffineTransform(0.0, 2.0), T.SigmoidTransform()])
    assert d.batch_shape == (3,) and d.event_shape == () and d.has_rsample
    assert repr(d.support) == "Interval(lower_bound=0.0, upper_bound=1.0)"
    y = RNG.uniform(0.05, 0.95, (4, 3))
    z = np.log(y / (1 - y)) / 2  # the base value
    ref = (-((z - loc) ** 2) / (2 * scale**2) - np.log(scale) - 0.5 * np.log(2 * np.pi)) - np.log(2 * y * (1 - y))
    _check(d.log_prob(_t(y, device)), ref, device, rtol=1e-9)
    cdf_ref = 0.5 * (1 + np.vectorize(math.erf)((z - loc) / (scale * np.sqrt(2))))
    _check(d.cdf(_t(y, device)), cdf_ref, device, rtol=1e-9)
    _check(d.icdf(_t(cdf_ref, device)), y, device, rtol=1e-7)
    flipped = D.TransformedDistribution(base, T.AffineTransform(1.0, -1.0))
    _check(flipped.cdf(_t(y, device)), 1 - 0.5 * (1 + np.vectorize(math.erf)((1 - y - loc) / (scale * np.sqrt(2)))),
           device, rtol=1e-9)
    assert tuple(d.sample((5,)).shape) == (5, 3) and d.expand((2, 3)).batch_shape == (2, 3)
    # a transform with batched parameters expands the base distribution
    wide = D.TransformedDistribution(D.Normal(_t(0.0, device), _t(1.0, device)), T.AffineTransform(_t(loc, device),
                                                                                                   2.0))
    assert wide.batch_shape == (3,) and wide.base_dist.batch_shape == (3,)
    with pytest.raises(ValueError, match="transforms must be a Transform or a list of Transforms"):
        D.TransformedDistribution(base, [1])
    with pytest.raises(ValueError, match="transforms must be a Transform or list, but was 3"):
        D.TransformedDistribution(base, 3)


@pytest.mark.parametrize("device", DEVICES)
def test_transformed_distribution_matches_torch(device):
    torch = pytest.importorskip("torch")
    loc, scale = RNG.standard_normal(3), RNG.uniform(0.5, 1.5, 3)
    y = RNG.uniform(0.05, 0.95, (4, 3))
    d = D.TransformedDistribution(D.Normal(_t(loc, device), _t(scale, device)),
                                  [T.AffineTransform(0.0, 2.0), T.SigmoidTransform()])
    tt = torch.distributions.transforms
    td = torch.distributions.TransformedDistribution(
        torch.distributions.Normal(torch.tensor(loc), torch.tensor(scale)), [tt.AffineTransform(0.0, 2.0),
                                                                             tt.SigmoidTransform()])
    _check(d.log_prob(_t(y, device)), td.log_prob(torch.tensor(y)).numpy(), device, rtol=1e-10)
    _check(d.cdf(_t(y, device)), td.cdf(torch.tensor(y)).numpy(), device, rtol=1e-10)
