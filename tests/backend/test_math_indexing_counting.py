"""Part B of torch's API gaps against torch itself, for what the OpInfos do not cover: errors that depend on
values (out-of-range indices, mask counts, negative counts), return types, ties and NaN, random fills'
distributions under a fixed seed, igamma's accuracy against mpmath and its gradient."""

from __future__ import annotations

import math

import numpy as np
import pytest

import strided as st
from strided.testing import available_devices

torch = pytest.importorskip("torch")

DEVICES = available_devices()
VALUE_DEVICES = [d for d in DEVICES if d != "meta"]


def _t(values, device="cpu", dtype=None):
    return st.tensor(values, dtype=dtype, device=device)


def _raises_like_torch(fn_st, fn_torch, exc=Exception, device="cpu"):
    """Both raise; the same exception type and message. On CUDA an index kernel reports a bad index at the next
    synchronization, in the CPU kernel's words plus where it was found (Note [Deferred index errors])."""
    with pytest.raises(exc) as t_err:
        fn_torch()

    def run():
        fn_st()
        if device == "cuda":
            st.cuda.synchronize()

    with pytest.raises(type(t_err.value)) as s_err:
        run()
    got, want = str(s_err.value).splitlines()[0], str(t_err.value).splitlines()[0]
    assert got == want or (device == "cuda" and got.startswith(want + " (found by a CUDA")), (got, want)


# ---------------------------------------------------------------------------- value-dependent errors


@pytest.mark.parametrize("device", VALUE_DEVICES)
def test_out_of_range_indices_raise_torchs_errors(device):
    x, tx = st.arange(6.0, device=device).reshape(2, 3), torch.arange(6.0).reshape(2, 3)
    cases = [
        (lambda a, m: a.index_fill(1, m.tensor([5]), 1.0)),
        (lambda a, m: a.index_copy(1, m.tensor([5]), m.ones(2, 1))),
        (lambda a, m: a.index_copy(1, m.tensor([-1]), m.ones(2, 1))),
        (lambda a, m: a.take(m.tensor([6]))),
        (lambda a, m: a.take(m.tensor([-7]))),
        (lambda a, m: a.put(m.tensor([6]), m.ones(1))),
        (lambda a, m: a.index_reduce(1, m.tensor([5]), m.ones(2, 1), "prod")),
        (lambda a, m: a.index_reduce(1, m.tensor([-1]), m.ones(2, 1), "prod")),
        (lambda a, m: m.zeros(3).scatter_reduce(0, m.tensor([0, 1, 0, 5]), m.ones(4), "sum")),
        (lambda a, m: a.masked_scatter(m.ones(3, dtype=m.bool), m.ones(2))),
        (lambda a, m: m.ones(0).take(m.tensor([0]))),
    ]
    for case in cases:
        _raises_like_torch(lambda case=case: case(x, _StOnDevice(device)), lambda case=case: case(tx, torch),
                           device=device)


class _StOnDevice:
    """``strided`` with factories on ``device`` (so the torch and strided cases read the same)."""

    def __init__(self, device):
        self.device = device
        self.bool = st.bool

    def tensor(self, v, **kw):
        return st.tensor(v, device=self.device, **kw)

    def ones(self, *shape, **kw):
        return st.ones(*shape, device=self.device, **kw)

    def zeros(self, *shape, **kw):
        return st.zeros(*shape, device=self.device, **kw)


@pytest.mark.parametrize("device", VALUE_DEVICES)
def test_counting_errors_match_torch(device):
    s = _StOnDevice(device)
    for case in (lambda m: m.tensor([1, -1]).bincount(), lambda m: m.tensor([[1]]).bincount(),
                 lambda m: m.tensor([1, 2]).bincount(minlength=-1),
                 lambda m: m.tensor([1, 2]).bincount(m.ones(3)),
                 lambda m: m.tensor([1.0]).kthvalue(2), lambda m: m.ones(3).histc(bins=0),
                 lambda m: m.ones(3).histc(bins=4, min=2, max=1), lambda m: m.tensor([1.0, math.inf]).histc(3),
                 lambda m: m.ones(3).histogram(3, range=[2.0, 1.0]), lambda m: m.ones(3).histogram(m.ones(2, 2)),
                 lambda m: m.tensor([1, 2]).histogram(3)):
        _raises_like_torch(lambda case=case: case(s), lambda case=case: case(torch), device=device)
    with pytest.raises(RuntimeError, match="cov\\(\\): fweights cannot be negative"):
        st.cov(st.ones(2, 3, device=device), fweights=st.tensor([1, -1, 1], device=device))


def test_cov_warns_for_no_degrees_of_freedom():
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        out = st.cov(st.tensor([1.0]))
    assert math.isnan(out.item())


# ---------------------------------------------------------------------------- values and return types


@pytest.mark.parametrize("device", VALUE_DEVICES)
def test_return_types_and_values_match_torch(device):
    x = np.array([[3.0, 1.0, np.nan, 2.0], [0.5, -1.0, 4.0, 4.5]], np.float32)
    s, t = st.tensor(x, device=device), torch.tensor(x)
    k_s, k_t = s.kthvalue(2, 1, keepdim=True), t.kthvalue(2, 1, keepdim=True)
    assert type(k_s).__name__ == "kthvalue" and k_s.values is k_s[0]
    np.testing.assert_array_equal(k_s.values.cpu().numpy(), k_t.values.numpy())
    np.testing.assert_array_equal(k_s.indices.cpu().numpy(), k_t.indices.numpy())
    f_s, f_t = st.frexp(s), torch.frexp(t)
    assert type(f_s).__name__ == "frexp" and f_s.exponent.dtype is st.int32
    np.testing.assert_array_equal(f_s.mantissa.cpu().numpy(), f_t.mantissa.numpy())
    np.testing.assert_array_equal(f_s.exponent.cpu().numpy(), f_t.exponent.numpy())
    h_s, h_t = st.histogram(s.nan_to_num(), 5), torch.histogram(t.nan_to_num(), 5)
    assert type(h_s).__name__ == "histogram"
    np.testing.assert_allclose(h_s.hist.cpu().numpy(), h_t.hist.numpy())
    np.testing.assert_allclose(h_s.bin_edges.cpu().numpy(), h_t.bin_edges.numpy(), rtol=1e-6)
    idx = st.unravel_index(st.tensor([0, 7, 23], device=device), (2, 3, 4))
    assert isinstance(idx, tuple) and [i.tolist() for i in idx] == [i.tolist() for i in torch.unravel_index(
        torch.tensor([0, 7, 23]), (2, 3, 4))]


@pytest.mark.parametrize("device", VALUE_DEVICES)
def test_histc_edge_rules_match_torch(device):
    for values, kw in (([2.0, 2.0], {"bins": 4}), ([1.0, 2.0, 3.0, 10.0], {"bins": 3, "min": 1, "max": 3}),
                       ([0.1, 0.2, 0.3], {"bins": 3}), ([], {"bins": 2})):
        got = st.histc(st.tensor(values, device=device), **kw).cpu().numpy()
        np.testing.assert_array_equal(got, torch.histc(torch.tensor(values), **kw).numpy())
    for values in ([2.0, 2.0], [0.0, 1.0, 1.0, 3.0]):
        h_s, h_t = st.histogram(st.tensor(values), 4), torch.histogram(torch.tensor(values), 4)
        np.testing.assert_array_equal(h_s.hist.numpy(), h_t.hist.numpy())
        np.testing.assert_allclose(h_s.bin_edges.numpy(), h_t.bin_edges.numpy())


@pytest.mark.parametrize("device", VALUE_DEVICES)
def test_elementwise_dtype_rules_match_torch(device):
    i, f = np.array([12, -18, 0]), np.array([1.5, -0.0, np.nan], np.float32)
    i_rev, f_rev = i[::-1].copy(), f[::-1].copy()
    for name, args in (("gcd", (i, i_rev)), ("lcm", (i, i_rev + 1)), ("ldexp", (i, i % 5)), ("signbit", (f,)),
                       ("deg2rad", (i,)), ("rad2deg", (i,)), ("logit", (i,)), ("sinc", (i,)),
                       ("float_power", (i, 2)), ("isneginf", (i,)), ("isreal", (f,)), ("nextafter", (f, f_rev))):
        s_args = [st.tensor(a, device=device) if isinstance(a, np.ndarray) else a for a in args]
        t_args = [torch.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        got, want = getattr(st, name)(*s_args), getattr(torch, name)(*t_args)
        assert got.dtype.name == str(want.dtype).removeprefix("torch."), name
        np.testing.assert_allclose(got.cpu().numpy().astype(np.float64), want.numpy().astype(np.float64),
                                   rtol=1e-6, equal_nan=True, err_msg=name)
    _raises_like_torch(lambda: st.heaviside(st.ones(2), st.ones(2, dtype=st.float64)),
                       lambda: torch.heaviside(torch.ones(2), torch.ones(2, dtype=torch.float64)))
    _raises_like_torch(lambda: st.ones(2, dtype=st.int64).xlogy_(st.ones(2)),
                       lambda: torch.ones(2, dtype=torch.long).xlogy_(torch.ones(2)))


@pytest.mark.parametrize("device", VALUE_DEVICES)
def test_isin_matches_torch_on_both_algorithms(device):
    rng = np.random.default_rng(0)
    a = rng.integers(0, 30, (4, 5)).astype(np.float32)
    a[0, 0] = np.nan
    for n in (3, 200):  # few test elements: compared one by one; many: binary search
        b = rng.integers(0, 30, n).astype(np.float32)
        b[0] = np.nan
        for invert in (False, True):
            got = st.isin(st.tensor(a, device=device), st.tensor(b, device=device), invert=invert)
            np.testing.assert_array_equal(got.cpu().numpy(), torch.isin(torch.tensor(a), torch.tensor(b),
                                                                        invert=invert).numpy())
    assert st.isin(3, st.tensor([1, 3], device=device)).item() is True


def test_linalg_helpers_match_torch():
    rng = np.random.default_rng(1)
    m, v, w = rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal(3)
    s = {k: st.tensor(a) for k, a in (("m", m), ("v", v), ("w", w))}
    t = {k: torch.tensor(a) for k, a in (("m", m), ("v", v), ("w", w))}
    for fn in (lambda x: x["m"].mv(x["v"]), lambda x: x["w"].addmv(x["m"], x["v"], beta=0.5, alpha=2),
               lambda x: x["m"].addr(x["w"], x["v"], alpha=3), lambda x: x["m"].renorm(1, 0, 2.0),
               lambda x: x["m"].cov(correction=0), lambda x: x["m"].corrcoef(), lambda x: x["m"].dist(x["v"], 3),
               lambda x: x["m"].inner(x["m"]), lambda x: x["m"].trapezoid() if hasattr(x["m"], "trapezoid") else
               None):
        got, want = fn(s), fn(t)
        if want is None:
            continue
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(st.cumulative_trapezoid(s["m"], s["v"]).numpy(),
                               torch.cumulative_trapezoid(t["m"], t["v"]).numpy(), rtol=1e-12)


# ---------------------------------------------------------------------------- igamma


def _mp_igamma(a, x):
    from mpmath import gammainc, mp

    mp.dps = 40
    return float(gammainc(a, 0, x, regularized=True))


def test_igamma_float64_accuracy_against_mpmath():
    grid = [(a, x) for a in (0.01, 0.5, 1.0, 3.7, 20.0, 150.0, 1000.0) for x in (1e-3, 0.3, 1.0, 4.0, 19.0, 160.0,
                                                                                  1100.0)]
    a = st.tensor([p[0] for p in grid], dtype=st.float64)
    x = st.tensor([p[1] for p in grid], dtype=st.float64)
    p, q = st.igamma(a, x).numpy(), st.special.gammaincc(a, x).numpy()
    for k, (ai, xi) in enumerate(grid):
        want = _mp_igamma(ai, xi)
        assert p[k] == pytest.approx(want, rel=1e-10, abs=1e-300), (ai, xi)
        assert q[k] == pytest.approx(1 - want, rel=1e-9 if want < 0.9 else 1e-6, abs=1e-15), (ai, xi)


@pytest.mark.parametrize("device", VALUE_DEVICES)
def test_igamma_float32_and_special_values_match_torch(device):
    a = np.array([0.0, -1, 1, 1, 2, np.inf, 1, np.nan, 0, 3, 0.5, 12.0, 40.0], np.float32)
    x = np.array([1.0, 1, 0, -1, np.inf, 3, 1e-30, 1, 0, 0, 0.2, 11.0, 45.0], np.float32)
    for name in ("igamma", "igammac"):
        got = getattr(st, name)(st.tensor(a, device=device), st.tensor(x, device=device)).cpu().numpy()
        want = getattr(torch, name)(torch.tensor(a), torch.tensor(x)).numpy()
        np.testing.assert_allclose(got, want, rtol=3e-6, atol=1e-7, equal_nan=True, err_msg=name)
    assert st.special.gammainc is not None


def test_igamma_gradient_in_x_only():
    a = st.tensor([0.7, 2.0, 5.0], dtype=st.float64)
    x = st.tensor([0.4, 1.5, 7.0], dtype=st.float64, requires_grad=True)
    assert st.autograd.gradcheck(lambda x: st.igamma(a, x), (x,))
    assert st.autograd.gradcheck(lambda x: st.igammac(a, x), (x,))
    a.requires_grad_(True)
    with pytest.raises(NotImplementedError, match="the derivative for 'igamma: input' is not implemented."):
        st.igamma(a, x).sum().backward()


# ---------------------------------------------------------------------------- random fills


def _ks(samples, cdf) -> float:
    """The Kolmogorov-Smirnov distance between ``samples`` and a continuous ``cdf``."""
    v = np.sort(samples)
    f = cdf(v)
    n = len(v)
    return float(max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n)))


_N = 20000
_KS_LIMIT = 1.63 / math.sqrt(_N)  # the 1% critical value: a correct sampler passes, a wrong law fails

_LAWS = [
    ("exponential_", (2.0,), lambda v: 1 - np.exp(-2.0 * v)),
    ("log_normal_", (0.5, 0.25), lambda v: 0.5 * (1 + np.vectorize(math.erf)((np.log(v) - 0.5) / (0.25 * 2 ** 0.5)))),
    ("cauchy_", (1.0, 2.0), lambda v: 0.5 + np.arctan((v - 1.0) / 2.0) / math.pi),
]


@pytest.mark.parametrize("device", VALUE_DEVICES)
@pytest.mark.parametrize("dtype", [st.float64, st.float32])
def test_random_fills_follow_their_laws_and_seeds(device, dtype):
    for name, args, cdf in _LAWS:
        g = st.Generator(device).manual_seed(7)
        a = getattr(st.empty(_N, dtype=dtype, device=device), name)(*args, generator=g)
        g2 = st.Generator(device).manual_seed(7)
        b = getattr(st.empty(_N, dtype=dtype, device=device), name)(*args, generator=g2)
        np.testing.assert_array_equal(a.cpu().numpy(), b.cpu().numpy(), err_msg=f"{name}: a seed reproduces")
        assert _ks(a.cpu().numpy().astype(np.float64), cdf) < _KS_LIMIT, name
    geo = st.empty(_N, dtype=dtype, device=device).geometric_(0.3, generator=st.Generator(device).manual_seed(3))
    counts = np.bincount(geo.cpu().numpy().astype(np.int64), minlength=6)[1:6] / _N
    np.testing.assert_allclose(counts, 0.3 * 0.7 ** np.arange(5), atol=0.01)
    assert geo.min().item() >= 1


@pytest.mark.parametrize("device", VALUE_DEVICES)
def test_normal_overloads_match_torch_shapes_dtypes_and_moments(device):
    mean = st.full((_N,), 3.0, dtype=st.float64, device=device)
    std = st.full((_N,), 0.5, dtype=st.float64, device=device)
    for out, (m, s) in ((st.normal(mean, 2.0), (3, 2)), (st.normal(-1.0, std), (-1, 0.5)), (st.normal(mean, std),
                                                                                                (3, 0.5))):
        v = out.cpu().numpy()
        assert out.dtype is st.float64 and out.shape == (_N,)
        assert abs(v.mean() - m) < 0.05 * s * 10 / 3 and abs(v.std() - s) < 0.05 * s
    assert st.normal(0.0, 1.0, (2, 3), device=device).shape == (2, 3)
    t = torch.normal(torch.ones(2, 1), torch.ones(3, dtype=torch.float64))
    got = st.normal(st.ones(2, 1, device=device), st.ones(3, dtype=st.float64, device=device))
    assert got.shape == tuple(t.shape) and got.dtype.name == "float32" == str(t.dtype)[6:]
    _raises_like_torch(lambda: st.normal(st.ones(3, device=device), st.full((3,), -1.0, device=device)),
                       lambda: torch.normal(torch.ones(3), -torch.ones(3)))
    g = st.Generator(device).manual_seed(5)
    a = st.normal(mean, 1.0, generator=g)
    assert np.array_equal(a.cpu().numpy(), st.normal(mean, 1.0, generator=st.Generator(device).manual_seed(5))
                          .cpu().numpy())
    x = st.ones(2, 3, requires_grad=True, dtype=st.float64, device=device)
    st.normal(x, 1.0).sum().backward()  # torch's formula: no gradient through the draw
    assert np.all(x.grad.cpu().numpy() == 0)


@pytest.mark.parametrize("device", VALUE_DEVICES)
def test_randint_like_matches_torch(device):
    x = st.ones(4, 5, dtype=st.float32, device=device)
    r = st.randint_like(x, 3, 9)
    assert r.dtype is st.float32 and r.shape == (4, 5) and 3 <= r.min().item() and r.max().item() < 9
    assert st.randint_like(x, 5, dtype=st.int8).dtype is st.int8
    _raises_like_torch(lambda: st.randint_like(x, 5, 2), lambda: torch.randint_like(torch.ones(4, 5), 5, 2))
    for name, args in (("exponential_", (-1,)), ("geometric_", (2,)), ("log_normal_", (1, -1)), ("cauchy_", (0, -1))):
        _raises_like_torch(lambda name=name, args=args: getattr(st.ones(3, device=device), name)(*args),
                           lambda name=name, args=args: getattr(torch.ones(3), name)(*args))


# ---------------------------------------------------------------------------- gradients torch defines


def test_scatter_reduce_gradients_match_torch():
    rng = np.random.default_rng(2)
    self_np = rng.uniform(1, 3, (3, 4))
    src_np = rng.uniform(1, 3, (2, 4))
    src_np[0, 0] = 0.0  # prod's exact zero handling
    index = np.array([[0, 1, 2, 0], [0, 1, 1, 2]])
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            grads = []
            for lib in (st, torch):
                a = lib.tensor(self_np, requires_grad=True)
                b = lib.tensor(src_np, requires_grad=True)
                out = a.scatter_reduce(0, lib.tensor(index), b, reduce, include_self=include_self)
                (out * lib.tensor(np.arange(12.0).reshape(3, 4))).sum().backward()
                grads.append((out.detach().numpy(), a.grad.numpy(), b.grad.numpy()))
            for got, want in zip(*grads):
                np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=f"{reduce} {include_self}")


def test_fill_diagonal_gradient_and_wrap_match_torch():
    for shape, wrap in (((7, 3), True), ((7, 3), False), ((3, 5), False), ((3, 3, 3), False)):
        a, t = st.zeros(*shape), torch.zeros(*shape)
        np.testing.assert_array_equal(a.fill_diagonal_(2.0, wrap).numpy(), t.fill_diagonal_(2.0, wrap).numpy())
    x = st.ones(4, 3, dtype=st.float64, requires_grad=True)
    y = x * 2
    y.fill_diagonal_(5.0)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * (1 - np.eye(4, 3)))
