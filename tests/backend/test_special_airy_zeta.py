"""torch.special's Airy function and Hurwitz zeta (``strided/special_airy.py``, the ``special_zeta`` op over
``backends/cpu/hurwitz_zeta.py`` and ``ew_zeta``): values against mpmath and torch, the zeta split far below zero
(polygamma's too), domains, dtypes, gradients, refusals and every backend."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

import strided as st
from strided.backends.cpu.hurwitz_zeta import zeta as zeta64
from strided.testing import available_devices

DEVICES = available_devices()


def _mpmath():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    return mpmath


def test_airy_ai_float64_is_within_rounding_of_mpmath():
    """Note [Cephes Airy function]: with p1evl's leading 1 the oscillating form is exact to rounding, where torch's
    is 2e-7 off next to -2.09."""
    mpmath = _mpmath()
    x = np.concatenate([np.linspace(-60, 30, 1801), [-2.09, 2.09, -2.0899999, 2.0899999, 0.0, 1e-300, 90.0]])
    got = st.special.airy_ai(st.tensor(x, dtype=st.float64)).numpy()
    ref = np.array([float(mpmath.airyai(mpmath.mpf(float(v)))) for v in x])
    scale = np.where(x > 2.09, np.abs(ref), np.maximum(1.0, np.abs(x) ** 0.75 / 20))  # zeros: absolute
    assert np.all(np.abs(got - ref) / scale < 4e-14), float(np.max(np.abs(got - ref) / scale))


def test_airy_ai_edges_dtypes_and_refusals_match_torch():
    torch = pytest.importorskip("torch")
    x = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 3.0, 10.0, 30.0, 103.8, 103.9, 1e6, -7.0, -100.0]
    got = st.special.airy_ai(st.tensor(x, dtype=st.float64)).numpy()
    theirs = torch.special.airy_ai(torch.tensor(x, dtype=torch.float64)).numpy()
    np.testing.assert_allclose(got, theirs, rtol=1e-13, atol=1e-300, equal_nan=True)
    # float32: computed in float64 and rounded once (torch's float32 kernel loses accuracy, 0 past 26)
    f32 = np.linspace(-20, 25, 301)
    np.testing.assert_allclose(st.special.airy_ai(st.tensor(f32, dtype=st.float32)).numpy(),
                               torch.special.airy_ai(torch.tensor(f32, dtype=torch.float32)).numpy(),
                               rtol=1e-4, atol=2e-6)
    assert st.special.airy_ai(st.tensor([1, 2])).dtype is st.float32
    assert st.special.airy_ai(st.tensor([1, 2])).tolist() == pytest.approx(
        torch.special.airy_ai(torch.tensor([1, 2])).tolist(), rel=1e-6)
    for dtype, words in ((st.float16, "Half"), (st.bfloat16, "BFloat16"), (st.complex64, "ComplexFloat")):
        with pytest.raises(NotImplementedError, match=f"\"airy_ai_cpu\" not implemented for '{words}'"):
            st.special.airy_ai(st.ones(2, dtype=dtype))
    with pytest.raises(TypeError, match="must be Tensor, not float"):
        st.special.airy_ai(1.0)
    x = st.tensor([0.5], requires_grad=True)
    assert not st.special.airy_ai(x).requires_grad  # torch's has no derivative either
    out = st.empty(1)
    assert st.special.airy_ai(x.detach(), out=out) is out


def _zeta_reference(mpmath, x: float, q: float):
    """``sum_k (q + k)^-x``: the negative terms summed one by one, the rest by mpmath at a positive argument."""
    m = max(0, math.ceil(-q))
    head = mpmath.fsum(mpmath.power(mpmath.mpf(q) + k, -x) for k in range(m))
    return float(head + mpmath.zeta(x, mpmath.mpf(q) + m))


def test_zeta_is_within_rounding_of_mpmath_on_both_sides_of_the_split():
    """Note [Hurwitz zeta far below zero]: the direct sum above q = -64, three sums at positive arguments below
    (checked here against the negative terms summed one by one at 40 digits)."""
    mpmath = _mpmath()
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(1.01, 12, 60), rng.integers(2, 9, 60).astype(float)])
    q = np.concatenate([rng.uniform(0.01, 50, 60), -rng.uniform(0.3, 700, 60)])
    q[-12:] = np.floor(q[-12:]) + 0.5  # r = 1/2: odd x cancels exactly
    got = st.special.zeta(st.tensor(x, dtype=st.float64), st.tensor(q, dtype=st.float64)).numpy()
    ref = np.array([_zeta_reference(mpmath, a, b) for a, b in zip(x, q)])
    # a negative q sums terms up to ~r^-x of either sign: the error is relative to those, not to the result
    scale = np.where(q > 0, np.abs(ref), np.maximum(np.abs(ref), (q - np.floor(q)) ** -x + (np.ceil(q) - q) ** -x))
    assert np.all(np.abs(got - ref) / scale < 2e-14), float(np.max(np.abs(got - ref) / scale))


def test_zeta_far_below_zero_is_fast_and_polygamma_too():
    """torch's direct sum takes |q| steps (minutes at -1e9); the split takes a few dozen at any q."""
    q = np.array([-1e6 + 0.5, -1e9 + 0.25, -1e15 + 0.5, -4503599627370495.5])
    start = time.perf_counter()
    got = zeta64(3.0, q)
    assert time.perf_counter() - start < 5  # a hang guard, not a timing assertion: the old code took hours
    # odd x, r = 1/2: the terms cancel to the tail beyond -q, zeta(3, 1 - q) ~ 1 / (2 q^2)
    np.testing.assert_allclose(got[[0, 2, 3]], [1 / (2 * (1e6) ** 2), 1 / (2 * 1e30), 1 / (2 * 4503599627370496.0**2)],
                               rtol=1e-5)
    p = st.polygamma(2, st.tensor([-1e6 + 0.5, -1e9 + 0.5], dtype=st.float64)).numpy()
    np.testing.assert_allclose(p, [-1e-12, -1e-18], rtol=1e-5)  # -2 zeta(3, x) = psi''(1 - x) at half-integers


def test_zeta_domain_and_edges_match_torch():
    torch = pytest.importorskip("torch")
    nan, inf = math.nan, math.inf
    x = [nan, 2, 2, 0.5, 1, 3, 2.5, 2, 2, inf, 3, 2, 4, 1.5, 3, 5, 2, 7, 30]
    q = [1, nan, inf, 2, 2, -2, -1.5, -1.5, -inf, 2, -0.0, -63.5, -20.25, 1e-3, 1e6, 0.5, 1e-300, 40.0, 1.0]
    got = st.special.zeta(st.tensor(x, dtype=st.float64), st.tensor(q, dtype=st.float64)).numpy()
    theirs = torch.special.zeta(torch.tensor(x, dtype=torch.float64), torch.tensor(q, dtype=torch.float64)).numpy()
    np.testing.assert_allclose(got, theirs, rtol=1e-13, atol=0, equal_nan=True)
    # above -64 strided's sum is torch's term for term (another libm's pow: an ulp apart); below, only the
    # cancelled rounding differs
    rng = np.random.default_rng(1)
    qs, xs = -rng.uniform(0.1, 200, 300), rng.integers(2, 12, 300).astype(float)
    got = st.special.zeta(st.tensor(xs, dtype=st.float64), st.tensor(qs, dtype=st.float64)).numpy()
    theirs = torch.special.zeta(torch.tensor(xs), torch.tensor(qs)).numpy()
    terms = (qs - np.floor(qs)) ** -xs + (np.ceil(qs) - qs) ** -xs
    above = qs >= -64
    np.testing.assert_allclose(got[above], theirs[above], rtol=2e-15, atol=0)
    assert np.all(np.abs(got - theirs) <= 1e-13 * np.maximum(np.abs(theirs), terms))


def test_zeta_arguments_dtypes_gradient_and_refusals_match_torch():
    torch = pytest.importorskip("torch")
    assert st.special.zeta(2, st.tensor([1, 2])).tolist() == pytest.approx(
        torch.special.zeta(2, torch.tensor([1, 2])).tolist(), rel=1e-7)
    assert st.special.zeta(st.tensor([2, 3]), 1.5).tolist() == pytest.approx(
        torch.special.zeta(torch.tensor([2, 3]), 1.5).tolist(), rel=1e-7)
    assert st.special.zeta(st.tensor([2, 3]), 1.5).dtype is st.float32
    assert st.special.zeta(st.tensor([2.0]), st.tensor([1.5], dtype=st.float64)).dtype is st.float64
    assert st.special.zeta(st.tensor([True]), 1.5).tolist() == [math.inf]
    out = st.empty(2)
    assert st.special.zeta(st.tensor([2.0, 3.0]), 1.0, out=out) is out
    np.testing.assert_allclose(out.numpy(), [math.pi**2 / 6, 1.2020569], rtol=1e-6)
    for dtype, words in ((st.float16, "Half"), (st.bfloat16, "BFloat16"), (st.complex64, "ComplexFloat")):
        with pytest.raises(NotImplementedError, match=f"\"zeta_cpu\" not implemented for '{words}'"):
            st.special.zeta(st.ones(2, dtype=dtype), st.tensor(1.5))
    with pytest.raises(TypeError, match=r"special_zeta\(\) received an invalid combination of arguments"):
        st.special.zeta(2, 3)
    # d/dq zeta(x, q) = -x zeta(x + 1, q); the derivative in x raises torch's error
    q = st.tensor([0.7, 2.0, 5.5], dtype=st.float64, requires_grad=True)
    x = st.tensor([2.0, 3.5, 4.0], dtype=st.float64)
    st.special.zeta(x, q).sum().backward()
    tq = torch.tensor([0.7, 2.0, 5.5], dtype=torch.float64, requires_grad=True)
    torch.special.zeta(torch.tensor([2.0, 3.5, 4.0], dtype=torch.float64), tq).sum().backward()
    np.testing.assert_allclose(q.grad.numpy(), tq.grad.numpy(), rtol=1e-13)
    assert st.autograd.gradcheck(lambda v: st.special.zeta(x, v), (q.detach().requires_grad_(),))
    xg = st.tensor([2.0], requires_grad=True)
    with pytest.raises(NotImplementedError, match="the derivative for 'zeta' is not implemented."):
        st.special.zeta(xg, st.tensor([2.0])).sum().backward()


@pytest.mark.parametrize("device", DEVICES)
def test_airy_and_zeta_on_every_backend_as_on_the_cpu(device):
    rng = np.random.default_rng(4)
    x = np.concatenate([rng.uniform(-30, 30, 200), [math.inf, math.nan, 0.0, -2.09, 2.09, 200.0]])
    got = st.special.airy_ai(st.tensor(x, device=device, dtype=st.float64))
    assert got.device.type == device and got.shape == (206,)
    if device != "meta":
        want = st.special.airy_ai(st.tensor(x, dtype=st.float64)).numpy()
        # another libm's sin / cos / exp: ulps apart, absolute next to the zeros
        np.testing.assert_allclose(got.cpu().numpy(), want, rtol=1e-12, atol=1e-14, equal_nan=True)
    xs = np.concatenate([rng.uniform(1.01, 9, 100), rng.integers(2, 9, 60).astype(float), [1, 0.5, 2, 2, 3, math.nan]])
    qs = np.concatenate([rng.uniform(0.01, 40, 100), -rng.uniform(0.5, 5000, 60), [2, 2, -3, -1e12 + 0.5, -70.5, 1]])
    for dtype in (st.float64, st.float32):
        got = st.special.zeta(st.tensor(xs, device=device, dtype=dtype), st.tensor(qs, device=device, dtype=dtype))
        assert got.device.type == device and got.dtype is dtype and got.shape == (166,)
        if device != "meta":
            want = st.special.zeta(st.tensor(xs, dtype=dtype), st.tensor(qs, dtype=dtype)).numpy()
            np.testing.assert_allclose(got.cpu().numpy(), want, rtol=1e-12 if dtype is st.float64 else 1e-6,
                                       atol=0, equal_nan=True)


def test_zeta_far_below_zero_at_a_huge_even_x_overflows_to_inf_as_torch():
    """Split at zero (Note [Hurwitz zeta far below zero]), a huge even ``x`` overflows both O(1) sums to +inf: the
    value is +inf (torch's direct sum), not inf - inf; an odd x cancels its pairs exactly."""
    x = st.tensor([1e20, 1e20, 1001.0], dtype=st.float64)
    q = st.tensor([-1001.2, -4988429.2, -100.5], dtype=st.float64)
    got = st.special.zeta(x, q).numpy()
    assert np.isposinf(got[:2]).all()
    assert got[2] == 0.0  # the true value is ~1e-2009
