"""The gamma-family sampler ops on every available backend: ``_standard_gamma``, ``_sample_dirichlet``, ``poisson``,
``binomial`` (shapes, dtypes, moments and CDFs of the draws under fixed seeds, edge parameters, reproducibility, errors)
and the reparameterization gradients ``_standard_gamma_grad`` / ``_dirichlet_grad`` (against torch, against finite
differences of the CDFs, through autograd). Meta checks shapes, dtypes and errors only."""

from __future__ import annotations

import math

import numpy as np
import pytest

import strided as st
from strided.testing import available_devices

DEVICES = available_devices()
DATA_DEVICES = [d for d in DEVICES if d != "meta"]
FLOATS = ["float32", "float64"]
N = 20000


def _host(t) -> np.ndarray:
    return np.asarray(t.detach().cpu().numpy(), dtype=np.float64)


def _t(a, device="cpu", dtype="float64", grad=False):
    t = st.tensor(np.asarray(a, dtype=np.float64), dtype=getattr(st, dtype), device=device)
    return t.requires_grad_() if grad else t


def _moments_ok(x, mean, var, what=""):
    """Mean and variance of the draws (axis 0) within 5 standard errors."""
    assert np.all(np.abs(x.mean(0) - mean) < 5 * np.sqrt(var / x.shape[0]) + 1e-12), (what, x.mean(0), mean)
    dev = x - x.mean(0)
    se_var = np.sqrt(np.maximum((dev**4).mean(0) - (dev**2).mean(0) ** 2, 1e-300) / x.shape[0])
    assert np.all(np.abs(x.var(0) - var) < 5 * se_var + 1e-12), (what, x.var(0), var)


# -- shapes, dtypes, layouts ------------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_shapes_dtypes_and_layouts(device, dtype):
    a = _t(np.full((3, 4), 2.0), device, dtype).t()  # noncontiguous parameters, contiguous results
    for out in (st._standard_gamma(a), st._sample_dirichlet(a), st.poisson(a), st.binomial(a, a * 0.1)):
        assert tuple(out.shape) == (4, 3) and out.dtype == a.dtype and out.device.type == device
        assert out.is_contiguous()
    for shape in ((), (0,), (2, 0, 3)):
        z = _t(np.ones(shape), device, dtype)
        for out in (st._standard_gamma(z), st._sample_dirichlet(z), st.poisson(z), st.binomial(z, z * 0.5),
                    st._standard_gamma_grad(z, z), st._dirichlet_grad(z * 0.5, z, z * 2)):
            assert tuple(out.shape) == shape and out.dtype == z.dtype
    g = st._standard_gamma_grad(_t([1.0, 2.0, 3.0], device, dtype), _t(1.5, device, dtype))
    assert tuple(g.shape) == (3,)


@pytest.mark.parametrize("device", DEVICES)
def test_errors(device):
    f, d, i = _t([1.0, 2.0], device, "float32"), _t([1.0, 2.0], device), _t([1, 2], device, "int64")
    for op, name in ((st._standard_gamma, "gamma_cpu"), (st._sample_dirichlet, "dirichlet"),
                     (st.poisson, "poisson_cpu")):
        with pytest.raises(NotImplementedError, match=f"\"{name}\" not implemented for 'Long'"):
            op(i)
    with pytest.raises(ValueError, match="binomial only supports floating-point dtypes for count, got: Long"):
        st.binomial(i, f)
    with pytest.raises(ValueError, match="binomial only supports floating-point dtypes for prob, got: Long"):
        st.binomial(f, i)
    with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
        st.binomial(f, d)
    with pytest.raises(RuntimeError, match="Found dtype Float but expected Double"):
        st._standard_gamma_grad(d, f)
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(2\) must match the size of tensor b \(3\)"):
        st._dirichlet_grad(f, f, _t([1.0, 2.0, 3.0], device, "float32"))
    with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
        out = st.binomial(_t([5.0], device), _t([0.5, 0.5, 0.5], device))  # torch resizes count's shape, warns
    assert tuple(out.shape) == (3,)


def test_cpu_dtype_coverage_is_torchs():
    """torch's CPU kernels: poisson takes every floating dtype, the others float32 / float64 only."""
    for name in ("float16", "bfloat16"):
        h = st.ones(3, dtype=getattr(st, name))
        assert st.poisson(h).dtype == h.dtype
        label = {"float16": "Half", "bfloat16": "BFloat16"}[name]
        for op, kname in ((st._standard_gamma, "gamma_cpu"), (st._sample_dirichlet, "dirichlet"),
                          (lambda x: st.binomial(x, x), "binomial_cpu"),
                          (lambda x: st._standard_gamma_grad(x, x), "_standard_gamma_grad_cpu"),
                          (lambda x: st._dirichlet_grad(x, x, x), "_dirichlet_grad_cpu")):
            with pytest.raises(NotImplementedError, match=f"\"{kname}\" not implemented for '{label}'"):
                op(h)
        assert st._standard_gamma(st.ones(3, dtype=getattr(st, name), device="meta")).dtype == h.dtype


# -- the draws ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_gamma_moments_and_cdf(device, dtype):
    # (float32 clamps draws below its smallest normal, 1e-38: 17% of Gamma(0.02)'s, 0.02% of Gamma(0.1)'s)
    alpha = np.array([0.02 if dtype == "float64" else 0.1, 0.4, 1.0, 3.3, 47.0, 2e4])
    st.manual_seed(2024)
    x = _host(st._standard_gamma(_t(np.broadcast_to(alpha, (N, alpha.size)), device, dtype)))
    assert np.all(x > 0)
    _moments_ok(x, alpha, alpha, "gamma")
    # the gamma CDF at the draws is uniform: Kolmogorov-Smirnov distance below its 0.1% critical value
    u = _host(st.igamma(_t(np.broadcast_to(alpha, x.shape)), _t(x)))
    u = np.sort(u, axis=0)
    grid = np.arange(1, N + 1)[:, None] / N
    ks = np.maximum(grid - u, u - (grid - 1 / N)).max(0)
    assert np.all(ks < 1.95 / math.sqrt(N)), ks


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_dirichlet_moments(device, dtype):
    conc = np.array([[0.3, 1.0, 4.0], [2.0, 2.0, 2.0]])
    st.manual_seed(11)
    x = _host(st._sample_dirichlet(_t(np.broadcast_to(conc, (N, 2, 3)), device, dtype)))
    np.testing.assert_allclose(x.sum(-1), 1.0, atol=1e-5 if dtype == "float32" else 1e-12)
    assert np.all((x > 0) & (x < 1))
    a0 = conc.sum(-1, keepdims=True)
    _moments_ok(x, conc / a0, conc * (a0 - conc) / (a0**2 * (a0 + 1)), "dirichlet")


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_poisson_moments(device, dtype):
    rate = np.array([1e-3, 0.7, 6.0, 10.0, 33.0, 1e4, 1e9 if dtype == "float64" else 1e6])
    st.manual_seed(3)
    x = _host(st.poisson(_t(np.broadcast_to(rate, (N, rate.size)), device, dtype)))
    assert np.all(x == np.round(x)) and np.all(x >= 0)
    _moments_ok(x, rate, rate, "poisson")


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_binomial_moments(device, dtype):
    count = np.array([1.0, 10.0, 10.0, 40.0, 500.0, 500.0, 1e6])
    prob = np.array([0.5, 0.2, 0.93, 0.5, 0.03, 0.8, 0.37])
    st.manual_seed(5)
    shape = (N, count.size)
    x = _host(st.binomial(_t(np.broadcast_to(count, shape), device, dtype), _t(np.broadcast_to(prob, shape), device,
                                                                             dtype)))
    assert np.all(x == np.round(x)) and np.all((x >= 0) & (x <= count))
    _moments_ok(x, count * prob, count * prob * (1 - prob), "binomial")


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_edge_parameters(device):
    tiny32, tiny64 = np.finfo(np.float32).tiny, np.finfo(np.float64).tiny
    g = _host(st._standard_gamma(_t([0.0, 1e-30, 1e-300, math.inf, math.nan, -1.0, 1e30], device)))
    assert g[0] == tiny64 and g[1] == tiny64 and g[2] == tiny64 and g[3] == math.inf
    assert np.isnan(g[4]) and np.isnan(g[5]) and g[6] == pytest.approx(1e30, rel=1e-6)
    g32 = st._standard_gamma(_t([0.0, 1e-20], device, "float32"))
    assert np.all(_host(g32) == tiny32)
    p = _host(st.poisson(_t([0.0, 1e-300, math.inf, 1e17], device)))
    assert p[0] == 0 and p[1] == 0 and p[2] == math.inf and p[3] == pytest.approx(1e17, rel=1e-6)
    count = [0.0, -2.0, 7.0, 7.0, 7.0, 7.0, math.nan, 0.0, 7.9, 3e20, math.inf, math.inf]
    prob = [0.5, 0.5, 0.0, 1.0, 1.5, math.nan, 0.5, math.nan, 1.0, 0.5, 0.5, 0.0]
    b = _host(st.binomial(_t(count, device), _t(prob, device)))
    np.testing.assert_array_equal(b[:6], [0, 0, 0, 7, 7, np.nan])
    assert np.isnan(b[6]) and b[7] == 0 and b[8] == 7 and b[9] == pytest.approx(1.5e20, rel=1e-6)
    assert b[10] == math.inf and b[11] == 0
    d = _host(st._sample_dirichlet(_t([[1e-30, 1e-30, 1e-30], [1e-300, 1.0, 1e-300], [2.0, 2.0, 2.0]], device)))
    assert np.all((d > 0) & (d < 1)) and np.all(np.isfinite(d))
    np.testing.assert_allclose(d.sum(-1), 1.0, atol=1e-12)
    d0 = st._sample_dirichlet(_t(2.5, device, "float32"))  # 0-dim: the whole simplex is one point
    assert _host(d0) == np.float32(1 - 2**-24)  # torch's clamp below 1


def test_poisson_rejects_invalid_rates_on_the_cpu():
    for bad in (-1.0, math.nan):
        with pytest.raises(RuntimeError, match="invalid Poisson rate, expected rate to be non-negative"):
            st.poisson(st.tensor([1.0, bad]))


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("op,args", [(st._standard_gamma, ([0.5, 3.0],)), (st._sample_dirichlet, ([0.5, 3.0],)),
                                     (st.poisson, ([0.5, 30.0],)), (st.binomial, ([5.0, 300.0], [0.3, 0.6]))])
def test_seeded_generators_reproduce(device, op, args):
    params = [_t(np.broadcast_to(a, (500, 2)), device) for a in args]
    gen = st.Generator(device)
    a = _host(op(*params, generator=gen.manual_seed(9)))
    b = _host(op(*params, generator=gen.manual_seed(9)))
    c = _host(op(*params, generator=gen))  # the generator moved on
    np.testing.assert_array_equal(a, b)
    assert np.mean(a == c) < 0.5
    st.manual_seed(4)
    d = _host(op(*params))
    st.manual_seed(4)
    np.testing.assert_array_equal(d, _host(op(*params)))


# -- reparameterization gradients -----------------------------------------------------------------------------
def _gamma_pairs(rng, n=300):
    alpha = np.exp(rng.uniform(np.log(0.02), np.log(300.0), n))
    return alpha, np.maximum(rng.gamma(alpha), 1e-30)


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_standard_gamma_grad_matches_torch(device, dtype):
    torch = pytest.importorskip("torch")
    alpha, x = _gamma_pairs(np.random.default_rng(0))
    if dtype == "float32":
        alpha, x = alpha.astype(np.float32), np.maximum(x.astype(np.float32), np.finfo(np.float32).tiny)
    got = _host(st._standard_gamma_grad(_t(alpha, device, dtype), _t(x, device, dtype)))
    want = torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(x)).double().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12 if dtype == "float64" else 2e-6, atol=0)


def test_standard_gamma_grad_is_the_implicit_derivative():
    """``dx / dalpha = -(dP / dalpha) / (dP / dx)`` by central differences of torch's regularized gamma: torch's
    approximation is good to a few 1e-4 relative."""
    torch = pytest.importorskip("torch")
    alpha, x = _gamma_pairs(np.random.default_rng(1), 200)
    a, xs = torch.tensor(alpha), torch.tensor(x)
    h = 1e-5 * a
    d_alpha = (torch.special.gammainc(a + h, xs) - torch.special.gammainc(a - h, xs)) / (2 * h)
    pdf = torch.exp((a - 1) * torch.log(xs) - xs - torch.lgamma(a))
    fd = (-d_alpha / pdf).numpy()
    got = _host(st._standard_gamma_grad(_t(alpha), _t(x)))
    keep = pdf.numpy() > 1e-250  # (the ratio is ill-conditioned deep in the tails)
    np.testing.assert_allclose(got[keep], fd[keep], rtol=3e-3)


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_dirichlet_grad_matches_torch(device, dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    a, b = np.exp(rng.uniform(-3, 4, 400)), np.exp(rng.uniform(-3, 4, 400))
    x = np.clip(rng.beta(a, b), 1e-6, 1 - 1e-6)
    args = [v.astype(np.float32) if dtype == "float32" else v for v in (x, a, a + b)]
    got = _host(st._dirichlet_grad(*(_t(v, device, dtype) for v in args)))
    want = torch._dirichlet_grad(*(torch.tensor(v) for v in args)).double().numpy()
    # float32: torch evaluates the Taylor branches in float (Note [Implicit reparameterization])
    np.testing.assert_allclose(got, want, rtol=1e-10 if dtype == "float64" else 5e-4, atol=1e-30)


def test_dirichlet_grad_is_the_implicit_beta_derivative():
    special = pytest.importorskip("scipy.special")
    rng = np.random.default_rng(3)
    a, b = rng.uniform(0.3, 12, 150), rng.uniform(0.3, 12, 150)
    x = np.clip(rng.beta(a, b), 1e-3, 1 - 1e-3)
    h = 1e-6 * a
    d_alpha = (special.betainc(a + h, b, x) - special.betainc(a - h, b, x)) / (2 * h)
    pdf = np.exp((a - 1) * np.log(x) + (b - 1) * np.log1p(-x) - special.betaln(a, b))
    fd = -d_alpha / pdf / (1 - x)
    got = _host(st._dirichlet_grad(_t(x), _t(a), _t(a + b)))
    np.testing.assert_allclose(got, fd, rtol=3e-3)


@pytest.mark.parametrize("device", DEVICES)
def test_autograd(device):
    alpha = _t([0.3, 2.0, 40.0], device, grad=True)
    st.manual_seed(8)
    x = st._standard_gamma(alpha)
    assert x.requires_grad
    w = _t([1.0, -2.0, 0.5], device)
    (g,) = st.autograd.grad((x * w).sum(), [alpha])
    want = st._standard_gamma_grad(alpha.detach(), x.detach()) * w
    assert tuple(g.shape) == (3,)
    if device != "meta":
        np.testing.assert_allclose(_host(g), _host(want), rtol=1e-14)
    rate = _t([0.5, 20.0], device, grad=True)
    (gr,) = st.autograd.grad(st.poisson(rate).sum(), [rate])  # torch's: zero
    if device != "meta":
        assert not _host(gr).any()
    # torch defines no derivative for these: a backward through them raises torch's error
    # (Note [Not-implemented derivatives])
    for out, name in ((st.binomial(_t([3.0, 4.0], device), rate * 0.01), "binomial"),
                      (st._sample_dirichlet(alpha), "_sample_dirichlet")):
        assert out.grad_fn.name() == "torch::autograd::NotImplemented"
        with pytest.raises(RuntimeError, match=f"derivative for aten::{name} is not implemented"):
            out.sum().backward()


# -- CUDA: generator offsets and graph capture (Note [Sampler streams]) -------------------------------------------
@pytest.mark.skipif("cuda" not in DEVICES, reason="no CUDA GPU / driver on this machine")
def test_cuda_offsets_and_graph_replays():
    from strided import cuda

    gen = st.Generator("cuda").manual_seed(3)
    alpha = _t(np.full(1000, 1.7), "cuda")
    before = gen.philox_offset
    st._standard_gamma(alpha, generator=gen)
    st.poisson(alpha, generator=gen)
    assert gen.philox_offset == before + 2  # one offset per call, as every random op
    count, prob = _t(np.full(1000, 30.0), "cuda"), _t(np.full(1000, 0.4), "cuda")
    ops = (lambda: st._standard_gamma(alpha), lambda: st.poisson(alpha * 20), lambda: st.binomial(count, prob),
           lambda: st._sample_dirichlet(alpha.view(250, 4)))
    for op in ops:
        op()  # warm-up: kernels compiled before capture
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        outs = [op() for op in ops]
    cuda.manual_seed(11)
    g.replay()
    first = [_host(o) for o in outs]
    g.replay()
    second = [_host(o) for o in outs]
    for a, b in zip(first, second):
        assert not np.array_equal(a, b)  # replays draw fresh numbers
    cuda.manual_seed(11)  # the same ops run eagerly from the same generator state draw the same numbers
    for eager_round, replayed in zip(([_host(op()) for op in ops] for _ in range(2)), (first, second)):
        for e, r in zip(eager_round, replayed):
            np.testing.assert_array_equal(e, r)
