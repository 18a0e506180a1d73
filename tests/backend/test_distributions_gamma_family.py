"""strided.distributions' gamma family (Gamma, Chi2, Beta, Dirichlet, StudentT, FisherSnedecor, Poisson, Binomial,
NegativeBinomial) on every available backend: log_prob / entropy / moments against closed forms in NumPy, values and
gradients against torch (when installed), reparameterized gradients against torch's given the same draws, sample
statistics under a fixed seed, reproducibility, shapes, dtypes, expand, reprs and validation. Meta: shapes only."""

from __future__ import annotations

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
BATCH = (2, 3)
RNG = np.random.default_rng(7)
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
    tail = z * (1 / 12 - z * (1 / 120 - z * (1 / 252 - z * (1 / 240 - z / 132))))
    return acc + np.log(x) - 0.5 / x - tail


def _lbeta(a, b):
    return _lgamma(a) + _lgamma(b) - _lgamma(a + b)


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


@dataclass
class Case:
    """A family with parameters of shape BATCH, values in its support of shape (5,) + BATCH and NumPy closed forms
    ``ref[name](*params[, x])``."""

    name: str
    make: Callable  # make(module, *params): module is strided's or torch's distributions
    params: tuple
    value: np.ndarray
    ref: dict
    discrete: bool = False


_VS = (5,) + BATCH
_a, _b = RNG.uniform(1.2, 4.0, BATCH), RNG.uniform(1.2, 4.0, BATCH)
_rate, _loc = RNG.uniform(0.5, 2.0, BATCH), RNG.standard_normal(BATCH)
_df, _df1, _df2 = RNG.uniform(2.5, 6.0, BATCH), RNG.uniform(3.0, 8.0, BATCH), RNG.uniform(5.0, 12.0, BATCH)
_p, _n = RNG.uniform(0.2, 0.8, BATCH), np.array([[5.0, 8.0, 12.0], [3.0, 20.0, 7.0]])
_gamma_lp = lambda a, r, x: a * np.log(r) + (a - 1) * np.log(x) - r * x - _lgamma(a)  # noqa: E731
_gamma_h = lambda a, r: a - np.log(r) + _lgamma(a) + (1 - a) * _digamma(a)  # noqa: E731


def _student_lp(v, m, s, x):
    y = (x - m) / s
    return (_lgamma((v + 1) / 2) - _lgamma(v / 2) - 0.5 * np.log(v * np.pi) - np.log(s)
            - (v + 1) / 2 * np.log1p(y * y / v))


def _fisher_lp(d1, d2, x):
    return (0.5 * d1 * np.log(d1 / d2) + (0.5 * d1 - 1) * np.log(x) - 0.5 * (d1 + d2) * np.log1p(d1 / d2 * x)
            - _lbeta(d1 / 2, d2 / 2))


CASES = [
    Case("Gamma", lambda M, a, r: M.Gamma(a, r), (_a, _rate), RNG.uniform(0.05, 6.0, _VS), {
        "log_prob": _gamma_lp, "entropy": _gamma_h, "mean": lambda a, r: a / r,
        "mode": lambda a, r: np.maximum((a - 1) / r, 0), "variance": lambda a, r: a / r**2}),
    Case("Chi2", lambda M, v: M.Chi2(v), (_df,), RNG.uniform(0.05, 9.0, _VS), {
        "log_prob": lambda v, x: _gamma_lp(v / 2, 0.5, x), "entropy": lambda v: _gamma_h(v / 2, 0.5),
        "mean": lambda v: v, "variance": lambda v: 2 * v}),
    Case("Beta", lambda M, a, b: M.Beta(a, b), (_a, _b), RNG.uniform(0.02, 0.98, _VS), {
        "log_prob": lambda a, b, x: (a - 1) * np.log(x) + (b - 1) * np.log1p(-x) - _lbeta(a, b),
        "entropy": lambda a, b: (_lbeta(a, b) - (a - 1) * _digamma(a) - (b - 1) * _digamma(b)
                                 + (a + b - 2) * _digamma(a + b)),
        "mean": lambda a, b: a / (a + b), "mode": lambda a, b: (a - 1) / (a + b - 2),
        "variance": lambda a, b: a * b / ((a + b) ** 2 * (a + b + 1))}),
    Case("StudentT", lambda M, v, m, s: M.StudentT(v, m, s), (_df, _loc, _rate), RNG.standard_normal(_VS) * 3, {
        "log_prob": _student_lp,
        "entropy": lambda v, m, s: (np.log(s) + (v + 1) / 2 * (_digamma((v + 1) / 2) - _digamma(v / 2))
                                    + 0.5 * np.log(v) + _lbeta(v / 2, 0.5)),
        "mean": lambda v, m, s: m, "mode": lambda v, m, s: m, "variance": lambda v, m, s: s * s * v / (v - 2)}),
    Case("FisherSnedecor", lambda M, a, b: M.FisherSnedecor(a, b), (_df1, _df2), RNG.uniform(0.05, 5.0, _VS), {
        "log_prob": _fisher_lp, "mean": lambda a, b: b / (b - 2),
        "mode": lambda a, b: (a - 2) / a * b / (b + 2),
        "variance": lambda a, b: 2 * b**2 * (a + b - 2) / (a * (b - 2) ** 2 * (b - 4))}),
    Case("Poisson", lambda M, r: M.Poisson(r), (_rate * 4,), RNG.integers(0, 12, _VS).astype(float), {
        "log_prob": lambda r, k: k * np.log(r) - r - _lgamma(k + 1), "mean": lambda r: r, "variance": lambda r: r,
        "mode": lambda r: np.floor(r)}, discrete=True),
    Case("Binomial", lambda M, n, p: M.Binomial(n, p), (_n, _p), np.minimum(RNG.integers(0, 8, _VS), _n), {
        "log_prob": lambda n, p, k: (_lgamma(n + 1) - _lgamma(k + 1) - _lgamma(n - k + 1) + k * np.log(p)
                                     + (n - k) * np.log1p(-p)),
        "mean": lambda n, p: n * p, "variance": lambda n, p: n * p * (1 - p),
        "mode": lambda n, p: np.minimum(np.floor((n + 1) * p), n)}, discrete=True),
    Case("BinomialLogits", lambda M, n, lg: M.Binomial(n, logits=lg), (_n, _loc), np.minimum(RNG.integers(0, 8, _VS),
                                                                                            _n), {
        "log_prob": lambda n, lg, k: (_lgamma(n + 1) - _lgamma(k + 1) - _lgamma(n - k + 1) + k * lg
                                      - n * np.logaddexp(0, lg)),
        "mean": lambda n, lg: n / (1 + np.exp(-lg))}, discrete=True),
    Case("NegativeBinomial", lambda M, r, p: M.NegativeBinomial(r, p), (_a, _p), RNG.integers(0, 9, _VS).astype(float),
         {"log_prob": lambda r, p, k: (_lgamma(r + k) - _lgamma(k + 1) - _lgamma(r) + r * np.log1p(-p)
                                       + k * np.log(p)),
          "mean": lambda r, p: r * p / (1 - p), "variance": lambda r, p: r * p / (1 - p) ** 2,
          "mode": lambda r, p: np.maximum(np.floor((r - 1) * p / (1 - p)), 0)}, discrete=True),
]
IDS = [c.name for c in CASES]
RSAMPLE = ("Gamma", "Chi2", "Beta", "StudentT", "FisherSnedecor")


def _make(case, device, grad=False, dtype=None):
    params = [_t(p, device, grad=grad, dtype=dtype) for p in case.params]
    return case.make(D, *params), params


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_values_match_closed_forms(case, device):
    d, _ = _make(case, device)
    assert d.batch_shape == BATCH and d.event_shape == ()
    _check(d.log_prob(_t(case.value, device)), case.ref["log_prob"](*case.params, case.value), device)
    for name in ("entropy", "mean", "mode", "variance"):
        if name in case.ref:
            got = d.entropy() if name == "entropy" else getattr(d, name)
            _check(got, case.ref[name](*case.params), device, rtol=1e-9)
    assert d.has_rsample == (case.name in RSAMPLE)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_matches_torch_values_and_gradients(case, device):
    torch = pytest.importorskip("torch")
    sp = [_t(p, device, grad=True) for p in case.params]
    tp = [torch.tensor(p, requires_grad=True) for p in case.params]
    sd, td = case.make(D, *sp), case.make(torch.distributions, *tp)
    for prop in ("mean", "mode", "variance", "stddev"):
        _check(getattr(sd, prop), getattr(td, prop).detach().numpy(), device)
    methods = [("log_prob", case.value)]
    if case.name not in ("FisherSnedecor", "Poisson", "NegativeBinomial", "Binomial", "BinomialLogits"):
        # (torch has none, or only for one total count: test_scalar_parameters_and_special_cases)
        methods.append(("entropy", None))
    w = RNG.standard_normal(_VS)
    for name, value in methods:
        s_out = sd.entropy() if value is None else sd.log_prob(_t(value, device))
        t_out = td.entropy() if value is None else td.log_prob(torch.tensor(value))
        _check(s_out, t_out.detach().numpy(), device)
        ww = w[(0,) * (len(_VS) - s_out.dim())]
        s_g = st.autograd.grad((s_out * _t(ww, device)).sum(), sp, allow_unused=True, retain_graph=True)
        t_g = torch.autograd.grad((t_out * torch.tensor(ww)).sum(), tp, allow_unused=True, retain_graph=True)
        for sg, tg in zip(s_g, t_g):
            if tg is None:
                assert sg is None or device == "meta" or not _host(sg).any(), name
            else:  # (entropies differentiate to trigamma: torch's is good to ~1e-9 relative, strided's to 1e-15)
                _check(sg, tg.numpy(), device, rtol=1e-9 if value is not None else 1e-7, atol=1e-11)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["Gamma", "Chi2"])
def test_gamma_cdf_matches_torch(name, device):
    torch = pytest.importorskip("torch")
    case = next(c for c in CASES if c.name == name)
    x = np.concatenate([case.value, np.zeros((1,) + BATCH), np.full((1,) + BATCH, 40.0)])
    sv, tv = _t(x, device, grad=True), torch.tensor(x, requires_grad=True)
    sd = case.make(D, *[_t(p, device) for p in case.params])
    td = case.make(torch.distributions, *[torch.tensor(p) for p in case.params])
    s_out, t_out = sd.cdf(sv), td.cdf(tv)
    _check(s_out, t_out.detach().numpy(), device, rtol=1e-12, atol=1e-15)
    (sg,), (tg,) = st.autograd.grad(s_out.sum(), [sv]), torch.autograd.grad(t_out.sum(), [tv])
    _check(sg, tg.numpy(), device, rtol=1e-10, atol=1e-14)
    conc = _t(case.params[0], device, grad=True)  # torch: not differentiable in the concentration
    out = case.make(D, conc, *[_t(p, device) for p in case.params[1:]]).cdf(_t(case.value, device))
    with pytest.raises(NotImplementedError, match="the derivative for 'igamma: input' is not implemented."):
        out.sum().backward()


def test_gamma_cdf_large_and_small_concentrations():
    torch = pytest.importorskip("torch")
    a = np.array([1e-3, 0.5, 30.0, 700.0, 2e4, 2e4, 2e4])
    x = np.array([1e-5, 8.0, 29.0, 650.0, 1.99e4, 2.03e4, 5.0])
    got = _host(D.Gamma(_t(a), 1.0).cdf(_t(x)))
    # (torch's own gammainc is good to ~1e-9 relative here; strided's igamma agrees with mpmath to ~1e-13)
    np.testing.assert_allclose(got, torch.special.gammainc(torch.tensor(a), torch.tensor(x)).numpy(), rtol=2e-9,
                               atol=1e-300)


# -- reparameterized samples: torch's gradients given strided's draws -----------------------------------------------
def _torch_with_draws(torch, monkeypatch, draws):
    """Make torch's distributions take ``draws`` (strided's, in order) for their standard normal, standard gamma and
    Dirichlet draws, keeping torch's backward formulas."""
    import torch.distributions.gamma as tgamma
    import torch.distributions.studentT as tstudent

    queue = list(draws)

    class Fixed(torch.autograd.Function):
        @staticmethod
        def forward(ctx, concentration):
            x = torch.tensor(queue.pop(0))
            ctx.save_for_backward(concentration, x)
            return x

        @staticmethod
        def backward(ctx, grad):
            concentration, x = ctx.saved_tensors
            return grad * torch._standard_gamma_grad(concentration, x)

    monkeypatch.setattr(tgamma, "_standard_gamma", lambda c, generator=None: Fixed.apply(c))
    monkeypatch.setattr(tstudent, "_standard_normal", lambda *a, **k: torch.tensor(queue.pop(0)))
    monkeypatch.setattr(torch, "_sample_dirichlet", lambda c, generator=None: torch.tensor(queue.pop(0)))


def _draws(name, params, shape, seed, device):
    """The raw draws strided's rsample makes under ``seed`` on ``device``, in its order."""
    st.manual_seed(seed)
    g = lambda c: _host(st._standard_gamma(_t(np.broadcast_to(c, shape), device)))  # noqa: E731
    if name == "Gamma":
        return [g(params[0])]
    if name == "Chi2":
        return [g(params[0] / 2)]
    if name == "StudentT":
        return [_host(st.randn(shape, dtype=st.float64, device=device)), g(params[0] / 2)]
    if name == "FisherSnedecor":
        return [g(params[0] / 2), g(params[1] / 2)]
    conc = np.stack([params[0], params[1]], -1) if name == "Beta" else params[0]
    return [_host(st._sample_dirichlet(_t(np.broadcast_to(conc, shape + conc.shape[-1:]), device)))]


DIRICHLET = Case("Dirichlet", lambda M, c: M.Dirichlet(c), (RNG.uniform(0.3, 4.0, BATCH + (4,)),), None, {})


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("case", [c for c in CASES if c.name in RSAMPLE] + [DIRICHLET],
                         ids=list(RSAMPLE) + ["Dirichlet"])
def test_rsample_gradients_match_torch(case, device, monkeypatch):
    torch = pytest.importorskip("torch")
    sp = [_t(p, device, grad=True) for p in case.params]
    sd = case.make(D, *sp)
    shape = (4,) + BATCH
    draws = _draws(case.name, case.params, shape, seed=21, device=device)
    st.manual_seed(21)
    sx = sd.rsample((4,))
    assert sx.requires_grad and sx.device.type == device
    _torch_with_draws(torch, monkeypatch, draws)
    tp = [torch.tensor(p, requires_grad=True) for p in case.params]
    tx = case.make(torch.distributions, *tp).rsample((4,))
    np.testing.assert_allclose(_host(sx), tx.detach().numpy(), rtol=1e-12)
    w = RNG.standard_normal(tuple(tx.shape))
    for sg, tg in zip(st.autograd.grad((sx * _t(w, device)).sum(), sp),
                      torch.autograd.grad((tx * torch.tensor(w)).sum(), tp)):
        np.testing.assert_allclose(_host(sg), tg.numpy(), rtol=1e-9, atol=1e-12)


# -- sampling ---------------------------------------------------------------------------------------------------
N = 20000


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_sample_statistics(case, device):
    d, _ = _make(case, device)
    st.manual_seed(77)
    x = _host(d.sample((N,)))
    mean, var = _host(d.mean), _host(d.variance)
    assert np.all(np.abs(x.mean(0) - mean) < 5 * np.sqrt(var / N)), case.name
    if case.name not in ("StudentT", "FisherSnedecor"):  # (heavy tails: no usable standard error for the variance)
        dev = x - x.mean(0)
        se_var = np.sqrt(np.maximum((dev**4).mean(0) - (dev**2).mean(0) ** 2, 1e-12) / N)
        assert np.all(np.abs(x.var(0) - var) < 5 * se_var), case.name
    if case.discrete:
        assert np.all(x == np.round(x)) and np.all(x >= 0)
    if case.name in ("Gamma", "Chi2"):  # the cdf at the draws is uniform
        u = _host(d.cdf(_t(x, device)))
        assert np.all(np.abs(u.mean(0) - 0.5) < 5 * np.sqrt(1 / 12 / N))


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_dirichlet_values_and_statistics(device):
    torch = pytest.importorskip("torch")
    c = DIRICHLET.params[0]
    sd, td = D.Dirichlet(_t(c, device, grad=True)), torch.distributions.Dirichlet(torch.tensor(c))
    x = RNG.dirichlet(np.ones(4), (5,) + BATCH)
    for got, want in ((sd.log_prob(_t(x, device)), td.log_prob(torch.tensor(x))), (sd.entropy(), td.entropy()),
                      (sd.mean, td.mean), (sd.variance, td.variance), (sd.mode, td.mode)):
        _check(got, want.numpy(), device)
    a0 = c.sum(-1)
    lp = (_lgamma(a0) - _lgamma(c).sum(-1) + ((c - 1) * np.log(x)).sum(-1))
    _check(sd.log_prob(_t(x, device)), lp, device)
    low = D.Dirichlet(_t([[0.5, 0.2, 0.9], [2.0, 3.0, 0.5]], device))  # a vertex when every concentration < 1
    np.testing.assert_array_equal(_host(low.mode), torch.distributions.Dirichlet(
        torch.tensor([[0.5, 0.2, 0.9], [2.0, 3.0, 0.5]], dtype=torch.float64)).mode.numpy())
    st.manual_seed(3)
    s = _host(sd.sample((N,)))
    assert s.shape == (N,) + BATCH + (4,)
    assert np.all(np.abs(s.mean(0) - _host(sd.mean)) < 5 * np.sqrt(_host(sd.variance) / N))


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("case", CASES + [DIRICHLET], ids=IDS + ["Dirichlet"])
def test_sampling_is_reproducible(case, device):
    d, _ = _make(case, device)
    st.manual_seed(7)
    a = _host(d.sample((3,)))
    st.manual_seed(7)
    np.testing.assert_array_equal(a, _host(d.sample((3,))))
    if case.name == "Gamma":
        gen = st.Generator(device)
        b = _host(d.sample((3,), generator=gen.manual_seed(5)))
        np.testing.assert_array_equal(b, _host(d.sample((3,), generator=gen.manual_seed(5))))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES + [DIRICHLET], ids=IDS + ["Dirichlet"])
def test_shapes_dtypes_devices(case, device, dtype):
    sdt = getattr(st, dtype)
    d, _ = _make(case, device, dtype=sdt)
    event = tuple(d.event_shape)
    for sample_shape, want in (((), BATCH), ((4,), (4,) + BATCH), ((2, 5), (2, 5) + BATCH)):
        x = d.sample(sample_shape)
        assert tuple(x.shape) == want + event and x.dtype == sdt and x.device.type == device
        lp = d.log_prob(x)
        assert tuple(lp.shape) == want and lp.dtype == sdt and lp.device.type == device
        if d.has_rsample:
            assert tuple(d.rsample(sample_shape).shape) == want + event
    assert tuple(d.mean.shape) == BATCH + event and d.mean.dtype == sdt


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", CASES + [DIRICHLET], ids=IDS + ["Dirichlet"])
def test_expand(case, device):
    d, _ = _make(case, device)
    e = d.expand((4,) + BATCH)
    assert type(e) is type(d) and e.batch_shape == (4,) + BATCH and e._validate_args == d._validate_args
    assert tuple(e.sample((2,)).shape) == (2, 4) + BATCH + tuple(d.event_shape)
    if device != "meta":
        x = d.sample((4,))
        np.testing.assert_allclose(_host(e.log_prob(x)), _host(d.log_prob(x)), rtol=1e-12)
        np.testing.assert_allclose(_host(e.mean), np.broadcast_to(_host(d.mean), tuple(e.mean.shape)))


@pytest.mark.parametrize("case", CASES + [DIRICHLET], ids=IDS + ["Dirichlet"])
def test_repr_matches_torch(case):
    torch = pytest.importorskip("torch")
    s = repr(case.make(D, *[_t(p) for p in case.params]))
    t = repr(case.make(torch.distributions, *[torch.tensor(p) for p in case.params]))
    assert s == t.replace("torch.", "strided.")


def test_scalar_parameters_and_special_cases():
    torch = pytest.importorskip("torch")
    for make in (lambda M: M.Gamma(2.0, 3.0), lambda M: M.Beta(2.0, 3.0), lambda M: M.FisherSnedecor(3.0, 5.0),
                 lambda M: M.Poisson(2.0), lambda M: M.StudentT(3.0)):
        s, t = make(D), make(torch.distributions)
        assert s.batch_shape == tuple(t.batch_shape) and repr(s) == repr(t)
        assert s.sample().dtype == st.float32
    b = D.Binomial(10, _t([0.2, 0.7]))
    tb = torch.distributions.Binomial(10, torch.tensor([0.2, 0.7], dtype=torch.float64))
    np.testing.assert_allclose(_host(b.entropy()), tb.entropy().numpy(), rtol=1e-12)
    assert tuple(b.enumerate_support().shape) == (11, 2) and tuple(b.enumerate_support(False).shape) == (11, 1)
    with pytest.raises(NotImplementedError, match="Inhomogeneous total count not supported by `entropy`."):
        D.Binomial(_t([3.0, 4.0]), _t([0.2, 0.7])).entropy()
    nb = D.NegativeBinomial(_t([0.0, 2.0]), _t([0.5, 0.5]))  # total_count 0: certain 0
    np.testing.assert_allclose(_host(nb.log_prob(_t([0.0, 1.0]))), torch.distributions.NegativeBinomial(
        torch.tensor([0.0, 2.0]), torch.tensor([0.5, 0.5])).log_prob(torch.tensor([0.0, 1.0])).double().numpy())
    assert np.all(_host(nb.sample((50,)))[:, 0] == 0)
    with pytest.raises(ValueError, match="`concentration` parameter must be at least one-dimensional."):
        D.Dirichlet(_t(1.0))
    assert np.isnan(_host(D.StudentT(_t([0.5, 1.5])).mean)[0]) and _host(D.StudentT(_t([1.5])).variance)[0] == np.inf


def test_validation_messages_match_torch():
    torch = pytest.importorskip("torch")
    bad = [(lambda M, T: M.Gamma(T([-1.0]), T([1.0])), None), (lambda M, T: M.Beta(T([1.0]), T([0.0])), None),
           (lambda M, T: M.Binomial(T([2.5]), T([0.5])), None), (lambda M, T: M.Poisson(T([-0.5])), None),
           (lambda M, T: M.NegativeBinomial(T([2.0]), T([1.0])), None),
           (lambda M, T: M.Dirichlet(T([[1.0, -1.0]])), None), (lambda M, T: M.StudentT(T([0.0])), None),
           (lambda M, T: M.Gamma(T([1.0]), T([1.0])), [-1.0]), (lambda M, T: M.Poisson(T([1.0])), [1.5]),
           (lambda M, T: M.Binomial(T([3.0]), T([0.5])), [4.0]), (lambda M, T: M.Beta(T([2.0]), T([2.0])), [1.5])]
    for make, value in bad:
        msgs = []
        for M, T in ((D, lambda v: _t(v)), (torch.distributions, lambda v: torch.tensor(v, dtype=torch.float64))):
            with pytest.raises(ValueError) as info:
                d = make(M, T)
                d.log_prob(T(value))
            msgs.append(str(info.value).replace("torch.", "strided.").split("\n")[0])
        assert msgs[0] == msgs[1]
