"""torch.special's polynomials at huge degrees (torch's OpInfo reference inputs: n up to 1e20, which hung strided):
torch's int64 degree, the recurrence stopping once it saturates to NaN, the hyperbolic Chebyshev forms past 2^16
(Note [Recurrences that saturate])."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st

CHEBYSHEV = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
             "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_w"]
ALL = CHEBYSHEV + ["hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"]


@pytest.mark.parametrize("name", ALL)
def test_a_degree_past_int64_is_torchs_negative_degree(name):
    got = getattr(st.special, name)(st.tensor([2.0, 0.5, -3.0], dtype=st.float64),
                                     st.tensor([1e20, -1e20, 9.3e18], dtype=st.float64))
    np.testing.assert_array_equal(got.numpy(), 0.0)


@pytest.mark.parametrize("name", ["legendre_polynomial_p", "hermite_polynomial_h", "chebyshev_polynomial_t"])
def test_a_huge_degree_at_a_large_x_saturates_without_running_every_step(name):
    x = st.tensor([501.0, 13437.7], dtype=st.float64)
    n = st.tensor([4988429.0, 4988429.0], dtype=st.float64)
    got = getattr(st.special, name)(x, n).numpy()
    if name == "chebyshev_polynomial_t":
        assert np.isposinf(got).all()  # the hyperbolic form overflows (torch's recurrence: NaN)
    else:
        assert np.isnan(got).all()  # torch's recurrence overflows, then inf - inf


@pytest.mark.parametrize("name", CHEBYSHEV)
def test_hyperbolic_forms_past_the_recurrence_limit(name):
    shifted = name.startswith("shifted")
    y = np.array([1.00001, -1.00001, 1.0000001, -1.0000001, 3.0])
    x = (y + 1) / 2 if shifted else y
    n = np.array([70001.0, 70001.0, 100000.0, 100001.0, 70000.0])
    got = getattr(st.special, name)(st.tensor(x), st.tensor(n)).numpy()
    t = np.arccosh(np.abs(y))
    flip = np.where(y < 0, (-1.0) ** n, 1.0)
    kind = name[-1]
    with np.errstate(over="ignore", invalid="ignore"):  # the last point overflows, as it should
        even, odd = np.cosh((n + 0.5) * t) / np.cosh(t / 2), np.sinh((n + 0.5) * t) / np.sinh(t / 2)
        want = flip * {"t": np.cosh(n * t), "u": np.sinh((n + 1) * t) / np.sinh(t), "v": np.where(y > 0, even, odd),
                       "w": np.where(y > 0, odd, even)}[kind]
    np.testing.assert_allclose(got[:4], want[:4], rtol=1e-6 if shifted else 1e-9)  # x = (y + 1) / 2 rounds
    assert np.isinf(got[4])  # overflows (torch's recurrence gives NaN there)


def test_hyperbolic_forms_match_torchs_recurrence():
    torch = pytest.importorskip("torch")
    x = [1.00001, -1.00001, 1.0000001, -1.0000001]
    n = [70001.0, 70001.0, 100000.0, 100001.0]
    for name in CHEBYSHEV:
        got = getattr(st.special, name)(st.tensor(x, dtype=st.float64), st.tensor(n, dtype=st.float64)).numpy()
        want = getattr(torch.special, name)(torch.tensor(x, dtype=torch.float64), torch.tensor(n, dtype=torch.float64))
        want = want.numpy()
        finite = np.isfinite(want)  # where torch's recurrence overflowed (NaN), the hyperbolic form is +-inf
        assert np.isinf(got[~finite]).all()
        np.testing.assert_allclose(got[finite], want[finite], rtol=1e-7)  # torch's 10^5-step recurrence drifts
