"""strided.distributions' further families (HalfNormal, HalfCauchy, Pareto, Weibull, Kumaraswamy, ContinuousBernoulli,
VonMises, LogisticNormal, LowRankMultivariateNormal, MixtureSameFamily, Multinomial) and their KL pairs, on every
available backend: values against NumPy closed forms, values and gradients against torch (when installed), pathwise
rsample gradients, sample statistics under a fixed seed, shapes, expand and validation errors. Meta checks shapes."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

import strided as st
from strided import distributions as D
from strided.testing import available_devices

DEVICES = available_devices()
DATA_DEVICES = [d for d in DEVICES if d != "meta"]
RNG = np.random.default_rng(4242)
BATCH = (2, 3)
_VSHAPE = (5,) + BATCH
_lgamma = np.vectorize(math.lgamma)


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


def _grads_match(torch, s_out, sp, t_out, tp, device, rtol=1e-8):
    w = RNG.standard_normal(tuple(t_out.shape))
    # retain_graph: lazily derived parameters are shared between the methods' graphs
    s_grads = st.autograd.grad((s_out * _t(w, device)).sum(), sp, allow_unused=True, retain_graph=True)
    t_grads = torch.autograd.grad((t_out * torch.tensor(w)).sum(), tp, allow_unused=True, retain_graph=True)
    for sg, tg in zip(s_grads, t_grads):
        if tg is None:
            assert sg is None or device == "meta" or not _host(sg).any()
        else:
            _check(sg, tg.numpy(), device, rtol=rtol, atol=1e-10)


def _cb_log_norm(p):
    """log C(p) of the continuous Bernoulli, C(p) = 2 atanh(1 - 2p) / (1 - 2p)."""
    return np.log(2 * np.arctanh(1 - 2 * p) / (1 - 2 * p))


@dataclass
class Case:
    """A univariate family with parameters of shape BATCH, values in its support of shape _VSHAPE and NumPy
    closed forms ``ref[name](*params[, x])``."""

    name: str
    make: Callable  # make(module, *params): module is strided's or torch's distributions
    params: tuple
    value: np.ndarray
    ref: dict


_s1, _s2 = RNG.uniform(0.5, 2.0, BATCH), RNG.uniform(0.5, 2.0, BATCH)
_a = RNG.uniform(1.5, 4.0, BATCH)  # shapes > 1: modes defined
_probs = np.array([[0.2, 0.4995, 0.7], [0.05, 0.6, 0.35]])  # 0.4995: inside the unstable region (Taylor forms)
_pos = RNG.uniform(0.1, 4.0, _VSHAPE)
_unit = RNG.uniform(0.05, 0.95, _VSHAPE)

CASES = [
    Case("HalfNormal", lambda M, s: M.HalfNormal(s), (_s1,), _pos, {
        "log_prob": lambda s, x: np.log(2) - x**2 / (2 * s * s) - np.log(s) - 0.5 * np.log(2 * np.pi),
        "cdf": lambda s, x: np.vectorize(math.erf)(x / (s * np.sqrt(2))),
        "mean": lambda s: s * np.sqrt(2 / np.pi), "variance": lambda s: s * s * (1 - 2 / np.pi),
        "entropy": lambda s: 0.5 * np.log(np.pi * s * s / 2) + 0.5, "mode": lambda s: 0 * s}),
    Case("HalfCauchy", lambda M, s: M.HalfCauchy(s), (_s1,), _pos, {
        "log_prob": lambda s, x: np.log(2 / (np.pi * s * (1 + (x / s) ** 2))),
        "cdf": lambda s, x: 2 / np.pi * np.arctan(x / s), "entropy": lambda s: np.log(2 * np.pi * s),
        "mean": lambda s: np.full_like(s, np.inf), "mode": lambda s: 0 * s}),
    Case("Pareto", lambda M, s, a: M.Pareto(s, a), (_s1, _a + 1), _s1 + _pos, {
        "log_prob": lambda s, a, x: np.log(a) + a * np.log(s) - (a + 1) * np.log(x),
        "cdf": lambda s, a, x: 1 - (s / x) ** a, "mean": lambda s, a: a * s / (a - 1),
        "variance": lambda s, a: s * s * a / ((a - 1) ** 2 * (a - 2)), "mode": lambda s, a: s,
        "entropy": lambda s, a: np.log(s / a) + 1 + 1 / a}),
    Case("Weibull", lambda M, s, k: M.Weibull(s, k), (_s1, _a), _pos, {
        "log_prob": lambda s, k, x: np.log(k / s) + (k - 1) * np.log(x / s) - (x / s) ** k,
        "cdf": lambda s, k, x: 1 - np.exp(-((x / s) ** k)),
        "mean": lambda s, k: s * np.exp(_lgamma(1 + 1 / k)),
        "variance": lambda s, k: s * s * (np.exp(_lgamma(1 + 2 / k)) - np.exp(2 * _lgamma(1 + 1 / k))),
        "mode": lambda s, k: s * ((k - 1) / k) ** (1 / k),
        "entropy": lambda s, k: np.euler_gamma * (1 - 1 / k) + np.log(s / k) + 1}),
    Case("Kumaraswamy", lambda M, a, b: M.Kumaraswamy(a, b), (_a, _s1 + 1), _unit, {
        "log_prob": lambda a, b, x: np.log(a * b) + (a - 1) * np.log(x) + (b - 1) * np.log1p(-(x**a)),
        "cdf": lambda a, b, x: 1 - (1 - x**a) ** b,
        "mean": lambda a, b: b * np.exp(_lgamma(1 + 1 / a) + _lgamma(b) - _lgamma(1 + 1 / a + b)),
        "mode": lambda a, b: ((a - 1) / (a * b - 1)) ** (1 / a)}),
    Case("ContinuousBernoulli", lambda M, p: M.ContinuousBernoulli(p), (_probs,), _unit, {
        "log_prob": lambda p, x: np.where(np.abs(p - 0.5) < 1e-3, np.nan,
                                          _cb_log_norm(p) + x * np.log(p) + (1 - x) * np.log1p(-p)),
        "cdf": lambda p, x: np.where(np.abs(p - 0.5) < 1e-3, np.nan,
                                     (p**x * (1 - p) ** (1 - x) + p - 1) / (2 * p - 1)),
        "mean": lambda p: np.where(np.abs(p - 0.5) < 1e-3, np.nan, p / (2 * p - 1) + 1 / (2 * np.arctanh(1 - 2 * p)))}),
    Case("ContinuousBernoulliLogits", lambda M, lg: M.ContinuousBernoulli(logits=lg), (RNG.standard_normal(BATCH),),
         _unit, {"log_prob": lambda lg, x: _cb_log_norm(1 / (1 + np.exp(-lg))) + x * lg - np.logaddexp(0, lg)}),
    Case("VonMises", lambda M, m, k: M.VonMises(m, k), (RNG.standard_normal(BATCH), np.array([[0.3, 2.0, 3.75],
                                                                                             [5.0, 20.0, 1e-3]])),
         RNG.uniform(-4, 4, _VSHAPE), {
             "log_prob": lambda m, k, x: k * np.cos(x - m) - np.log(2 * np.pi * np.i0(k)),
             "mean": lambda m, k: m, "mode": lambda m, k: m}),
]
IDS = [c.name for c in CASES]
RSAMPLE = [c for c in CASES if c.name != "VonMises"]


def _make(case, device, grad=False, dtype=None, params=None):
    sp = [_t(p, device, grad=grad, dtype=dtype) for p in (params or case.params)]
    return case.make(D, *sp), sp


# -- univariate families ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_values_match_closed_forms(case, device):
    d, _ = _make(case, device)
    assert d.batch_shape == BATCH and d.event_shape == ()
    x = _t(case.value, device)
    # VonMises: torch's polynomial Bessel approximation (A&S 9.8.1-4), good to ~2e-7 relative
    rtol = 2e-7 if case.name == "VonMises" else 1e-9
    for name, ref in case.ref.items():
        if name in ("log_prob", "cdf"):
            got, want = getattr(d, name)(x), ref(*case.params, case.value)
        else:
            got = d.entropy() if name == "entropy" else getattr(d, name)
            want = ref(*case.params)
        known = ~np.isnan(want)  # (NaN marks the continuous Bernoulli's Taylor region, checked against torch)
        assert tuple(got.shape) == want.shape
        if device != "meta":
            np.testing.assert_allclose(_host(got)[known], want[known], rtol=rtol, atol=1e-12, err_msg=name)
    if "cdf" in case.ref and device != "meta":  # icdf inverts the cdf
        q = RNG.uniform(0.05, 0.95, _VSHAPE)
        np.testing.assert_allclose(_host(d.cdf(d.icdf(_t(q, device)))), q, rtol=1e-9)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_matches_torch_values_and_gradients(case, device):
    torch = pytest.importorskip("torch")
    sd, sp = _make(case, device, grad=True)
    tp = [torch.tensor(p, requires_grad=True) for p in case.params]
    td = case.make(torch.distributions, *tp)
    assert repr(sd) == repr(td).replace("torch.", "strided.")
    assert sd.has_rsample == td.has_rsample and type(sd.support).__name__ == type(td.support).__name__
    if device != "meta":  # (a bound tensor on meta prints no values)
        # strided's tensor repr names a non-CPU device, torch's (a CPU tensor) names none
        got = " ".join(repr(sd.support).replace("device='cuda:0', ", "").split())
        assert got == " ".join(repr(td.support).replace("torch.", "strided.").split())
    for prop in ("mean", "mode", "variance", "stddev"):
        try:
            want = getattr(td, prop)
        except NotImplementedError:
            continue
        if case.name == "Kumaraswamy" and prop == "mode":  # Note [Kumaraswamy mode]: torch's is NaN for b > 1
            assert torch.isnan(want).all() and not np.isnan(_host(sd.mode)).any() or device == "meta"
            continue
        _check(getattr(sd, prop), want.detach().numpy(), device)
        if want.requires_grad:
            _grads_match(torch, getattr(sd, prop), sp, want, tp, device)
    outs = [(sd.log_prob(_t(case.value, device)), td.log_prob(torch.tensor(case.value)))]
    for name, arg in (("cdf", case.value), ("icdf", RNG.uniform(0.05, 0.95, _VSHAPE)), ("entropy", None)):
        try:
            t_out = getattr(td, name)() if arg is None else getattr(td, name)(torch.tensor(arg))
        except NotImplementedError:
            continue
        outs.append((getattr(sd, name)() if arg is None else getattr(sd, name)(_t(arg, device)), t_out))
    for s_out, t_out in outs:
        _check(s_out, t_out.detach().numpy(), device)
        _grads_match(torch, s_out, sp, t_out, tp, device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", RSAMPLE, ids=[c.name for c in RSAMPLE])
def test_rsample_pathwise_gradient(case, device):
    """Note: the samples are ``F^-1(g(noise))`` with ``g`` free of the parameters, so ``F(x(theta); theta)`` is
    constant and ``dx/dtheta = -(dF/dtheta)(x) / f(x)`` (implicit differentiation): the rsample gradients must equal
    the cdf's parameter gradients divided by the density."""
    d, params = _make(case, device, grad=True)
    assert d.has_rsample
    st.manual_seed(3)
    x = d.rsample((7,))
    assert tuple(x.shape) == (7,) + BATCH and x.requires_grad
    w = RNG.standard_normal((7,) + BATCH)
    # retain_graph: parameters derived at construction (Weibull's 1 / concentration, lazy logits) are shared
    grads = st.autograd.grad((x * _t(w, device)).sum(), params, retain_graph=True)
    xd = x.detach()
    weight = (_t(w, device) / d.log_prob(xd).exp()).detach()
    want = st.autograd.grad(-(d.cdf(xd) * weight).sum(), params)
    for g, gw in zip(grads, want):
        _check(g, _host(gw) if device != "meta" else np.zeros(BATCH), device, rtol=1e-7, atol=1e-9)


N = 20000


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_sample_statistics(case, device):
    """Sample means (and variances, where the fourth moment is finite) within 5 standard errors of the closed forms;
    ``cdf(sample)`` uniform; VonMises: the circular moments ``E cos(x - loc) = I1/I0``, ``E sin(x - loc) = 0``."""
    params = case.params
    if case.name == "Pareto":
        params = (_s1, _a + 3.5)  # alpha > 4: a finite fourth moment
    d, _ = _make(case, device, params=params)
    st.manual_seed(1234)
    x = _host(d.sample((N,)))
    assert x.shape == (N,) + BATCH
    if case.name == "VonMises":
        m, k = params
        assert np.all((x >= -np.pi) & (x < np.pi))
        c, s = np.cos(x - m), np.sin(x - m)
        assert np.all(np.abs(c.mean(0) - (1 - _host(d.variance))) < 5 * c.std(0) / np.sqrt(N) + 1e-6)
        assert np.all(np.abs(s.mean(0)) < 5 * s.std(0) / np.sqrt(N) + 1e-12)
        return
    if case.name != "HalfCauchy":
        mean, var = _host(d.mean), _host(d.variance)
        assert np.all(np.abs(x.mean(0) - mean) < 5 * np.sqrt(var / N)), case.name
        dev = x - x.mean(0)
        se_var = np.sqrt(((dev**4).mean(0) - (dev**2).mean(0) ** 2) / N)
        assert np.all(np.abs(x.var(0) - var) < 5 * se_var), case.name
    u = _host(d.cdf(_t(x, device)))
    assert np.all(np.abs(u.mean(0) - 0.5) < 5 * np.sqrt(1 / 12 / N))
    assert np.all(_host(d.support.check(_t(x, device))))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_shapes_dtypes_expand(case, device, dtype):
    sdt = getattr(st, dtype)
    d, _ = _make(case, device, dtype=sdt)
    st.manual_seed(0)
    for sample_shape in ((), (4,), (2, 5)):
        x = d.sample(sample_shape)
        assert tuple(x.shape) == sample_shape + BATCH and x.dtype == sdt and x.device.type == device
        lp = d.log_prob(x)
        assert tuple(lp.shape) == sample_shape + BATCH and lp.dtype == sdt
    e = d.expand((4,) + BATCH)
    assert type(e) is type(d) and e.batch_shape == (4,) + BATCH and e._validate_args == d._validate_args
    assert tuple(e.sample((2,)).shape) == (2, 4) + BATCH
    x = _t(case.value[:4], device, dtype=sdt)
    _check(e.log_prob(x), _host(d.log_prob(x)) if device != "meta" else np.zeros((4,) + BATCH), device, rtol=1e-6)
    scalar = case.make(D, *[float(p.flat[0]) for p in case.params])
    assert scalar.batch_shape == () and tuple(scalar.sample((3,)).shape) == (3,)


def test_edge_values():
    hn = D.HalfNormal(st.tensor([1.0, 2.0]), validate_args=False)
    assert np.all(np.isneginf(_host(hn.log_prob(st.tensor([-1.0, -0.5])))))
    hc = D.HalfCauchy(st.tensor([1.0, 2.0]), validate_args=False)
    assert np.all(np.isneginf(_host(hc.log_prob(st.tensor([-1.0, -0.5])))))
    p = D.Pareto(st.tensor([1.0, 1.0]), st.tensor([0.5, 1.5]))  # the mean is infinite for alpha <= 1, the
    np.testing.assert_array_equal(_host(p.mean), [np.inf, 3.0])  # variance for alpha <= 2
    assert np.all(np.isinf(_host(p.variance)))
    k = D.Kumaraswamy(st.tensor([0.5, 2.0, 2.0]), st.tensor([2.0, 0.5, 2.0]))
    mode = _host(k.mode)
    assert np.isnan(mode[:2]).all() and mode[2] == pytest.approx((1 / 3) ** 0.5)
    cb = D.ContinuousBernoulli(st.tensor([0.3]), validate_args=False)
    np.testing.assert_array_equal(_host(cb.cdf(st.tensor([-1.0, 2.0]))), [0.0, 1.0])
    # the continuous Bernoulli at p = 1/2 is the uniform distribution
    half = D.ContinuousBernoulli(st.tensor(0.5))
    assert float(half.log_prob(st.tensor(0.3))) == pytest.approx(0.0, abs=1e-12)
    assert float(half.mean) == pytest.approx(0.5) and float(half.variance) == pytest.approx(1 / 12)
    np.testing.assert_allclose(_host(half.icdf(st.tensor([0.2, 0.7]))), [0.2, 0.7])


def test_von_mises_sampler_is_bounded(monkeypatch):
    """Note [Von Mises rejection sampler]: reproducible under a seed, float64 inside, and a bounded loop."""
    from strided.distributions import von_mises

    d = D.VonMises(st.tensor([0.5], dtype=st.float32), st.tensor([1e-6], dtype=st.float32))
    st.manual_seed(5)
    a = _host(d.sample((100,)))
    st.manual_seed(5)
    np.testing.assert_array_equal(_host(d.sample((100,))), a)
    assert d.sample().dtype == st.float32
    monkeypatch.setattr(von_mises, "_MAX_ROUNDS", 3)
    bad = D.VonMises(st.tensor([0.0]), st.tensor([math.nan]), validate_args=False)
    with pytest.raises(RuntimeError, match="did not accept every element in 3 rounds"):
        bad.sample()
    e = D.VonMises(st.tensor(0.0), st.tensor(1.0)).expand((3,))
    assert type(e) is D.VonMises and e.batch_shape == (3,)


# -- LogisticNormal ---------------------------------------------------------------------------------------------------
LN_LOC, LN_SCALE = RNG.standard_normal((2, 3)), RNG.uniform(0.5, 1.5, (2, 3))


def _simplex(shape):
    y = RNG.uniform(0.1, 1.0, shape)
    return y / y.sum(-1, keepdims=True)


@pytest.mark.parametrize("device", DEVICES)
def test_logistic_normal(device):
    torch = pytest.importorskip("torch")
    sl, ss = _t(LN_LOC, device, grad=True), _t(LN_SCALE, device, grad=True)
    tl, ts = torch.tensor(LN_LOC, requires_grad=True), torch.tensor(LN_SCALE, requires_grad=True)
    sd, td = D.LogisticNormal(sl, ss), torch.distributions.LogisticNormal(tl, ts)
    assert sd.batch_shape == (2,) and sd.event_shape == (4,) and sd.has_rsample
    y = _simplex((5, 2, 4))
    s_lp, t_lp = sd.log_prob(_t(y, device)), td.log_prob(torch.tensor(y))
    _check(s_lp, t_lp.detach().numpy(), device)
    _grads_match(torch, s_lp, [sl, ss], t_lp, [tl, ts], device)
    # Note [Stick breaking]: x_k = logit(y_k / (1 - sum_{j<k} y_j)) + log(K + 1 - k) ~ Normal(loc, scale), and
    # log |det J| = sum_k log y_k over all K + 1 coordinates
    rest = 1 - np.cumsum(y, -1)[..., :-1]
    z = np.log(y[..., :-1] / rest) + np.log(np.arange(3, 0, -1))
    ref = (-((z - LN_LOC) ** 2) / (2 * LN_SCALE**2) - np.log(LN_SCALE) - 0.5 * np.log(2 * np.pi)).sum(-1)
    _check(s_lp, ref - np.log(y).sum(-1), device, rtol=1e-9)
    st.manual_seed(2)
    x = sd.rsample((6,))
    assert tuple(x.shape) == (6, 2, 4)
    if device != "meta":
        assert np.allclose(_host(x).sum(-1), 1.0) and np.all(_host(x) > 0)
    e = sd.expand((3, 2))
    assert type(e) is D.LogisticNormal and e.batch_shape == (3, 2) and tuple(e.sample().shape) == (3, 2, 4)
    scalar = D.LogisticNormal(0.0, 1.0)
    assert scalar.batch_shape == () and scalar.event_shape == (2,)


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_logistic_normal_sample_moments(device):
    """Samples mapped back through the stick breaking (Note [Stick breaking]) have the base normal's moments."""
    d = D.LogisticNormal(_t(LN_LOC, device), _t(LN_SCALE, device))
    st.manual_seed(17)
    y = _host(d.sample((N,)))
    z = np.log(y[..., :-1] / (1 - np.cumsum(y, -1)[..., :-1])) + np.log(np.arange(3, 0, -1))
    assert np.all(np.abs(z.mean(0) - LN_LOC) < 5 * LN_SCALE / np.sqrt(N))
    assert np.all(np.abs(z.std(0) - LN_SCALE) < 5 * LN_SCALE / np.sqrt(2 * N))


# -- LowRankMultivariateNormal ----------------------------------------------------------------------------------------
LR_LOC = RNG.standard_normal((2, 1, 4))
LR_W = RNG.standard_normal((3, 4, 2))
LR_D = RNG.uniform(0.5, 1.5, (3, 4))
LR_X = RNG.standard_normal((5, 2, 3, 4))
LR_COV = LR_W @ np.swapaxes(LR_W, -1, -2) + np.eye(4) * LR_D[..., None, :]


def _mvn_logpdf(x, mu, cov):
    diff = x - mu
    sol = np.linalg.solve(np.broadcast_to(cov, diff.shape + (diff.shape[-1],)), diff[..., None])[..., 0]
    return -0.5 * ((diff * sol).sum(-1) + diff.shape[-1] * np.log(2 * np.pi) + np.linalg.slogdet(cov)[1])


@pytest.mark.parametrize("device", DEVICES)
def test_lowrank_multivariate_normal_values(device):
    d = D.LowRankMultivariateNormal(_t(LR_LOC, device), _t(LR_W, device), _t(LR_D, device))
    assert d.batch_shape == (2, 3) and d.event_shape == (4,)
    _check(d.log_prob(_t(LR_X, device)), _mvn_logpdf(LR_X, LR_LOC, LR_COV), device, rtol=1e-9)
    ent = 0.5 * (4 * (1 + np.log(2 * np.pi)) + np.linalg.slogdet(LR_COV)[1])
    _check(d.entropy(), np.broadcast_to(ent, (2, 3)), device, rtol=1e-9)
    _check(d.variance, np.broadcast_to(np.diagonal(LR_COV, 0, -2, -1), (2, 3, 4)), device, rtol=1e-9)
    _check(d.covariance_matrix, np.broadcast_to(LR_COV, (2, 3, 4, 4)), device, rtol=1e-9)
    _check(d.precision_matrix, np.broadcast_to(np.linalg.inv(LR_COV), (2, 3, 4, 4)), device, rtol=1e-8)
    _check(d.scale_tril, np.broadcast_to(np.linalg.cholesky(LR_COV), (2, 3, 4, 4)), device, rtol=1e-9)
    _check(d.mean, np.broadcast_to(LR_LOC, (2, 3, 4)), device)
    _check(d.mode, np.broadcast_to(LR_LOC, (2, 3, 4)), device)
    e = d.expand((6, 2, 3))
    assert e.batch_shape == (6, 2, 3) and tuple(e.rsample((2,)).shape) == (2, 6, 2, 3, 4)
    _check(e.log_prob(_t(LR_X[0], device)), np.broadcast_to(_mvn_logpdf(LR_X[0], LR_LOC, LR_COV), (6, 2, 3)),
           device, rtol=1e-9)


@pytest.mark.parametrize("device", DEVICES)
def test_lowrank_multivariate_normal_matches_torch(device, monkeypatch):
    torch = pytest.importorskip("torch")
    import torch.distributions.lowrank_multivariate_normal as tlr

    sp = [_t(a, device, grad=True) for a in (LR_LOC, LR_W, LR_D)]
    tp = [torch.tensor(a, requires_grad=True) for a in (LR_LOC, LR_W, LR_D)]
    sd, td = D.LowRankMultivariateNormal(*sp), torch.distributions.LowRankMultivariateNormal(*tp)
    assert repr(sd) == repr(td).replace("torch.", "strided.")
    pairs = [(sd.log_prob(_t(LR_X, device)), td.log_prob(torch.tensor(LR_X))), (sd.entropy(), td.entropy())]
    pairs += [(getattr(sd, k), getattr(td, k)) for k in ("variance", "scale_tril", "covariance_matrix",
                                                          "precision_matrix")]
    for s_out, t_out in pairs:
        _check(s_out, t_out.detach().numpy(), device, rtol=1e-9)
        _grads_match(torch, s_out, sp, t_out, tp, device, rtol=1e-7)
    if device == "meta":
        return
    st.manual_seed(8)  # the same noise: eps_W then eps_D, as both draw them
    eps = [_host(st.randn((4, 2, 3, 2), dtype=st.float64, device=device)),
           _host(st.randn((4, 2, 3, 4), dtype=st.float64, device=device))]
    monkeypatch.setattr(tlr, "_standard_normal", lambda *a, **k: torch.tensor(eps.pop(0)))
    st.manual_seed(8)
    sx, tx = sd.rsample((4,)), td.rsample((4,))
    _check(sx, tx.detach().numpy(), device)
    _grads_match(torch, sx, sp, tx, tp, device)


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_lowrank_multivariate_normal_sample_moments(device):
    d = D.LowRankMultivariateNormal(_t(LR_LOC[0, 0], device), _t(LR_W[0], device), _t(LR_D[0], device))
    st.manual_seed(9)
    x = _host(d.sample((N,)))
    cov = LR_COV[0]
    assert np.all(np.abs(x.mean(0) - LR_LOC[0, 0]) < 5 * np.sqrt(np.diag(cov) / N))
    se_cov = np.sqrt((np.outer(np.diag(cov), np.diag(cov)) + cov**2) / N)
    assert np.all(np.abs(np.cov(x.T) - cov) < 5 * se_cov)


def test_lowrank_multivariate_normal_errors():
    z, w, o = st.zeros(3), st.ones(3, 1), st.ones(3)
    with pytest.raises(ValueError, match="loc must be at least one-dimensional."):
        D.LowRankMultivariateNormal(st.tensor(0.0), w, o)
    with pytest.raises(ValueError, match="cov_factor must be at least two-dimensional, with optional leading batch"):
        D.LowRankMultivariateNormal(z, o, o)
    with pytest.raises(ValueError, match="cov_factor must be a batch of matrices with shape 3 x m"):
        D.LowRankMultivariateNormal(z, st.ones(2, 1), o)
    with pytest.raises(ValueError, match=r"cov_diag must be a batch of vectors with shape strided.Size\(\[3\]\)"):
        D.LowRankMultivariateNormal(z, w, st.ones(2))
    with pytest.raises(ValueError, match=r"Incompatible batch shapes: loc strided.Size\(\[2, 3\]\), cov_factor"):
        D.LowRankMultivariateNormal(st.zeros(2, 3), st.ones(4, 3, 1), o)


# -- MixtureSameFamily ------------------------------------------------------------------------------------------------
MIX_W = RNG.uniform(0.2, 1.0, (2, 3))
MIX_LOC, MIX_SCALE = RNG.standard_normal((2, 3)) * 2, RNG.uniform(0.5, 1.5, (2, 3))
MIX_LOC2, MIX_SCALE2 = RNG.standard_normal((2, 3, 2)), RNG.uniform(0.5, 1.5, (2, 3, 2))
MIXES = {
    "normal": lambda M, w, a, b: M.MixtureSameFamily(M.Categorical(w), M.Normal(a, b)),
    "independent": lambda M, w, a, b: M.MixtureSameFamily(M.Categorical(w), M.Independent(M.Normal(a, b), 1)),
    "shared_weights": lambda M, w, a, b: M.MixtureSameFamily(M.Categorical(w[0]), M.Normal(a, b)),
}
MIX_PARAMS = {"normal": (MIX_W, MIX_LOC, MIX_SCALE), "independent": (MIX_W, MIX_LOC2, MIX_SCALE2),
              "shared_weights": (MIX_W, MIX_LOC, MIX_SCALE)}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kind", list(MIXES))
def test_mixture_same_family(device, kind):
    torch = pytest.importorskip("torch")
    params = MIX_PARAMS[kind]
    sp = [_t(a, device, grad=True) for a in params]
    tp = [torch.tensor(a, requires_grad=True) for a in params]
    sd, td = MIXES[kind](D, *sp), MIXES[kind](torch.distributions, *tp)
    assert repr(sd) == repr(td).replace("torch.", "strided.")
    assert sd.batch_shape == (2,) and sd.event_shape == td.event_shape and not sd.has_rsample
    x = RNG.standard_normal((5, 2) + tuple(td.event_shape)) * 2
    s_lp, t_lp = sd.log_prob(_t(x, device)), td.log_prob(torch.tensor(x))
    _check(s_lp, t_lp.detach().numpy(), device)
    if kind != "independent":  # the mixture density in NumPy: log sum_k w_k N(x; loc_k, scale_k)
        w = params[0] if kind == "normal" else np.broadcast_to(params[0][0], (2, 3))
        w = w / w.sum(-1, keepdims=True)
        comp = -((x[..., None] - params[1]) ** 2) / (2 * params[2] ** 2) - np.log(params[2] * np.sqrt(2 * np.pi))
        _check(s_lp, np.log((w * np.exp(comp)).sum(-1)), device, rtol=1e-9)
    outs = [(s_lp, t_lp), (sd.mean, td.mean), (sd.variance, td.variance)]
    if kind != "independent":
        outs.append((sd.cdf(_t(x, device)), td.cdf(torch.tensor(x))))
    for s_out, t_out in outs:
        _check(s_out, t_out.detach().numpy(), device)
        _grads_match(torch, s_out, sp, t_out, tp, device)
    st.manual_seed(4)
    if kind == "shared_weights":  # torch's gather needs the mixture's batch dims: neither samples a broadcast one
        with pytest.raises(RuntimeError):
            td.sample((7,))
        with pytest.raises(RuntimeError):
            sd.sample((7,))
        return
    assert tuple(sd.sample((7,)).shape) == (7, 2) + tuple(td.event_shape)
    e = sd.expand((3, 2))
    assert e.batch_shape == (3, 2) and tuple(e.sample((4,)).shape) == (4, 3, 2) + tuple(td.event_shape)
    _check(e.log_prob(_t(x[0], device)), np.broadcast_to(_host(s_lp[0]) if device != "meta" else 0.0, (3, 2)), device)
    assert repr(sd.support) == repr(td.support)


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_mixture_sample_moments(device):
    d = MIXES["independent"](D, *[_t(a, device) for a in MIX_PARAMS["independent"]])
    st.manual_seed(6)
    x = _host(d.sample((N,)))
    mean, var = _host(d.mean), _host(d.variance)
    assert np.all(np.abs(x.mean(0) - mean) < 5 * np.sqrt(var / N))
    dev = x - x.mean(0)
    assert np.all(np.abs(x.var(0) - var) < 5 * np.sqrt(((dev**4).mean(0) - (dev**2).mean(0) ** 2) / N))


def test_mixture_errors_and_support():
    comp = D.Normal(st.zeros(2, 3), st.ones(2, 3))
    with pytest.raises(ValueError, match="The Mixture distribution needs to be an  instance of strided.distributions."
                                         "Categorical"):
        D.MixtureSameFamily(D.Bernoulli(0.5), comp)
    with pytest.raises(ValueError, match="The Component distribution needs to be an instance of strided.distributions."
                                         "Distribution"):
        D.MixtureSameFamily(D.Categorical(st.ones(3)), "normal")
    with pytest.raises(ValueError, match=r"`mixture_distribution.batch_shape` \(strided.Size\(\[4\]\)\) is not "
                                         r"compatible with `component_distribution.batch_shape`\(strided.Size\("):
        D.MixtureSameFamily(D.Categorical(st.ones(4, 3)), comp)
    with pytest.raises(ValueError, match=r"`mixture_distribution component` \(4\) does not equal "
                                         r"`component_distribution.batch_shape\[-1\]` \(3\)"):
        D.MixtureSameFamily(D.Categorical(st.ones(4)), comp)
    d = D.MixtureSameFamily(D.Categorical(st.ones(3)), D.Exponential(st.ones(3)))
    assert repr(d.support) == "MixtureSameFamilyConstraint(GreaterThanEq(lower_bound=0.0))"
    np.testing.assert_array_equal(_host(d.support.check(st.tensor([1.0, -1.0]))), [True, False])
    with pytest.raises(ValueError, match="Expected value argument"):
        d.log_prob(st.tensor([-1.0]))


# -- Multinomial ------------------------------------------------------------------------------------------------------
MN_P = RNG.uniform(0.1, 1.0, (2, 4))
MN_X = np.array([[[3, 0, 2, 1], [0, 0, 6, 0]], [[1, 1, 1, 3], [2, 2, 1, 1]]], dtype=float)


def _multinomial_logpmf(x, p):
    p = p / p.sum(-1, keepdims=True)
    return _lgamma(x.sum(-1) + 1) - _lgamma(x + 1).sum(-1) + (x * np.log(p)).sum(-1)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("by", ["probs", "logits"])
def test_multinomial(device, by):
    torch = pytest.importorskip("torch")
    param = MN_P if by == "probs" else np.log(MN_P)
    sp, tp = _t(param, device, grad=True), torch.tensor(param, requires_grad=True)
    sd, td = D.Multinomial(6, **{by: sp}), torch.distributions.Multinomial(6, **{by: tp})
    assert sd.batch_shape == (2,) and sd.event_shape == (4,) and repr(sd.support) == repr(td.support)
    s_lp, t_lp = sd.log_prob(_t(MN_X, device)), td.log_prob(torch.tensor(MN_X))
    _check(s_lp, _multinomial_logpmf(MN_X, MN_P), device, rtol=1e-9)
    _check(s_lp, t_lp.detach().numpy(), device)
    _grads_match(torch, s_lp, [sp], t_lp, [tp], device)
    for s_out, t_out in ((sd.mean, td.mean), (sd.variance, td.variance)):
        _check(s_out, t_out.detach().numpy(), device)
    # torch's entropy takes lgamma(n + 1) of an integer tensor, in float32: agreement to ~2e-8 (Note [Multinomial
    # entropy]); the enumeration test below checks ours to 1e-12
    _check(sd.entropy(), td.entropy().detach().numpy(), device, rtol=1e-7)
    _grads_match(torch, sd.entropy(), [sp], td.entropy(), [tp], device, rtol=1e-6)
    e = sd.expand((3, 2))
    assert e.batch_shape == (3, 2) and tuple(e.sample((5,)).shape) == (5, 3, 2, 4)


def test_multinomial_entropy_by_enumeration():
    """-sum P(x) log P(x) over every count vector of 3 trials in 3 classes."""
    p = np.array([0.2, 0.5, 0.3])
    d = D.Multinomial(3, st.tensor(p))
    xs = np.array([x for x in itertools.product(range(4), repeat=3) if sum(x) == 3], dtype=float)
    lp = _multinomial_logpmf(xs, p)
    np.testing.assert_allclose(np.exp(lp).sum(), 1.0, rtol=1e-12)
    np.testing.assert_allclose(_host(d.entropy()), -(np.exp(lp) * lp).sum(), rtol=1e-12)
    np.testing.assert_allclose(_host(d.log_prob(st.tensor(xs))), lp, rtol=1e-12)
    zero = D.Multinomial(2, st.tensor([0.0, 1.0], dtype=st.float64))  # an impossible class counted 0 times
    assert float(zero.log_prob(st.tensor([0.0, 2.0]))) == pytest.approx(0.0, abs=1e-12)
    zero = D.Multinomial(2, logits=st.tensor([-math.inf, 0.0]))  # 0 * -inf: 0, not NaN
    assert float(zero.log_prob(st.tensor([0.0, 2.0]))) == 0.0
    assert float(zero.log_prob(st.tensor([1.0, 1.0]))) == -math.inf


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_multinomial_sample(device):
    d = D.Multinomial(10, _t(MN_P, device))
    st.manual_seed(12)
    n = 5000
    x = _host(d.sample((n,)))
    assert x.shape == (n, 2, 4) and np.all(x.sum(-1) == 10) and np.all(x == np.round(x))
    p = MN_P / MN_P.sum(-1, keepdims=True)
    assert np.all(np.abs(x.mean(0) - 10 * p) < 5 * np.sqrt(10 * p * (1 - p) / n))
    st.manual_seed(12)
    np.testing.assert_array_equal(_host(d.sample((n,))), x)
    assert d.sample().dtype == st.float64


def test_multinomial_errors():
    with pytest.raises(NotImplementedError, match="inhomogeneous total_count is not supported"):
        D.Multinomial(st.tensor([2, 3]), st.ones(2))
    with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified, but not both."):
        D.Multinomial(3)
    with pytest.raises(ValueError, match="Expected value argument"):
        D.Multinomial(3, st.ones(2)).log_prob(st.tensor([3.0, 1.0]))


# -- validation messages against torch --------------------------------------------------------------------------------
INVALID = [
    lambda M, t: M.HalfNormal(t([1.0, -1.0])),
    lambda M, t: M.HalfCauchy(0.0),
    lambda M, t: M.Pareto(t([1.0]), t([-2.0])),
    lambda M, t: M.Pareto(-1.0, 2.0),
    lambda M, t: M.Weibull(t([1.0, 2.0]), t([0.0, 1.0])),
    lambda M, t: M.Kumaraswamy(t([-1.0]), t([1.0])),
    lambda M, t: M.ContinuousBernoulli(t([0.2, 1.5]), validate_args=True),
    lambda M, t: M.ContinuousBernoulli(t([0.2, 1.5]), validate_args=False),
    lambda M, t: M.ContinuousBernoulli(),
    lambda M, t: M.VonMises(t([0.0]), t([-1.0])),
    lambda M, t: M.LogisticNormal(t([0.0, 1.0]), t([1.0, 0.0])),
    lambda M, t: M.LowRankMultivariateNormal(t([0.0, 0.0]), t([[0.1], [0.1]]), t([1.0, -0.5])),
    lambda M, t: M.Multinomial(3, t([-0.1, 1.1])),
    lambda M, t: M.HalfNormal(t([1.0])).log_prob(t([-1.0])),
    lambda M, t: M.Pareto(t([2.0]), t([1.0])).log_prob(t([1.0])),
    lambda M, t: M.Kumaraswamy(t([2.0]), t([1.0])).log_prob(t([1.5])),
    lambda M, t: M.LogisticNormal(t([0.0]), t([1.0])).log_prob(t([0.5, 0.6])),
    lambda M, t: M.Multinomial(3, t([0.5, 0.5])).log_prob(t([2.0, 2.0])),
    lambda M, t: M.Weibull(t([1.0, 1.0]), t([1.0, 2.0])).log_prob(t([1.0, 2.0, 3.0])),
]


@pytest.mark.parametrize("build", INVALID, ids=range(len(INVALID)))
def test_validation_errors_match_torch(build):
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError) as te:
        build(torch.distributions, lambda v: torch.tensor(v))
    with pytest.raises(ValueError) as se:
        build(D, lambda v: st.tensor(v))
    assert str(se.value) == str(te.value).replace("torch.", "strided.")


# -- KL divergences ---------------------------------------------------------------------------------------------------
B = (3,)
k_loc1, k_loc2 = RNG.standard_normal(B), RNG.standard_normal(B)
k_sc1, k_sc2 = RNG.uniform(0.5, 2.0, B), RNG.uniform(0.5, 2.0, B)
k_al1, k_al2 = np.array([3.5, 1.5, 5.0]), np.array([2.5, 0.8, 4.0])  # alpha <= 1 / 2: infinite KL to Exp / Normal
k_pr1, k_pr2 = np.array([0.2, 0.4997, 0.8]), np.array([0.7, 0.3, 0.5003])
k_lo, k_hi = np.array([0.1, -0.5, 0.2]), np.array([0.8, 0.9, 1.5])
k_pareto_lo, k_pareto_hi = np.array([2.0, 0.5, 3.0]), np.array([3.0, 2.5, 4.0])
LR = (RNG.standard_normal(B + (3,)), RNG.standard_normal(B + (3, 2)), RNG.uniform(0.5, 1.5, B + (3,)))
LR2 = (RNG.standard_normal(B + (3,)), RNG.standard_normal(B + (3, 1)), RNG.uniform(0.5, 1.5, B + (3,)))
_m = RNG.standard_normal((3, 3))
MVN = (RNG.standard_normal(B + (3,)), _m @ _m.T + 3 * np.eye(3))

KL_PAIRS = [
    ("HalfNormal-HalfNormal", lambda M, a, b: (M.HalfNormal(a), M.HalfNormal(b)), (k_sc1, k_sc2)),
    ("Pareto-Pareto", lambda M, a, b, c, d: (M.Pareto(a, b), M.Pareto(c, d)),
     (k_sc1 + np.array([0.0, 0.0, 1.0]), k_al1, k_sc1 + np.array([0.2, -0.1, 0.0]), k_al2)),
    ("ContinuousBernoulli-ContinuousBernoulli",
     lambda M, a, b: (M.ContinuousBernoulli(a), M.ContinuousBernoulli(b)), (k_pr1, k_pr2)),
    ("LowRank-LowRank", lambda M, a, b, c, d, e, f: (M.LowRankMultivariateNormal(a, b, c),
                                                     M.LowRankMultivariateNormal(d, e, f)), LR + LR2),
    ("MVN-LowRank", lambda M, a, b, c, d, e: (M.MultivariateNormal(a, b), M.LowRankMultivariateNormal(c, d, e)),
     MVN + LR2),
    ("LowRank-MVN", lambda M, a, b, c, d, e: (M.LowRankMultivariateNormal(a, b, c), M.MultivariateNormal(d, e)),
     LR + MVN),
    ("ContinuousBernoulli-Pareto", lambda M, a, b, c: (M.ContinuousBernoulli(a), M.Pareto(b, c)),
     (k_pr1, k_sc1, k_al1)),
    ("ContinuousBernoulli-Exponential", lambda M, a, b: (M.ContinuousBernoulli(a), M.Exponential(b)), (k_pr1, k_sc2)),
    ("ContinuousBernoulli-Normal", lambda M, a, b, c: (M.ContinuousBernoulli(a), M.Normal(b, c)),
     (k_pr1, k_loc2, k_sc2)),
    ("ContinuousBernoulli-Uniform", lambda M, a, b, c: (M.ContinuousBernoulli(a), M.Uniform(b, c)),
     (k_pr1, np.array([-0.5, 0.1, -1.0]), np.array([1.5, 2.0, 0.9]))),
    ("Exponential-ContinuousBernoulli", lambda M, a, b: (M.Exponential(a), M.ContinuousBernoulli(b)), (k_sc1, k_pr2)),
    ("Exponential-Pareto", lambda M, a, b, c: (M.Exponential(a), M.Pareto(b, c)), (k_sc1, k_sc2, k_al2)),
    ("Gumbel-ContinuousBernoulli", lambda M, a, b, c: (M.Gumbel(a, b), M.ContinuousBernoulli(c)),
     (k_loc1, k_sc1, k_pr2)),
    ("Gumbel-Pareto", lambda M, a, b, c, d: (M.Gumbel(a, b), M.Pareto(c, d)), (k_loc1, k_sc1, k_sc2, k_al2)),
    ("Laplace-ContinuousBernoulli", lambda M, a, b, c: (M.Laplace(a, b), M.ContinuousBernoulli(c)),
     (k_loc1, k_sc1, k_pr2)),
    ("Laplace-Pareto", lambda M, a, b, c, d: (M.Laplace(a, b), M.Pareto(c, d)), (k_loc1, k_sc1, k_sc2, k_al2)),
    ("Normal-ContinuousBernoulli", lambda M, a, b, c: (M.Normal(a, b), M.ContinuousBernoulli(c)),
     (k_loc1, k_sc1, k_pr2)),
    ("Normal-Pareto", lambda M, a, b, c, d: (M.Normal(a, b), M.Pareto(c, d)), (k_loc1, k_sc1, k_sc2, k_al2)),
    ("Pareto-ContinuousBernoulli", lambda M, a, b, c: (M.Pareto(a, b), M.ContinuousBernoulli(c)),
     (k_sc1, k_al1, k_pr2)),
    ("Pareto-Uniform", lambda M, a, b, c, d: (M.Pareto(a, b), M.Uniform(c, d)), (k_sc1, k_al1, k_lo, k_hi)),
    ("Pareto-Exponential", lambda M, a, b, c: (M.Pareto(a, b), M.Exponential(c)),
     (k_sc1, np.array([3.5, 0.9, 5.0]), k_sc2)),
    ("Pareto-Normal", lambda M, a, b, c, d: (M.Pareto(a, b), M.Normal(c, d)),
     (k_sc1, np.array([4.5, 1.9, 6.0]), k_loc2, k_sc2 * 3)),
    ("Uniform-ContinuousBernoulli", lambda M, a, b, c: (M.Uniform(a, b), M.ContinuousBernoulli(c)),
     (np.array([0.1, 0.0, 0.3]), np.array([0.8, 0.5, 1.0]), k_pr2)),
    ("Uniform-Pareto", lambda M, a, b, c, d: (M.Uniform(a, b), M.Pareto(c, d)),
     (k_pareto_lo, k_pareto_hi, np.array([1.5, 1.0, 3.5]), k_al2)),
]
KL_IDS = [p[0] for p in KL_PAIRS]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("pair", KL_PAIRS, ids=KL_IDS)
def test_kl_matches_torch_with_gradients(pair, device):
    torch = pytest.importorskip("torch")
    name, build, params = pair
    sp = [_t(p, device, grad=True) for p in params]
    tp = [torch.tensor(p, requires_grad=True) for p in params]
    s_kl = D.kl_divergence(*build(D, *sp))
    t_kl = torch.distributions.kl_divergence(*build(torch.distributions, *tp))
    _check(s_kl, t_kl.detach().numpy(), device, rtol=1e-9)
    finite = torch.isfinite(t_kl)
    if not finite.any() or not t_kl.requires_grad:
        return
    w = RNG.standard_normal(tuple(t_kl.shape)) * finite.numpy()
    s_out = st.where(_t(finite.numpy(), device), s_kl, 0.0)
    _grads_match(torch, s_out * _t(w, device), sp, torch.where(finite, t_kl, 0.0) * torch.tensor(w), tp, device)


# where the closed form is infinite though p's samples lie in q's support: Pareto's E[x] (alpha <= 1) or E[x^2]
# (alpha <= 2) is infinite; torch's rule for Uniform-ContinuousBernoulli counts a uniform touching 0 or 1 as outside
INFINITE_INSIDE = {"Pareto-Exponential": [False, True, False], "Pareto-Normal": [False, True, False],
                   "Uniform-ContinuousBernoulli": [False, True, True]}


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("pair", KL_PAIRS, ids=KL_IDS)
def test_kl_matches_monte_carlo(pair, device, monkeypatch):
    """A finite KL lies within 5 standard errors of the mean of ``log p(x) - log q(x)`` over samples of p; it is
    infinite exactly where p's samples leave q's support, or where INFINITE_INSIDE says why."""
    name, build, params = pair
    p, q = build(D, *[_t(a, device) for a in params])
    kl = _host(D.kl_divergence(p, q))
    n = 20000
    st.manual_seed(21)
    x = p.sample((n,))
    monkeypatch.setattr(D.Distribution, "_validate_args", False)  # score samples outside q's support, as -inf
    diff = _host(p.log_prob(x) - q.log_prob(x))
    finite = np.isfinite(kl)
    d, k = diff.reshape(n, -1)[:, finite.reshape(-1)], kl[finite]
    assert np.all(np.abs(d.mean(0) - k) < 5 * d.std(0) / np.sqrt(n) + 1e-9), (d.mean(0), k)
    outside = ~_host(q.support.check(x)).astype(bool)
    np.testing.assert_array_equal(outside.any(0) | np.array(INFINITE_INSIDE.get(name, False)), ~finite)


def test_kl_more_registrations():
    """The pairs kl_more.py adds are torch's: with kl.py's, every torch pair among the registered classes is here."""
    tkl = pytest.importorskip("torch.distributions.kl")
    from strided.distributions import kl as KL

    torch_pairs = {(a.__name__, b.__name__) for a, b in tkl._KL_REGISTRY}
    ours = {(a.__name__, b.__name__) for a, b in KL._KL_REGISTRY}
    assert ours <= torch_pairs
    classes = {c.__name__ for pair in KL._KL_REGISTRY for c in pair}
    assert {"HalfNormal", "Pareto", "ContinuousBernoulli", "LowRankMultivariateNormal"} <= classes
    assert not {pair for pair in torch_pairs if set(pair) <= classes} - ours
    with pytest.raises(ValueError, match="Low Rank Multivariate Normals with different event shapes"):
        D.kl_divergence(D.LowRankMultivariateNormal(st.zeros(2), st.ones(2, 1), st.ones(2)),
                        D.LowRankMultivariateNormal(st.zeros(3), st.ones(3, 1), st.ones(3)))
