"""lgamma, digamma and polygamma: values against the standard library and known constants, torch's edge
values, methods and in-place forms, errors and gradients, on every available backend (and against
torch when it is installed)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import strided as st
from strided.autograd import gradcheck
from strided.backends.cpu import gamma_functions as gf
from strided.testing import available_devices
from strided.testing.opdb.pointwise_unary import _polygamma_scalar

DEVICES = [d for d in available_devices() if d != "meta"]
EULER = 0.5772156649015329
ZETA3 = 1.2020569031595942
ZETA5 = 1.0369277551433699
ZETA7 = 1.0083492773819228


def _run(fn, values, device, dtype=st.float64):
    """``fn`` of a tensor of ``values`` on ``device``, back as a float64 array."""
    x = st.tensor(np.asarray(values, dtype=np.float64), dtype=dtype, device=device)
    return np.asarray(fn(x).cpu().numpy(), dtype=np.float64)


def _lgamma_near_one(z: float) -> float:
    """lgamma(1 + z) for |z| <= 1e-3 by its Taylor series (zeta(k) of known values)."""
    zeta = {2: math.pi**2 / 6, 3: ZETA3, 4: math.pi**4 / 90, 5: ZETA5, 6: math.pi**6 / 945, 7: ZETA7}
    return math.fsum([-EULER * z] + [(-z) ** k * zeta[k] / k for k in range(2, 8)])


# ---------------------------------------------------------------------------- lgamma
def test_cpu_lgamma_matches_math_lgamma():
    rng = np.random.default_rng(0)
    x = np.concatenate([np.exp(rng.uniform(math.log(1e-300), math.log(1e6), 20000)), rng.uniform(0, 12, 20000)])
    x = x[(np.abs(x - 1) > 0.05) & (np.abs(x - 2) > 0.05)]  # math.lgamma is only absolutely accurate there
    exact = np.array([math.lgamma(v) for v in x])
    np.testing.assert_allclose(gf.lgamma(x), exact, rtol=1e-13, atol=0)
    neg = rng.uniform(-40, 0, 20000)
    neg = neg[np.abs(neg - np.rint(neg)) > 1e-6]
    exact = np.array([math.lgamma(v) for v in neg])
    assert np.all(np.abs(gf.lgamma(neg) - exact) <= 1e-13 * np.maximum(1, np.abs(exact)))


def test_cpu_lgamma_is_relatively_accurate_next_to_its_zeros():
    z = np.concatenate([np.linspace(-1e-3, 1e-3, 2001), [1e-12, -1e-12]])
    z = z[z != 0]
    near_one = gf.lgamma(1 + z)  # the reference takes the argument lgamma really sees: (1 + z) - 1
    np.testing.assert_allclose(near_one, [_lgamma_near_one(v) for v in (1 + z) - 1], rtol=2e-15)
    np.testing.assert_allclose(gf.lgamma(2 + z), [_lgamma_near_one(v) + math.log1p(v) for v in (2 + z) - 2],
                               rtol=4e-15)
    assert np.all(np.sign(near_one) == -np.sign(z))


@pytest.mark.parametrize("device", DEVICES)
def test_lgamma_edges_follow_torch(device):
    values = [0.0, -0.0, -1.0, -2.0, -1e300, math.inf, -math.inf, math.nan, 1.0, 2.0, 1e300, 1e308, 5e-324]
    got = _run(st.lgamma, values, device)
    assert got[:7].tolist() == [math.inf] * 7 and math.isnan(got[7]) and got[8:10].tolist() == [0.0, 0.0]
    assert got[10] == pytest.approx(1e300 * (math.log(1e300) - 1), rel=1e-15) and got[11] == math.inf
    assert got[12] == pytest.approx(-math.log(5e-324), rel=1e-15)
    np.testing.assert_allclose(_run(st.lgamma, [0.5, -0.5, -2.5, 100.5], device),
                               [math.lgamma(v) for v in (0.5, -0.5, -2.5, 100.5)], rtol=1e-13)


# ---------------------------------------------------------------------------- digamma
@pytest.mark.parametrize("device", DEVICES)
def test_digamma_known_values_and_edges(device):
    got = _run(st.digamma, [1.0, 0.5, -0.5, 10.0, 2.0, 0.25], device)
    exact = [-EULER, -EULER - 2 * math.log(2), -EULER - 2 * math.log(2) + 2, 7129 / 2520 - EULER, 1 - EULER,
             -EULER - math.pi / 2 - 3 * math.log(2)]
    np.testing.assert_allclose(got, exact, rtol=1e-15, atol=4e-15)
    edges = _run(st.digamma, [0.0, -0.0, -1.0, -3.0, -math.inf, math.inf, math.nan], device)
    assert edges[:2].tolist() == [-math.inf, math.inf] and edges[5] == math.inf  # torch: +-0 -> -+inf
    assert np.isnan(edges[[2, 3, 4, 6]]).all()


def test_cpu_digamma_matches_an_independent_reference():
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.uniform(-20, 20, 4000), np.exp(rng.uniform(-30, 30, 2000))])
    x = x[np.abs(x - np.rint(x)) > 1e-9]
    exact = np.array([_polygamma_scalar(0, v) for v in x])
    # the recurrence sums terms of size up to |psi(1 - x)| + pi / |tan(pi x)|: cancellation is absolute
    scale = np.abs(np.log(np.abs(x) + 2)) + np.abs(np.pi / np.tan(np.pi * x)) * (x < 0) + 1 / np.abs(x)
    assert np.all(np.abs(gf.digamma(x) - exact) <= 4e-15 * scale + 1e-15 * np.abs(exact))


# ---------------------------------------------------------------------------- polygamma
@pytest.mark.parametrize("device", DEVICES)
def test_polygamma_known_values(device):
    def pg(n, values):
        return _run(lambda t: st.polygamma(n, t), values, device)

    np.testing.assert_allclose(pg(1, [1.0, 0.5, -0.5, 2.0]),
                               [math.pi**2 / 6, math.pi**2 / 2, math.pi**2 / 2 + 4, math.pi**2 / 6 - 1], rtol=2e-15)
    np.testing.assert_allclose(pg(2, [1.0, 0.5]), [-2 * ZETA3, -14 * ZETA3], rtol=2e-15)
    np.testing.assert_allclose(pg(3, [1.0, 0.5]), [math.pi**4 / 15, math.pi**4], rtol=2e-15)
    np.testing.assert_allclose(pg(4, [1.0]), [-24 * ZETA5], rtol=2e-15)
    np.testing.assert_allclose(pg(0, [1.0]), [-EULER], rtol=1e-15)


def test_cpu_polygamma_matches_an_independent_reference():
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.uniform(0.05, 30, 2000), rng.uniform(-9, 0, 2000)])
    x = x[np.abs(x - np.rint(x)) > 1e-3]
    for n in (1, 2, 3, 6, 11):
        exact = np.array([_polygamma_scalar(n, v) for v in x])
        pos = x > 0
        np.testing.assert_allclose(gf.polygamma(n, x[pos]), exact[pos], rtol=2e-14, err_msg=f"n={n}")
        # negative x: terms of both signs (n even), so the error is relative to the largest term
        big = math.factorial(n) / np.abs(x[~pos] - np.rint(x[~pos])) ** (n + 1)
        assert np.all(np.abs(gf.polygamma(n, x[~pos]) - exact[~pos]) <= 1e-14 * (big + np.abs(exact[~pos]))), n


@pytest.mark.parametrize("device", DEVICES)
def test_polygamma_edges(device):
    values = [0.0, -0.0, -1.0, -2.0, math.inf, -math.inf, math.nan]

    def pg(n):
        return _run(lambda t: st.polygamma(n, t), values, device)

    t1, t2, t3 = pg(1), pg(2), pg(3)
    assert t1[:4].tolist() == [math.inf] * 4 and t1[4] == 0 and np.isnan(t1[5:]).all()  # poles: +inf
    assert t2[:4].tolist() == [-math.inf] * 4 and np.isnan(t2[4]) and t2[5] == -math.inf and np.isnan(t2[6])
    assert t3[:4].tolist() == [math.inf] * 4 and np.isnan(t3[4]) and t3[5] == math.inf
    assert _run(lambda t: st.polygamma(201, t), [30.0], device)[0] == math.inf  # 201! overflows, as torch's


def test_cpu_hurwitz_zeta():
    q = np.array([1.0, 2.0, 0.5, 1e5, -1.5, 0.0, -2.0, math.nan])
    z = gf.zeta(2.0, q)
    np.testing.assert_allclose(z[:4], [math.pi**2 / 6, math.pi**2 / 6 - 1, math.pi**2 / 2, 1e-5 + 5e-11 + 1e-15 / 6],
                               rtol=2e-15)
    assert z[4] == pytest.approx(1 / 2.25 + 4 + math.pi**2 / 2, rel=1e-15)  # 1/q^2 + 1/(q+1)^2 + zeta(2, 0.5)
    assert z[5:7].tolist() == [math.inf, math.inf] and math.isnan(z[7])
    assert np.isinf(gf.zeta(1.0, q)).all() and np.isnan(gf.zeta(0.5, q)).all()
    assert np.isnan(gf.zeta(2.5, np.array([-1.5])))[0]
    assert gf.zeta(4.0, np.array([1.0]))[0] == pytest.approx(math.pi**4 / 90, rel=1e-15)


# ---------------------------------------------------------------------------- ops, methods, dtypes
def test_dtypes_promote_like_floating_unary_ops():
    i = st.tensor([1, 2, 3])
    for t in (st.lgamma(i), st.digamma(i), st.polygamma(2, i), st.polygamma(0, st.tensor([True, False]))):
        assert t.dtype is st.float32
    for d in (st.float16, st.bfloat16, st.float64):
        assert st.polygamma(3, st.ones(2, dtype=d)).dtype is d and st.lgamma(st.ones(2, dtype=d)).dtype is d
    assert st.polygamma(2, st.empty(2, 3, device="meta")).shape == (2, 3)
    assert st.polygamma(1, st.empty((), device="meta", dtype=st.int64)).dtype is st.float32


@pytest.mark.parametrize("device", DEVICES)
def test_methods_and_inplace_forms(device):
    base = st.tensor([[0.3, 1.7, 4.2], [2.5, 0.9, 7.0]], dtype=st.float64, device=device)
    for n in (0, 1, 3):
        expected = st.polygamma(n, base).cpu().numpy()
        np.testing.assert_array_equal(base.polygamma(n).cpu().numpy(), expected)
        view = base.clone().t()  # a non-contiguous self
        assert view.polygamma_(n) is view
        np.testing.assert_array_equal(view.t().cpu().numpy(), expected)
    for name in ("lgamma", "digamma"):
        y = base.clone()
        assert getattr(y, f"{name}_")() is y
        np.testing.assert_array_equal(y.cpu().numpy(), getattr(st, name)(base).cpu().numpy())


@pytest.mark.parametrize("device", DEVICES)
def test_mvlgamma(device):
    x = st.tensor([[3.1, 3.6], [7.25, 40.0]], dtype=st.float64, device=device)
    for p in (1, 3, 6):
        exact = [[p * (p - 1) / 4 * math.log(math.pi) + math.fsum(math.lgamma(v - j / 2) for j in range(p))
                  for v in row] for row in x.cpu().tolist()]
        np.testing.assert_allclose(st.mvlgamma(x, p).cpu().numpy(), exact, rtol=1e-13)
        np.testing.assert_allclose(x.mvlgamma(p).cpu().numpy(), exact, rtol=1e-13)
        y = x.clone()
        assert y.mvlgamma_(p) is y
        np.testing.assert_allclose(y.cpu().numpy(), exact, rtol=1e-13)
    assert st.mvlgamma(st.tensor([2, 3], device=device), 2).dtype is st.float32
    g = st.tensor([2.5, 4.0], dtype=st.float64, requires_grad=True)
    assert gradcheck(lambda t: st.mvlgamma(t, 4), (g,))
    (d,) = st.autograd.grad(st.mvlgamma(g, 3).sum(), g)
    np.testing.assert_allclose(d.numpy(), [sum(st.digamma(st.tensor(v - j / 2, dtype=st.float64)).item()
                                               for j in range(3)) for v in (2.5, 4.0)], rtol=1e-14)


@pytest.mark.parametrize("device", [*DEVICES, "meta"])
def test_errors_in_torch_words(device):
    x = st.ones(3, device=device)
    with pytest.raises(RuntimeError, match=r"^polygamma\(n, x\) does not support negative n\.$"):
        st.polygamma(-1, x)
    with pytest.raises(RuntimeError, match=r"^polygamma\(n, x\) does not support negative n\.$"):
        x.polygamma_(-2)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        st.ones(3, dtype=st.int64, device=device).polygamma_(1)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Int"):
        st.ones(3, dtype=st.int32, device=device).lgamma_()
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        st.ones(1, device=device).expand(3).polygamma_(1)
    with pytest.raises(RuntimeError, match="^The input tensor may not be a boolean tensor.$"):
        st.mvlgamma(st.ones(3, dtype=st.bool, device=device), 2)
    with pytest.raises(RuntimeError, match="^p has to be greater than or equal to 1$"):
        x.mvlgamma(0)


# ---------------------------------------------------------------------------- autograd
def test_gradients_and_second_derivatives():
    x = st.tensor([0.3, 1.7, 4.2, -0.6], dtype=st.float64, requires_grad=True)
    assert gradcheck(st.lgamma, (x,))
    assert gradcheck(st.digamma, (x,))
    for n in (1, 2, 4):
        assert gradcheck(lambda t, n=n: st.polygamma(n, t), (x,))
    (g,) = st.autograd.grad(st.lgamma(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), st.digamma(x.detach()).numpy(), rtol=1e-15)
    (h,) = st.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), st.polygamma(1, x.detach()).numpy(), rtol=1e-15)
    y = x * 1
    y.polygamma_(2)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), st.polygamma(3, x.detach()).numpy(), rtol=1e-15)


# ---------------------------------------------------------------------------- torch
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("device", DEVICES)
def test_values_match_torch(device, dtype):
    """Against torch in float64 (at the inputs rounded to ``dtype``): torch's float32 kernels are less
    accurate than ours (float32 trigamma takes sin(pi x) of the unreduced float argument)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.uniform(-15, 15, 3000), np.exp(rng.uniform(-20, 20, 1000)),
                        [0.0, -0.0, -1.0, -4.0, -2.5, 0.5, 1.0, 2.0, 10.0, math.inf, -math.inf, math.nan]])
    x = x.astype(dtype).astype(np.float64)
    xs = st.tensor(x, dtype=getattr(st, dtype), device=device)
    xt = torch.tensor(x, dtype=torch.float64)
    rtol = 1e-12 if dtype == "float64" else 2e-6
    whole = (x <= 0) & (x == np.rint(x))
    with np.errstate(all="ignore"):
        # lgamma and digamma next to their zeros and poles: compare at the size of the terms summed
        size = np.abs(np.log(np.abs(x) + 2)) + np.abs(np.pi / np.tan(np.pi * x)) * (x < 0)
    cases = [(st.lgamma, torch.lgamma, size), (st.digamma, torch.digamma, size)]
    cases += [(lambda t, n=n: st.polygamma(n, t), lambda t, n=n: torch.polygamma(n, t), 0) for n in (1, 2, 3, 5)]
    cases.append((lambda t: st.mvlgamma(t.abs() + 2.5, 4), lambda t: torch.mvlgamma(t.abs() + 2.5, 4), 1))
    for n, (ours, theirs, atol) in enumerate(cases):
        got = np.asarray(ours(xs).cpu().numpy(), dtype=np.float64)
        with np.errstate(over="ignore"):
            want = theirs(xt).numpy().astype(dtype).astype(np.float64)  # rounded (or overflowed) as ours
        keep = ~whole | (x == 0) if n == 2 else np.ones(x.shape, dtype=bool)  # torch: finite at the poles
        tol = max(rtol, 1e-8) if n == 2 else rtol  # torch's trigamma: about 1e-9 relative
        with np.errstate(all="ignore"):
            close = np.isclose(got, want, rtol=tol, atol=np.finfo(dtype).tiny, equal_nan=True)
            close |= np.abs(got - want) <= tol * atol
        bad = keep & ~close
        assert not bad.any(), (n, x[bad][:5], got[bad][:5], want[bad][:5])
