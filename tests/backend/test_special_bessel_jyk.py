"""torch.special's Bessel functions J0, J1, Y0, Y1, K0, K1 (scaled too) and its orthogonal polynomials of a tensor
degree (``strided/special_bessel_jyk.py``, ``strided/special_polynomials.py``): values against mpmath and torch,
edge values, dtypes, refusals and every backend."""

from __future__ import annotations

import math

import numpy as np
import pytest

import strided as st
from strided.testing import available_devices

DEVICES = available_devices()
BESSEL = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_k0", "modified_bessel_k1",
          "scaled_modified_bessel_k0", "scaled_modified_bessel_k1"]
POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
               "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
               "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
               "laguerre_polynomial_l", "legendre_polynomial_p"]
XS = np.concatenate([np.linspace(0.01, 30, 600), [1e-7, 4.999, 5.0, 5.001, 50.0, 300.0, 1e4]])


def _mp_reference(name, x):
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30
    f = {"bessel_j0": lambda v: mpmath.besselj(0, v), "bessel_j1": lambda v: mpmath.besselj(1, v),
         "bessel_y0": lambda v: mpmath.bessely(0, v), "bessel_y1": lambda v: mpmath.bessely(1, v),
         "modified_bessel_k0": lambda v: mpmath.besselk(0, v), "modified_bessel_k1": lambda v: mpmath.besselk(1, v),
         "scaled_modified_bessel_k0": lambda v: mpmath.besselk(0, v) * mpmath.exp(v),
         "scaled_modified_bessel_k1": lambda v: mpmath.besselk(1, v) * mpmath.exp(v)}[name]
    return np.array([float(f(mpmath.mpf(float(v)))) for v in x])


@pytest.mark.parametrize("name", BESSEL)
def test_bessel_float64_is_within_rounding_of_mpmath(name):
    """Cephes' approximations with their leading coefficients (Note [Cephes Bessel functions]): torch's J and Y
    drop them and are off by up to 1e-6 beyond 5; these stay at rounding level everywhere."""
    got = getattr(st.special, name)(st.tensor(XS, dtype=st.float64)).numpy()  # J0 even, J1 odd: tested below
    ref = _mp_reference(name, XS)
    scale = np.maximum(np.abs(ref), 1e-300 if "modified" in name else 1.0)  # J, Y: absolute near their zeros
    assert np.all(np.abs(got - ref) / scale < 5e-14), float(np.max(np.abs(got - ref) / scale))


@pytest.mark.parametrize("name", BESSEL)
def test_bessel_edges_dtypes_and_odd_symmetry_match_torch(name):
    torch = pytest.importorskip("torch")
    edges = [math.inf, -math.inf, math.nan, 0.0, -0.0, -1.0, -7.5, 1e-6, 2.0, 5.0, 7.3, 120.0]
    got = getattr(st.special, name)(st.tensor(edges)).numpy()
    theirs = getattr(torch.special, name)(torch.tensor(edges)).numpy()
    # torch's J and Y are 1e-6 off beyond 5 (above); float32 rounding otherwise
    np.testing.assert_allclose(got, theirs, rtol=2e-6, atol=2e-6, equal_nan=True)
    assert getattr(st.special, name)(st.tensor([1, 2])).dtype is st.float32
    assert getattr(st.special, name)(st.tensor([1.0], dtype=st.float64)).dtype is st.float64
    for dtype, words in ((st.float16, "Half"), (st.bfloat16, "BFloat16"), (st.complex64, "ComplexFloat")):
        with pytest.raises(NotImplementedError, match=f"\"{name}_cpu\" not implemented for '{words}'"):
            getattr(st.special, name)(st.ones(2, dtype=dtype))
    with pytest.raises(TypeError, match=f"special_{name}\\(\\): argument 'input'"):
        getattr(st.special, name)(1.0)


def test_bessel_results_carry_no_gradient_and_take_out():
    x = st.tensor([0.5, 6.0], requires_grad=True)
    assert not st.special.bessel_j0(x).requires_grad  # as torch's: no derivative
    out = st.empty(2)
    assert st.special.modified_bessel_k0(x.detach(), out=out) is out
    np.testing.assert_allclose(out.numpy(), _mp_reference("modified_bessel_k0", [0.5, 6.0]), rtol=1e-6)


def _grid():
    rng = np.random.default_rng(0)
    xs = np.concatenate([rng.uniform(-1.5, 1.5, 60), [1, -1, 0, 0.5, 1e-3, -0.999, 2.0, math.nan, math.inf]])
    ns = np.concatenate([rng.integers(-2, 25, 30).astype(float), [0, 1, 2, 5, 7, 9, 12, 130, 600, math.nan,
                                                                   math.inf, 3.7]])
    return np.meshgrid(xs, ns)


@pytest.mark.parametrize("name", POLYNOMIALS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_polynomials_match_torch(name, dtype):
    """Every branch of torch's kernels: negative, NaN and infinite degrees, the special points, the closed forms
    above the degree thresholds, the recurrence, Hermite's degree limit (Note [Polynomials of a tensor degree])."""
    torch = pytest.importorskip("torch")
    x, n = _grid()
    got = getattr(st.special, name)(st.tensor(x, dtype=getattr(st, dtype)), st.tensor(n, dtype=getattr(st, dtype)))
    theirs = getattr(torch.special, name)(torch.tensor(x, dtype=getattr(torch, dtype)),
                                          torch.tensor(n, dtype=getattr(torch, dtype))).numpy()
    got = got.numpy()
    # a NaN x: NaN but for degree 0 (1) and negative degrees (0). torch 2.11's vectorized CPU kernels return other
    # lanes' values there (legendre_polynomial_p(nan, 3) = 17, P_3(2)), so those are checked here, not against it
    nan_x = np.isnan(x)
    degree = np.where(np.isfinite(n), np.trunc(n), -1)
    expected = np.where(degree < 0, 0.0, np.where(degree == 0, 1.0, np.nan))
    np.testing.assert_array_equal(got[nan_x], expected[nan_x])
    got, theirs, x, n = got[~nan_x], theirs[~nan_x], x[~nan_x], n[~nan_x]
    # both overflowing: float32 recurrences past 1e30 end in inf or NaN (inf - inf) by the order of roundings
    huge = ((np.abs(got) > 1e30) | np.isnan(got)) & ((np.abs(theirs) > 1e30) | np.isnan(theirs)) & ~np.isnan(n)
    # a closed form cos((n + 1/2) acos x) carries acos's rounding times the degree: at n = 600 float32 is good to
    # ~1e-4 only, and another libm's ulps (numpy's SIMD acos on the GPU host) move both sides by that much
    tol = 1e-9 if dtype == "float64" else 2e-4 + 16 * np.finfo(np.float32).eps * np.nan_to_num(np.abs(n), posinf=0)
    close = np.isclose(got, theirs, rtol=tol, atol=tol, equal_nan=True)
    assert np.all(close | huge), list(zip(x[~(close | huge)][:5], n[~(close | huge)][:5]))


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_argument_forms_dtypes_and_refusals(name):
    torch = pytest.importorskip("torch")
    fn, tfn = getattr(st.special, name), getattr(torch.special, name)
    n = st.tensor([0, 1, 3, 6])
    assert fn(st.tensor([0.25]), n).tolist() == pytest.approx(tfn(torch.tensor([0.25]), torch.tensor([0, 1, 3, 6]))
                                                               .tolist(), rel=1e-6)
    assert fn(0.25, n).tolist() == pytest.approx(tfn(0.25, torch.tensor([0, 1, 3, 6])).tolist(), rel=1e-6)
    assert fn(st.tensor([0.25, 0.5]), 4).tolist() == pytest.approx(tfn(torch.tensor([0.25, 0.5]), 4).tolist(), rel=1e-6)
    assert fn(st.tensor([1, 2]), n[:2]).dtype is st.float32  # integers: the default float
    assert fn(st.tensor([0.5], dtype=st.float64), n).dtype is st.float64
    assert fn(st.empty(0), 3).shape == (0,)
    assert fn(st.empty(2, 3, device="meta"), st.tensor(4, device="meta")).shape == (2, 3)
    with pytest.raises(TypeError, match=f"special_{name}\\(\\) received an invalid combination of arguments"):
        fn(0.5, 3)
    with pytest.raises(NotImplementedError, match=f"\"{name}_cpu\" not implemented for 'Half'"):
        fn(st.ones(2, dtype=st.float16), 3)
    assert not fn(st.tensor([0.5], requires_grad=True), 3).requires_grad


@pytest.mark.parametrize("device", [d for d in DEVICES if d != "meta"])
def test_every_function_on_every_backend_as_on_the_cpu(device):
    rng = np.random.default_rng(3)
    x = rng.uniform(-3, 12, 50)
    for name in BESSEL:
        got = getattr(st.special, name)(st.tensor(x, device=device, dtype=st.float64))
        want = getattr(st.special, name)(st.tensor(x, dtype=st.float64))
        # another libm: ulps apart, which is 1e-11 relative near a zero of J or Y
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-12, atol=1e-14, equal_nan=True,
                                   err_msg=name)
    xp, n = rng.uniform(-1.2, 1.2, 40), rng.integers(-1, 15, 40).astype(float)
    for name in POLYNOMIALS:
        got = getattr(st.special, name)(st.tensor(xp, device=device, dtype=st.float64),
                                        st.tensor(n, device=device, dtype=st.float64))
        want = getattr(st.special, name)(st.tensor(xp, dtype=st.float64), st.tensor(n, dtype=st.float64))
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-12, atol=1e-12, err_msg=name)
