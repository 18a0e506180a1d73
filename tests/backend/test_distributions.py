"""strided.distributions' univariate families (Normal, LogNormal, Uniform, Laplace, Exponential, Cauchy, Gumbel,
Bernoulli, Geometric) on every available backend: log_prob / cdf / icdf / entropy / moments against closed forms in
NumPy, values and gradients against torch (when installed), pathwise rsample gradients, sample statistics under a
fixed seed, reproducibility, shapes, expand, dtypes and reprs. Meta checks shapes and dtypes only."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest

import strided as st
from strided import distributions as D
from strided.testing import available_devices

DEVICES = available_devices()
DATA_DEVICES = [d for d in DEVICES if d != "meta"]
EULER = 0.57721566490153286060
BATCH = (2, 3)
_erf = np.vectorize(math.erf)


def _host(t) -> np.ndarray:
    return np.asarray(t.detach().cpu().numpy(), dtype=np.float64)


def _t(a, device="cpu", grad=False, dtype=None):
    a = np.asarray(a)
    t = st.tensor(a, device=device, dtype=dtype)
    return t.requires_grad_() if grad else t


def _normal_logpdf(m, s, x):
    return -((x - m) ** 2) / (2 * s * s) - np.log(s) - 0.5 * np.log(2 * np.pi)


def _normal_cdf(m, s, x):
    return 0.5 * (1 + _erf((x - m) / (s * np.sqrt(2))))


def _laplace_cdf(m, b, x):
    return np.where(x < m, 0.5 * np.exp((x - m) / b), 1 - 0.5 * np.exp(-(x - m) / b))


@dataclass
class Case:
    """A family with parameters of shape BATCH, values in its support of shape (5,) + BATCH, and NumPy closed forms
    ``ref[method](*params, x)`` (``x`` absent for entropy / moments)."""

    name: str
    make: Callable  # make(module, *params) -> distribution (module: strided's or torch's distributions)
    params: tuple
    value: np.ndarray
    ref: dict
    discrete: bool = False
    pathwise: Callable | None = None  # d sample / d params from (params, sample): Note in test_rsample_pathwise
    extra: dict = field(default_factory=dict)


RNG = np.random.default_rng(2024)
_loc = RNG.standard_normal(BATCH)
_scale = RNG.uniform(0.5, 2.0, BATCH)
_low = RNG.uniform(-2.0, 0.0, BATCH)
_high = _low + RNG.uniform(0.5, 2.0, BATCH)
_rate = RNG.uniform(0.5, 2.0, BATCH)
_probs = RNG.uniform(0.2, 0.8, BATCH)
_vshape = (5,) + BATCH

CASES = [
    Case("Normal", lambda M, m, s: M.Normal(m, s), (_loc, _scale), RNG.standard_normal(_vshape) * 2, {
        "log_prob": _normal_logpdf, "cdf": _normal_cdf,
        "entropy": lambda m, s: 0.5 + 0.5 * np.log(2 * np.pi) + np.log(s),
        "mean": lambda m, s: m, "mode": lambda m, s: m, "variance": lambda m, s: s * s, "stddev": lambda m, s: s},
        pathwise=lambda p, x: ((1.0,), ((x - p[0]) / p[1],))),
    Case("LogNormal", lambda M, m, s: M.LogNormal(m, s), (_loc, _scale), RNG.uniform(0.1, 5.0, _vshape), {
        "log_prob": lambda m, s, x: _normal_logpdf(m, s, np.log(x)) - np.log(x),
        "cdf": lambda m, s, x: _normal_cdf(m, s, np.log(x)),
        "entropy": lambda m, s: 0.5 + 0.5 * np.log(2 * np.pi) + np.log(s) + m,
        "mean": lambda m, s: np.exp(m + s * s / 2), "mode": lambda m, s: np.exp(m - s * s),
        "variance": lambda m, s: np.expm1(s * s) * np.exp(2 * m + s * s)},
        pathwise=lambda p, x: ((x,), (x * (np.log(x) - p[0]) / p[1],))),
    Case("Uniform", lambda M, lo, hi: M.Uniform(lo, hi), (_low, _high),
         _low + RNG.uniform(0, 1, _vshape) * (_high - _low), {
             "log_prob": lambda lo, hi, x: -np.log(hi - lo) + 0 * x,
             "cdf": lambda lo, hi, x: np.clip((x - lo) / (hi - lo), 0, 1),
             "entropy": lambda lo, hi: np.log(hi - lo), "mean": lambda lo, hi: (lo + hi) / 2,
             "variance": lambda lo, hi: (hi - lo) ** 2 / 12, "stddev": lambda lo, hi: (hi - lo) / np.sqrt(12)},
         pathwise=lambda p, x: (((p[1] - x) / (p[1] - p[0]),), ((x - p[0]) / (p[1] - p[0]),))),
    Case("Laplace", lambda M, m, b: M.Laplace(m, b), (_loc, _scale), RNG.standard_normal(_vshape) * 2, {
        "log_prob": lambda m, b, x: -np.log(2 * b) - np.abs(x - m) / b, "cdf": _laplace_cdf,
        "entropy": lambda m, b: 1 + np.log(2 * b), "mean": lambda m, b: m, "mode": lambda m, b: m,
        "variance": lambda m, b: 2 * b * b, "stddev": lambda m, b: np.sqrt(2) * b},
        pathwise=lambda p, x: ((1.0,), ((x - p[0]) / p[1],))),
    Case("Exponential", lambda M, r: M.Exponential(r), (_rate,), RNG.uniform(0.0, 4.0, _vshape), {
        "log_prob": lambda r, x: np.log(r) - r * x, "cdf": lambda r, x: 1 - np.exp(-r * x),
        "entropy": lambda r: 1 - np.log(r), "mean": lambda r: 1 / r, "mode": lambda r: 0 * r,
        "variance": lambda r: r**-2.0, "stddev": lambda r: 1 / r},
        pathwise=lambda p, x: ((-x / p[0],),)),
    Case("Cauchy", lambda M, m, s: M.Cauchy(m, s), (_loc, _scale), RNG.standard_normal(_vshape) * 3, {
        "log_prob": lambda m, s, x: -np.log(np.pi * s * (1 + ((x - m) / s) ** 2)),
        "cdf": lambda m, s, x: np.arctan((x - m) / s) / np.pi + 0.5,
        "entropy": lambda m, s: np.log(4 * np.pi * s), "mean": lambda m, s: np.full_like(m, np.nan),
        "mode": lambda m, s: m, "variance": lambda m, s: np.full_like(m, np.inf)},
        pathwise=lambda p, x: ((1.0,), ((x - p[0]) / p[1],))),
    Case("Gumbel", lambda M, m, b: M.Gumbel(m, b), (_loc, _scale), RNG.standard_normal(_vshape) * 2, {
        "log_prob": lambda m, b, x: -(x - m) / b - np.exp(-(x - m) / b) - np.log(b),
        "cdf": lambda m, b, x: np.exp(-np.exp(-(x - m) / b)),
        "entropy": lambda m, b: np.log(b) + 1 + EULER, "mean": lambda m, b: m + b * EULER, "mode": lambda m, b: m,
        "variance": lambda m, b: (np.pi * b) ** 2 / 6, "stddev": lambda m, b: np.pi * b / np.sqrt(6)},
        pathwise=lambda p, x: ((1.0,), ((x - p[0]) / p[1],))),
    Case("Bernoulli", lambda M, p: M.Bernoulli(probs=p), (_probs,), RNG.integers(0, 2, _vshape).astype(float), {
        "log_prob": lambda p, x: x * np.log(p) + (1 - x) * np.log1p(-p),
        "entropy": lambda p: -p * np.log(p) - (1 - p) * np.log1p(-p), "mean": lambda p: p,
        "mode": lambda p: (p >= 0.5).astype(float), "variance": lambda p: p * (1 - p)}, discrete=True),
    Case("BernoulliLogits", lambda M, lg: M.Bernoulli(logits=lg), (_loc,), RNG.integers(0, 2, _vshape).astype(float), {
        "log_prob": lambda lg, x: x * lg - np.logaddexp(0, lg),
        "entropy": lambda lg: np.logaddexp(0, lg) - lg / (1 + np.exp(-lg)),
        "mean": lambda lg: 1 / (1 + np.exp(-lg)), "variance": lambda lg: np.exp(-lg) / (1 + np.exp(-lg)) ** 2},
        discrete=True),
    Case("Geometric", lambda M, p: M.Geometric(probs=p), (_probs,), RNG.integers(0, 6, _vshape).astype(float), {
        "log_prob": lambda p, x: x * np.log1p(-p) + np.log(p),
        "entropy": lambda p: (-(1 - p) * np.log1p(-p) - p * np.log(p)) / p, "mean": lambda p: (1 - p) / p,
        "mode": lambda p: 0 * p, "variance": lambda p: (1 - p) / p**2}, discrete=True),
    Case("GeometricLogits", lambda M, lg: M.Geometric(logits=lg), (_loc,), RNG.integers(0, 6, _vshape).astype(float), {
        "log_prob": lambda lg, x: -x * np.logaddexp(0, lg) - np.logaddexp(0, -lg),
        "mean": lambda lg: np.exp(-lg)}, discrete=True),
]
IDS = [c.name for c in CASES]
CONTINUOUS = [c for c in CASES if not c.discrete]
RSAMPLE = [c for c in CASES if c.pathwise is not None]


def _make(case, device, grad=False, dtype=None):
    params = [_t(p, device, grad=grad, dtype=dtype) for p in case.params]
    return case.make(D, *params), params


def _check(got, want, device, rtol=1e-10, atol=1e-12):
    want = np.broadcast_to(np.asarray(want, dtype=np.float64), np.shape(want))
    assert tuple(got.shape) == np.shape(want)
    if device != "meta":
        np.testing.assert_allclose(_host(got), want, rtol=rtol, atol=atol)


# -- values against closed forms --------------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_values_match_closed_forms(case, device):
    d, _ = _make(case, device)
    assert d.batch_shape == BATCH and d.event_shape == ()
    x = _t(case.value, device)
    _check(d.log_prob(x), case.ref["log_prob"](*case.params, case.value), device)
    for name in ("entropy", "mean", "mode", "variance", "stddev"):
        if name in case.ref:
            got = getattr(d, name)() if name == "entropy" else getattr(d, name)
            _check(got, case.ref[name](*case.params), device)
    if "cdf" in case.ref:
        _check(d.cdf(x), case.ref["cdf"](*case.params, case.value), device)
        q = RNG.uniform(0.05, 0.95, _vshape)
        xq = d.icdf(_t(q, device))
        assert tuple(xq.shape) == _vshape and xq.dtype == st.float64
        if device != "meta":  # icdf inverts the closed-form cdf
            np.testing.assert_allclose(case.ref["cdf"](*case.params, _host(xq)), q, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_icdf_closed_forms(device):
    q = np.array([0.1, 0.3, 0.5, 0.8, 0.95])
    m, s = 0.3, 1.7
    cases = [(D.Normal(_t(m, device), _t(s, device)), None),
             (D.Laplace(_t(m, device), _t(s, device)), m - s * np.sign(q - 0.5) * np.log1p(-2 * np.abs(q - 0.5))),
             (D.Exponential(_t(s, device)), -np.log1p(-q) / s),
             (D.Cauchy(_t(m, device), _t(s, device)), m + s * np.tan(np.pi * (q - 0.5))),
             (D.Gumbel(_t(m, device), _t(s, device)), m - s * np.log(-np.log(q))),
             (D.Uniform(_t(m, device), _t(s, device)), m + q * (s - m))]
    for d, want in cases:
        got = d.icdf(_t(q, device))
        if want is None:  # the normal quantile: its cdf gives q back
            assert tuple(got.shape) == (5,)
            if device != "meta":
                np.testing.assert_allclose(_normal_cdf(m, s, _host(got)), q, rtol=1e-12)
            continue
        _check(got, want, device)


def test_discrete_families_have_no_cdf():
    for d in (D.Bernoulli(0.3), D.Geometric(0.3), D.Categorical(st.tensor([0.2, 0.8]))):
        with pytest.raises(NotImplementedError):
            d.cdf(st.tensor(0.0))


def test_edge_values():
    # Geometric with p = 1 at 0 is certain (torch zeroes the 0 * log(0) term); Bernoulli's mode at 1/2 is nan
    g = D.Geometric(st.tensor([1.0, 0.5]))
    np.testing.assert_allclose(_host(g.log_prob(st.tensor([0.0, 0.0]))), [0.0, np.log(0.5)])
    np.testing.assert_array_equal(_host(D.Bernoulli(st.tensor([0.5, 0.7, 0.2])).mode), [np.nan, 1.0, 0.0])
    u = D.Uniform(st.tensor(0.0), st.tensor(2.0), validate_args=False)
    np.testing.assert_allclose(_host(u.log_prob(st.tensor([-1.0, 0.0, 1.0, 2.0]))), [-np.inf, -np.log(2),
                                                                                   -np.log(2), -np.inf])
    np.testing.assert_allclose(_host(u.cdf(st.tensor([-1.0, 3.0]))), [0.0, 1.0])
    assert np.isnan(_host(u.mode)).all()
    e = D.Exponential(st.tensor(2.0))
    assert _host(e.perplexity()) == pytest.approx(np.exp(1 - np.log(2.0)))


# -- against torch: values and gradients ------------------------------------------------------------------------------
def _torch_pair(torch, case, device):
    sp = [_t(p, device, grad=True) for p in case.params]
    tp = [torch.tensor(p, requires_grad=True) for p in case.params]
    return case.make(D, *sp), sp, case.make(torch.distributions, *tp), tp


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_matches_torch_values_and_gradients(case, device):
    torch = pytest.importorskip("torch")
    sd, sp, td, tp = _torch_pair(torch, case, device)
    for prop in ("mean", "mode", "variance", "stddev"):
        try:
            want = getattr(td, prop)
        except NotImplementedError:
            continue
        _check(getattr(sd, prop), want.detach().numpy(), device)
    methods = [("log_prob", case.value), ("entropy", None)]
    if not case.discrete:
        methods += [("cdf", case.value), ("icdf", RNG.uniform(0.05, 0.95, _vshape))]
    upstream = RNG.standard_normal(_vshape)
    for name, value in methods:
        if value is None:
            s_out, t_out = sd.entropy(), td.entropy()
        else:
            s_out, t_out = getattr(sd, name)(_t(value, device)), getattr(td, name)(torch.tensor(value))
        _check(s_out, t_out.detach().numpy(), device)
        w = upstream[(0,) * (len(_vshape) - s_out.dim())]
        # retain_graph: a lazily derived parameter (Bernoulli's logits) is shared by the methods' graphs
        s_grads = st.autograd.grad((s_out * _t(w, device)).sum(), sp, allow_unused=True, retain_graph=True)
        t_grads = torch.autograd.grad((t_out * torch.tensor(w)).sum(), tp, allow_unused=True, retain_graph=True)
        for sg, tg in zip(s_grads, t_grads):
            if tg is None:  # e.g. the entropy does not depend on a location
                assert sg is None or device == "meta" or not _host(sg).any(), name
                continue
            _check(sg, tg.numpy(), device, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_repr_matches_torch(case):
    torch = pytest.importorskip("torch")
    s = repr(case.make(D, *[_t(p) for p in case.params]))
    t = repr(case.make(torch.distributions, *[torch.tensor(p) for p in case.params]))
    assert s == t.replace("torch.", "strided.")
    scalars = [float(p.flat[0]) for p in case.params]
    assert repr(case.make(D, *scalars)) == repr(case.make(torch.distributions, *scalars))


def test_reprs():
    assert repr(D.Normal(0.0, 1.0)) == "Normal(loc: 0.0, scale: 1.0)"
    assert repr(D.Normal(st.zeros(2), 1.0)) == "Normal(loc: strided.Size([2]), scale: strided.Size([2]))"
    assert repr(D.Bernoulli(logits=st.tensor([0.5]))) == "Bernoulli(logits: tensor([0.5000]))"
    assert repr(D.LogNormal(0.0, 1.0)) == "LogNormal()"
    assert repr(D.Gumbel(0.0, 2.0)) == "Gumbel(loc: 0.0, scale: 2.0)"
    assert repr(D.Uniform(st.zeros(2, 2), 1.0)) == "Uniform(low: strided.Size([2, 2]), high: strided.Size([2, 2]))"


# -- reparameterized sampling -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", RSAMPLE, ids=[c.name for c in RSAMPLE])
def test_rsample_pathwise_gradient(case, device):
    """Note: a reparameterized sample is ``x = g(params, noise)``; the gradient of ``sum(w * x)`` w.r.t. each
    parameter is ``sum(w * dx/dparam)``, where dx/dparam is known in closed form given x (e.g. ``(x - loc) / scale``
    for a location-scale family)."""
    d, params = _make(case, device, grad=True)
    assert d.has_rsample
    st.manual_seed(5)
    x = d.rsample((7,))
    assert tuple(x.shape) == (7,) + BATCH and x.requires_grad and x.device.type == device
    w = RNG.standard_normal((7,) + BATCH)
    grads = st.autograd.grad((x * _t(w, device)).sum(), params)
    if device == "meta":
        assert all(tuple(g.shape) == BATCH for g in grads)
        return
    xs = _host(x)
    for g, (dx,) in zip(grads, case.pathwise(case.params, xs)):
        np.testing.assert_allclose(_host(g), (w * np.broadcast_to(dx, xs.shape)).sum(0), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_rsample_matches_torch_given_the_same_noise(device, monkeypatch):
    """torch's Normal / LogNormal / Uniform fed strided's noise give the same samples and gradients."""
    torch = pytest.importorskip("torch")
    import torch.distributions.normal as tnormal

    for name in ("Normal", "LogNormal", "Uniform"):
        case = next(c for c in CASES if c.name == name)
        sd, sp, td, tp = _torch_pair(torch, case, device)
        shape = (4,) + BATCH
        st.manual_seed(11)
        noise = _host((st.randn if name != "Uniform" else st.rand)(shape, dtype=st.float64, device=device))
        monkeypatch.setattr(tnormal, "_standard_normal", lambda *a, n=noise, **k: torch.tensor(n))
        monkeypatch.setattr(torch, "rand", lambda *a, n=noise, **k: torch.tensor(n))
        st.manual_seed(11)
        sx, tx = sd.rsample((4,)), td.rsample((4,))
        monkeypatch.undo()
        np.testing.assert_allclose(_host(sx), tx.detach().numpy(), rtol=1e-12)
        w = RNG.standard_normal(shape)
        for sg, tg in zip(st.autograd.grad((sx * _t(w, device)).sum(), sp),
                          torch.autograd.grad((tx * torch.tensor(w)).sum(), tp)):
            np.testing.assert_allclose(_host(sg), tg.numpy(), rtol=1e-10)


def test_sample_is_detached_and_has_rsample_flags():
    loc = st.tensor([0.0, 1.0], requires_grad=True)
    assert not D.Normal(loc, 1.0).sample((3,)).requires_grad
    flags = {D.Normal: True, D.LogNormal: True, D.Uniform: True, D.Laplace: True, D.Exponential: True,
             D.Cauchy: True, D.Gumbel: True, D.Bernoulli: False, D.Geometric: False}
    for case in CASES:
        d = case.make(D, *[_t(p) for p in case.params])
        assert d.has_rsample == flags[type(d)], case.name
        if not d.has_rsample:
            with pytest.raises(NotImplementedError):
                d.rsample()


# -- sampling: statistics, reproducibility, shapes --------------------------------------------------------------------
N = 20000


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_sample_statistics(case, device):
    """The mean and variance of N samples lie within 5 standard errors of the closed forms (Cauchy: the median and
    quartiles); for continuous families ``cdf(sample)`` is uniform (mean 1/2 within 5 standard errors)."""
    d, _ = _make(case, device)
    st.manual_seed(1234)
    x = _host(d.sample((N,)))
    assert x.shape == (N,) + BATCH
    if case.name == "Cauchy":
        m, s = case.params
        for q, z in ((0.25, -1.0), (0.5, 0.0), (0.75, 1.0)):
            frac = (x < m + z * s).mean(0)
            assert np.all(np.abs(frac - q) < 5 * np.sqrt(q * (1 - q) / N))
    else:
        mean, var = _host(d.mean), _host(d.variance)
        assert np.all(np.abs(x.mean(0) - mean) < 5 * np.sqrt(var / N)), case.name
        dev = x - x.mean(0)
        se_var = np.sqrt(np.maximum((dev**4).mean(0) - (dev**2).mean(0) ** 2, 1e-12) / N)
        assert np.all(np.abs(x.var(0) - var) < 5 * se_var + 1e-12), case.name
    if case.discrete:
        assert np.all(x == np.round(x)) and np.all(x >= 0)
    else:
        u = _host(d.cdf(_t(x, device)))
        assert np.all(np.abs(u.mean(0) - 0.5) < 5 * np.sqrt(1 / 12 / N))


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_sampling_is_reproducible(case, device):
    d, _ = _make(case, device)
    st.manual_seed(7)
    a = _host(d.sample((3,)))
    st.manual_seed(7)
    b = _host(d.sample((3,)))
    st.manual_seed(8)
    c = _host(d.sample((3,)))
    np.testing.assert_array_equal(a, b)
    if not case.discrete:
        assert not np.array_equal(a, c)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_shapes_dtypes_devices(case, device, dtype):
    sdt = getattr(st, dtype)
    d, _ = _make(case, device, dtype=sdt)
    for sample_shape, want in (((), BATCH), ((4,), (4,) + BATCH), ((2, 5), (2, 5) + BATCH),
                               (st.Size([3]), (3,) + BATCH)):
        x = d.sample(sample_shape)
        assert tuple(x.shape) == want and x.dtype == sdt and x.device.type == device
        lp = d.log_prob(x)
        assert tuple(lp.shape) == want and lp.dtype == sdt and lp.device.type == device
    assert d._extended_shape((4,)) == (4,) + BATCH and isinstance(d._extended_shape(), st.Size)
    assert tuple(d.entropy().shape) == BATCH and d.entropy().dtype == sdt
    assert tuple(d.mean.shape) == BATCH
    # a value broadcast against the batch: one row of 3, and a sample dim in front
    if device != "meta" and case.name != "Uniform":  # (a row of Uniform's values is outside other rows' support)
        one = _t(case.value[0, 0], device, dtype=sdt)
        full = d.log_prob(one.expand(BATCH))
        np.testing.assert_allclose(_host(d.log_prob(one)), _host(full), rtol=1e-6)
    # scalar parameters make a distribution with no batch dims
    s = case.make(D, *[float(p.flat[0]) for p in case.params])
    assert s.batch_shape == () and tuple(s.sample((2,)).shape) == (2,) and s.sample().dtype == st.float32


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_expand(case, device):
    d, _ = _make(case, device)
    e = d.expand((4,) + BATCH)
    assert type(e) is type(d) and e.batch_shape == (4,) + BATCH and isinstance(e.batch_shape, st.Size)
    assert e._validate_args == d._validate_args
    x = _t(case.value[:4], device)
    _check(e.log_prob(x), _host(d.log_prob(x)) if device != "meta" else np.zeros((4,) + BATCH), device)
    assert tuple(e.sample((2,)).shape) == (2, 4) + BATCH
    _check(e.entropy(), np.broadcast_to(_host(d.entropy()), (4,) + BATCH) if device != "meta"
           else np.zeros((4,) + BATCH), device)


def test_float32_precision_and_scalar_promotion():
    d = D.Normal(st.tensor([0.5], dtype=st.float32), 2)  # the number takes the tensor's dtype
    assert d.scale.dtype == st.float32 and d.loc.dtype == st.float32
    got = d.log_prob(st.tensor([1.25], dtype=st.float32))
    assert got.dtype == st.float32
    np.testing.assert_allclose(_host(got), _normal_logpdf(0.5, 2.0, 1.25), rtol=1e-6)
    assert D.Normal(0, 1).loc.dtype == st.get_default_dtype()


def test_exponential_family_entropy_matches_closed_forms():
    """ExponentialFamily.entropy (Bregman, through autograd) agrees with each family's closed form."""
    for d in (D.Normal(_t(_loc), _t(_scale)), D.Exponential(_t(_rate)), D.Bernoulli(_t(_probs))):
        np.testing.assert_allclose(_host(D.ExponentialFamily.entropy(d)), _host(d.entropy()), rtol=1e-10)


def test_enumerate_support_bernoulli():
    d = D.Bernoulli(st.tensor([[0.1, 0.2, 0.3]]))
    values = d.enumerate_support()
    assert tuple(values.shape) == (2, 1, 3)
    np.testing.assert_array_equal(_host(values)[:, 0, 0], [0.0, 1.0])
    assert tuple(d.enumerate_support(expand=False).shape) == (2, 1, 1)
    assert d.has_enumerate_support


def test_lazy_parameters():
    """Note [Lazy parameters]: the parameter not given is derived on first use and cached; its gradient flows."""
    p = st.tensor([0.2, 0.9], requires_grad=True)
    d = D.Bernoulli(probs=p)
    assert "logits" not in d.__dict__
    logits = d.logits
    assert "logits" in d.__dict__ and d.logits is logits
    np.testing.assert_allclose(_host(logits), np.log([0.2 / 0.8, 0.9 / 0.1]), rtol=1e-6)
    (g,) = st.autograd.grad(logits.sum(), [p])
    np.testing.assert_allclose(_host(g), [1 / (0.2 * 0.8), 1 / (0.9 * 0.1)], rtol=1e-4)
    with st.no_grad():  # computed with gradients on even under no_grad, as torch's lazy_property
        assert D.Bernoulli(probs=p).logits.requires_grad
