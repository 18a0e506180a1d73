"""LKJCholesky, Wishart and GeneralizedPareto on every available backend: shapes, expand and sampling (meta
included); values and gradients against torch (float64, identical inputs); pathwise rsample gradients against
torch fed strided's draws; sample statistics under a fixed seed; validation errors in torch's words."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import strided as st
from strided.distributions.exp_family import ExponentialFamily
from strided.distributions.generalized_pareto import GeneralizedPareto
from strided.distributions.lkj_cholesky import LKJCholesky
from strided.distributions.wishart import Wishart
from strided.testing import available_devices

DEVICES = available_devices()
DATA_DEVICES = [d for d in DEVICES if d != "meta"]
RNG = np.random.default_rng(2024)
SIGMA = np.array([[2.0, 0.3, -0.4], [0.3, 1.0, 0.2], [-0.4, 0.2, 1.5]])
SIGMA_B = np.stack([SIGMA, np.diag([0.5, 1.0, 2.0])])  # batch (2,)


def _t(a, device="cpu", grad=False):
    t = st.tensor(np.asarray(a, dtype=np.float64), device=device)
    return t.requires_grad_() if grad else t


def _host(t) -> np.ndarray:
    return np.asarray(t.detach().cpu().numpy(), dtype=np.float64)


def _close(got, want, rtol=1e-10, atol=1e-12):
    want = np.asarray(want.detach().numpy() if hasattr(want, "detach") else want, dtype=np.float64)
    assert tuple(got.shape) == want.shape
    np.testing.assert_allclose(_host(got), want, rtol=rtol, atol=atol, equal_nan=True)


def _grads(torch, s_out, s_params, t_out, t_params, rtol=1e-9, keep=None):
    """Gradients of a random projection of both outputs match (on the entries ``keep[i]`` of parameter i)."""
    w = RNG.standard_normal(tuple(t_out.shape))
    sg = st.autograd.grad((s_out * _t(w, s_out.device.type)).sum(), s_params, retain_graph=True, allow_unused=True)
    tg = torch.autograd.grad((t_out * torch.tensor(w)).sum(), t_params, retain_graph=True, allow_unused=True)
    for i, (a, b) in enumerate(zip(sg, tg)):
        if b is None:  # unused by torch: unused, or zero, here
            assert a is None or not _host(a).any()
            continue
        a, b = _host(a), b.numpy()
        if keep is not None and keep[i] is not None:
            a, b = a * keep[i], b * keep[i]
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-10)


# -- LKJCholesky ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_lkj_shapes_and_expand(device):
    d = LKJCholesky(4, _t([[0.5, 1.0, 3.0], [2.0, 1.5, 0.7]], device))
    assert d.batch_shape == (2, 3) and d.event_shape == (4, 4) and not d.has_rsample
    assert repr(d) == "LKJCholesky(concentration: strided.Size([2, 3]))" and repr(d.support) == "CorrCholesky()"
    x = d.sample((5,))
    assert tuple(x.shape) == (5, 2, 3, 4, 4) and x.device.type == device and not x.requires_grad
    assert tuple(d.log_prob(x).shape) == (5, 2, 3)
    e = d.expand((7, 2, 3))
    assert isinstance(e, LKJCholesky) and e.batch_shape == (7, 2, 3) and e.dim == 4
    assert tuple(e.sample().shape) == (7, 2, 3, 4, 4) and tuple(e.log_prob(x[:, None]).shape) == (5, 7, 2, 3)
    s = LKJCholesky(2)
    assert s.batch_shape == () and s.concentration.dtype == st.get_default_dtype()
    assert tuple(s.sample((3,)).shape) == (3, 2, 2)


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("dim", [2, 4])
def test_lkj_log_prob_matches_torch(device, dim):
    torch = pytest.importorskip("torch")
    conc = np.array([0.5, 1.0, 3.0])
    torch.manual_seed(0)
    x = torch.distributions.LKJCholesky(dim, torch.tensor(conc)).sample((4,))
    sc, sx = _t(conc, device, grad=True), _t(x.numpy(), device, grad=True)
    tc, tx = torch.tensor(conc, requires_grad=True), x.clone().requires_grad_()
    s_out = LKJCholesky(dim, sc).log_prob(sx)
    t_out = torch.distributions.LKJCholesky(dim, tc).log_prob(tx)
    _close(s_out, t_out)
    _grads(torch, s_out, [sc, sx], t_out, [tc, tx])


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("eta", [1.0, 2.5])
def test_lkj_density_normalized_dim2(device, eta):
    """For dim 2 the free coordinate is r = L[1, 0] and exp(log_prob) is its density (r + 1) / 2 ~ Beta(eta, eta),
    which integrates to 1 (Gauss-Legendre in the variable r = sin(theta), exact to rounding for these eta)."""
    nodes, weights = np.polynomial.legendre.leggauss(64)
    theta = nodes * np.pi / 2
    r = np.sin(theta)
    L = np.zeros(r.shape + (2, 2))
    L[:, 0, 0], L[:, 1, 0], L[:, 1, 1] = 1.0, r, np.sqrt(1 - r * r)
    dens = np.exp(_host(LKJCholesky(2, _t(eta, device), validate_args=False).log_prob(_t(L, device))))
    want = (1 - r * r) ** (eta - 1) / (2 ** (2 * eta - 1) * math.exp(2 * math.lgamma(eta) - math.lgamma(2 * eta)))
    np.testing.assert_allclose(dens, want, rtol=1e-10)
    assert abs((dens * np.cos(theta) * weights).sum() * np.pi / 2 - 1) < 1e-10


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_lkj_sample_statistics(device):
    """Draws are correlation Choleskys; each off-diagonal correlation of L L^T has the marginal 2 Beta(b, b) - 1,
    b = eta - 1 + dim / 2: mean 0, E r^2 = 1 / (2b + 1), E r^4 = 3 / ((2b + 1)(2b + 3))."""
    dim, n, eta = 4, 4000, np.array([0.5, 2.0])
    st.manual_seed(11)
    d = LKJCholesky(dim, _t(eta, device))
    x = d.sample((n,))
    assert _host(d.support.check(x)).all()
    L = _host(x)
    assert np.all(np.triu(L, 1) == 0) and np.all(np.diagonal(L, 0, -2, -1) > 0)
    np.testing.assert_allclose((L * L).sum(-1), 1.0, rtol=1e-12)
    R = L @ np.swapaxes(L, -1, -2)
    r = R[..., np.tril_indices(dim, -1)[0], np.tril_indices(dim, -1)[1]]  # (n, 2, 6)
    b = (eta - 1 + dim / 2)[:, None]
    m2, m4 = 1 / (2 * b + 1), 3 / ((2 * b + 1) * (2 * b + 3))
    assert np.all(np.abs(r.mean(0)) < 5 * np.sqrt(m2 / n))
    assert np.all(np.abs((r * r).mean(0) - m2) < 5 * np.sqrt((m4 - m2 * m2) / n))


def test_lkj_validation():
    with pytest.raises(ValueError, match=r"^Expected dim to be an integer greater than or equal to 2\. Found dim=1\.$"):
        LKJCholesky(1)
    with pytest.raises(ValueError, match="of distribution Dirichlet.*to satisfy the constraint IndependentConstraint"):
        LKJCholesky(3, st.tensor(-1.0))
    with pytest.raises(ValueError, match=r"to be within the support \(CorrCholesky\(\)\)"):
        LKJCholesky(3, validate_args=True).log_prob(2 * st.eye(3))
    assert LKJCholesky(3, validate_args=False).log_prob(2 * st.eye(3)).shape == ()


# -- Wishart ----------------------------------------------------------------------------------------------------------
def _param(kind, cov):
    if kind == "covariance_matrix":
        return cov
    return np.linalg.inv(cov) if kind == "precision_matrix" else np.linalg.cholesky(cov)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kind", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_wishart_shapes_and_expand(device, kind):
    mat = np.broadcast_to(_param(kind, SIGMA), (3, 1, 3, 3))
    d = Wishart(_t([4.5, 7.0], device), **{kind: _t(mat, device)})
    assert d.batch_shape == (3, 2) and d.event_shape == (3, 3) and d.has_rsample
    assert repr(d) == f"Wishart({kind}: strided.Size([3, 2, 3, 3]), df: strided.Size([3, 2]))"
    for name in ("covariance_matrix", "precision_matrix", "scale_tril", "mean", "mode", "variance"):
        assert tuple(getattr(d, name).shape) == (3, 2, 3, 3), name
    x = d.rsample((5,))
    assert tuple(x.shape) == (5, 3, 2, 3, 3) and x.device.type == device
    assert tuple(d.log_prob(x).shape) == (5, 3, 2) and tuple(d.entropy().shape) == (3, 2)
    e = d.expand((4, 3, 2))
    assert isinstance(e, Wishart) and e.batch_shape == (4, 3, 2) and kind in e.__dict__
    assert tuple(e.sample((1,)).shape) == (1, 4, 3, 2, 3, 3) and tuple(e.mean.shape) == (4, 3, 2, 3, 3)
    s = Wishart(5, covariance_matrix=_t(SIGMA, device))
    assert s.batch_shape == () and s.df.dtype == st.float64 and tuple(s.sample().shape) == (3, 3)


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("kind", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_wishart_matches_torch(device, kind):
    torch = pytest.importorskip("torch")
    df, mat = np.array([3.5, 6.0]), _param(kind, SIGMA_B)  # df 3.5 <= p + 1: a NaN mode
    sdf, smat = _t(df, device, grad=True), _t(mat, device, grad=True)
    tdf, tmat = torch.tensor(df, requires_grad=True), torch.tensor(mat, requires_grad=True)
    s, t = Wishart(sdf, **{kind: smat}), torch.distributions.Wishart(tdf, **{kind: tmat})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns "Singular sample detected." on every draw
        x = t.sample((4,))
    for name in ("covariance_matrix", "precision_matrix", "scale_tril", "mean", "mode", "variance"):
        _close(getattr(s, name), getattr(t, name), atol=1e-12)
    outs = [(s.log_prob(_t(x.numpy(), device)), t.log_prob(x)), (s.entropy(), t.entropy()),
            (s.mean, t.mean), (s.variance, t.variance)]
    # torch's cholesky_solve backward fills the upper triangle of scale_tril's gradient, which the forward never
    # reads (strided's is zero there): compare the lower triangle
    keep = [None, np.tril(np.ones((3, 3))) if kind == "scale_tril" else None]
    for s_out, t_out in outs:
        _close(s_out, t_out)
        _grads(torch, s_out, [sdf, smat], t_out, [tdf, tmat], rtol=1e-8, keep=keep)
    _close(ExponentialFamily.entropy(s), t.entropy())  # the natural parameters and log normalizer


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_wishart_rsample_gradient(device):
    """torch rebuilt strided's draw: A = chol(L^-1 X L^-T) (Note [Bartlett decomposition]), with the chi-squared
    diagonal c = 2 G, G ~ Gamma((df - i) / 2), tied to df by the implicit gamma gradient; the pathwise gradients
    in df and L must agree."""
    torch = pytest.importorskip("torch")
    df, L = np.array([4.5, 7.0]), np.linalg.cholesky(SIGMA_B)
    sdf, sL = _t(df, device, grad=True), _t(L, device, grad=True)
    st.manual_seed(5)
    x = Wishart(sdf, scale_tril=sL).rsample((6,))
    Li = np.linalg.inv(L)
    A = np.linalg.cholesky(Li @ _host(x) @ np.swapaxes(Li, -1, -2))  # (6, 2, 3, 3)
    tdf, tL = torch.tensor(df, requires_grad=True), torch.tensor(L, requires_grad=True)
    G = torch.tensor(np.diagonal(A, 0, -2, -1) ** 2 / 2)
    k = (tdf.unsqueeze(-1) - torch.arange(3.0, dtype=torch.float64)) / 2
    G = G + (k - k.detach()) * torch._standard_gamma_grad(k.detach().expand(G.shape), G)
    At = torch.diag_embed((2 * G).sqrt()) + torch.tensor(np.tril(A, -1))
    chol = tL @ At
    xt = chol @ chol.mT
    _close(x, xt, rtol=1e-9)
    _grads(torch, x, [sdf, sL], xt, [tdf, tL], rtol=1e-8)


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_wishart_sample_statistics(device):
    """Mean df * Sigma and variance df (Sigma_ij^2 + Sigma_ii Sigma_jj), within 5 standard errors; no singular
    draws, hence no warning (unlike torch: Note [Singular sample correction])."""
    n, df = 4000, np.array([4.0, 9.0])
    st.manual_seed(21)
    d = Wishart(_t(df, device), covariance_matrix=_t(SIGMA_B, device))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = _host(d.sample((n,)))
    assert x.shape == (n, 2, 3, 3)
    np.testing.assert_allclose(x, np.swapaxes(x, -1, -2), rtol=1e-14, atol=0)
    assert np.all(np.linalg.eigvalsh(x) > 0)
    diag = np.diagonal(SIGMA_B, 0, -2, -1)
    var = df[:, None, None] * (SIGMA_B**2 + diag[..., :, None] * diag[..., None, :])
    np.testing.assert_allclose(_host(d.variance), var, rtol=1e-12)
    assert np.all(np.abs(x.mean(0) - df[:, None, None] * SIGMA_B) < 5 * np.sqrt(var / n))
    dev = x - x.mean(0)
    se_var = np.sqrt(((dev**4).mean(0) - (dev**2).mean(0) ** 2) / n)
    assert np.all(np.abs(x.var(0) - var) < 5 * se_var)


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_wishart_singular_sample_correction(device):
    """A singular draw warns and is redrawn for its sample index (the whole batch), up to max_try_correction."""
    d = Wishart(_t([4.0, 5.0], device), covariance_matrix=_t(SIGMA_B, device))
    good = d._bartlett_sampling((3,))
    bad = good.clone()
    bad[1, 0] = 0.0  # sample index 1, batch member 0: singular
    draws = []

    def fake(sample_shape=()):
        draws.append(tuple(sample_shape))
        return (bad if len(draws) == 1 else good + len(draws)).clone()

    d._bartlett_sampling = fake
    with pytest.warns(UserWarning, match="^Singular sample detected.$"):
        x = _host(d.rsample((3,)))
    assert draws == [(3,), (3,)]
    np.testing.assert_array_equal(x[[0, 2]], _host(bad)[[0, 2]])
    np.testing.assert_array_equal(x[1], _host(good)[1] + 2)
    draws.clear()
    with pytest.warns(UserWarning, match="Singular sample detected."):
        x = _host(d.rsample((3,), max_try_correction=0))
    assert draws == [(3,)] and np.all(x[1, 0] == 0)


def test_wishart_validation():
    eye = st.eye(3, dtype=st.float64)
    with pytest.raises(ValueError, match=r"^Value of df=1\.0 expected to be greater than ndim - 1 = 2\.$"):
        Wishart(st.tensor(1.0), covariance_matrix=eye)
    with pytest.raises(ValueError, match=r"^Value of df=2 expected to be greater than ndim - 1 = 2\.$"):
        Wishart(2, covariance_matrix=eye, validate_args=False)
    with pytest.raises(AssertionError, match="^Exactly one of covariance_matrix or precision_matrix or scale_tril"):
        Wishart(4.0, covariance_matrix=eye, scale_tril=eye)
    with pytest.raises(ValueError, match="^scale_tril must be at least two-dimensional"):
        Wishart(4.0, precision_matrix=st.ones(3, dtype=st.float64))
    bad = st.tensor([[1.0, 2.0], [2.0, 1.0]], dtype=st.float64)
    for kind, constraint in (("covariance_matrix", "PositiveDefinite"), ("precision_matrix", "PositiveDefinite"),
                             ("scale_tril", "LowerCholesky")):
        msg = rf"^Expected parameter {kind} \(Tensor of shape \(2, 2\)\) of distribution Wishart\({kind}: "
        with pytest.raises(ValueError, match=msg + rf".* to satisfy the constraint {constraint}\(\)"):
            Wishart(4.0, **{kind: bad}, validate_args=True)
    with pytest.warns(UserWarning, match="^Low df values detected. Singular samples are highly likely"):
        Wishart(2.5, covariance_matrix=eye)
    with pytest.raises(ValueError, match=r"to be within the support \(PositiveDefinite\(\)\)"):
        Wishart(4.0, covariance_matrix=eye, validate_args=True).log_prob(-eye)


# -- GeneralizedPareto ------------------------------------------------------------------------------------------------
# concentrations: 0 and 1e-9 take the exponential limit (isclose to 0); 0.7 has no variance, 1.5 no mean
GPD = (np.array([0.1, -0.5, 1.0, 0.0, 2.0, -1.0]), np.array([1.0, 2.0, 0.5, 1.5, 0.8, 1.2]),
       np.array([0.3, 0.0, -0.4, 1e-9, 0.7, 1.5]))
GPD_X = GPD[0] + RNG.uniform(0.05, 1.0, (4, 6))  # inside every support (upper bound 2.25 for k = -0.4)


@pytest.mark.parametrize("device", DEVICES)
def test_gpd_shapes_and_expand(device):
    d = GeneralizedPareto(*(_t(p, device) for p in GPD))
    assert d.batch_shape == (6,) and d.event_shape == () and d.has_rsample
    x = d.rsample((4, 5))
    assert tuple(x.shape) == (4, 5, 6) and x.device.type == device
    for out in (d.log_prob(x), d.cdf(x), d.icdf(x), d.log_survival_function(x), d.log_cdf(x)):
        assert tuple(out.shape) == (4, 5, 6)
    for out in (d.mean, d.mode, d.variance, d.entropy()):
        assert tuple(out.shape) == (6,)
    e = d.expand((3, 6))
    assert isinstance(e, GeneralizedPareto) and e.batch_shape == (3, 6) and tuple(e.sample().shape) == (3, 6)
    s = GeneralizedPareto(0.0, 1.0, 0.5)
    assert s.batch_shape == () and repr(s) == "GeneralizedPareto(loc: 0.0, scale: 1.0, concentration: 0.5)"
    assert repr(GeneralizedPareto(0.0, 2.0, -0.5).support) == "Interval(lower_bound=0.0, upper_bound=4.0)"
    assert repr(s.support) == "Interval(lower_bound=0.0, upper_bound=inf)"


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_gpd_matches_torch(device):
    torch = pytest.importorskip("torch")
    sp = [_t(p, device, grad=True) for p in GPD]
    tp = [torch.tensor(p, requires_grad=True) for p in GPD]
    s = GeneralizedPareto(*sp)
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)  # torch's log_prob compares with torch.tensor(0.0): float32 otherwise
    try:
        t = torch.distributions.GeneralizedPareto(*tp)
        u = RNG.uniform(0.05, 0.95, (4, 6))
        outs = [(s.mean, t.mean), (s.mode, t.mode), (s.variance, t.variance), (s.entropy(), t.entropy()),
                (s.icdf(_t(u, device)), t.icdf(torch.tensor(u)))]
        for name in ("log_prob", "cdf", "log_cdf", "log_survival_function"):
            outs.append((getattr(s, name)(_t(GPD_X, device)), getattr(t, name)(torch.tensor(GPD_X))))
        for s_out, t_out in outs:
            _close(s_out, t_out)
            finite = np.isfinite(t_out.detach().numpy())
            _grads(torch, s_out * _t(finite, device), sp, t_out * torch.tensor(finite), tp)
    finally:
        torch.set_default_dtype(old)
    np.testing.assert_allclose(_host(s.cdf(s.icdf(_t(u, device)))), u, rtol=1e-9)


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_gpd_rsample_gradient(device):
    """rsample is icdf of a uniform draw: with the same seed, torch's icdf of that draw gives value and gradients."""
    torch = pytest.importorskip("torch")
    sp = [_t(p, device, grad=True) for p in GPD]
    st.manual_seed(9)
    u = _host(st.rand((5, 6), dtype=st.float64, device=device))
    st.manual_seed(9)
    x = GeneralizedPareto(*sp).rsample((5,))
    tp = [torch.tensor(p, requires_grad=True) for p in GPD]
    xt = torch.distributions.GeneralizedPareto(*tp).icdf(torch.tensor(u))
    _close(x, xt)
    _grads(torch, x, sp, xt, tp)


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_gpd_sample_statistics(device):
    """Mean and variance within 5 standard errors (k < 1/4: a finite fourth moment); cdf(sample) uniform; in support."""
    n = 20000
    params = (np.array([0.5, -1.0, 2.0]), np.array([1.0, 2.0, 0.5]), np.array([-0.3, 0.0, 0.2]))
    d = GeneralizedPareto(*(_t(p, device) for p in params))
    st.manual_seed(77)
    xs = d.sample((n,))
    assert _host(d.support.check(xs)).all()
    x = _host(xs)
    mean, var = _host(d.mean), _host(d.variance)
    assert np.all(np.abs(x.mean(0) - mean) < 5 * np.sqrt(var / n))
    dev = x - x.mean(0)
    assert np.all(np.abs(x.var(0) - var) < 5 * np.sqrt(((dev**4).mean(0) - (dev**2).mean(0) ** 2) / n))
    cdf = _host(d.cdf(xs))
    for q in (0.1, 0.5, 0.9):
        assert np.all(np.abs((cdf < q).mean(0) - q) < 5 * math.sqrt(q * (1 - q) / n))


def test_gpd_validation():
    with pytest.raises(ValueError, match=r"^Expected parameter scale \(Tensor of shape \(\)\) of distribution "
                                         r"GeneralizedPareto\(loc: 0\.0, scale: -1\.0, concentration: 0\.5\) to "
                                         r"satisfy the constraint GreaterThan\(lower_bound=0\.0\)"):
        GeneralizedPareto(0.0, -1.0, 0.5, validate_args=True)
    d = GeneralizedPareto(0.0, 1.0, -0.5, validate_args=True)
    for v in (3.0, -0.1):  # above loc - scale / k = 2, below loc
        with pytest.raises(ValueError, match=r"to be within the support \(Interval\(lower_bound=0\.0, upper_bound=2"):
            d.log_prob(st.tensor(v))
    assert math.isfinite(float(d.log_prob(st.tensor(1.5))))
