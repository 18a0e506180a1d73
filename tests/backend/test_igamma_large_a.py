"""igamma / igammac for large ``a`` near ``x`` (Note [Incomplete gamma for large a]): Temme's expansion, with
coefficients derived in exact arithmetic; the CUDA header holds the same table."""

from __future__ import annotations

import math
import pathlib
import re

import numpy as np
import pytest

import strided as st
from strided.backends.cpu.igamma_asymptotic import _coefficients

# (a, x, P(a, x)): SciPy's values inside torch's own asymptotic region, where SciPy, torch and strided agree
KNOWN = [(4988429.2, 4988429.2, 0.5000595397360789), (1e20, 1e20, 0.500000000013298),
         (250.0, 260.0, 0.7406105173923527), (1e6, 1e6 + 2000, 0.9771959041012303),
         (5000.0, 4900.0, 0.07794495622651393)]


@pytest.mark.parametrize("a,x,p", KNOWN)
def test_large_a_near_x(a, x, p):
    at, xt = st.tensor([a], dtype=st.float64), st.tensor([x], dtype=st.float64)
    np.testing.assert_allclose(st.igamma(at, xt).item(), p, rtol=1e-13)
    np.testing.assert_allclose(st.igammac(at, xt).item(), 1 - p, rtol=1e-12)
    assert abs(st.igamma(at.float(), xt.float()).item() - p) < 1e-6  # float32 computes in float64 too


def test_beyond_torchs_region_the_normal_limit_holds():
    # at a = 1.45e12, x = a (1 - 6.24e-6) torch's power series stops short (3.9e-16); P is ~ Phi(sigma sqrt(a))
    a = 1445438598742.0378
    x = a * (1 - 6.2409817320752126e-06)
    p = st.igamma(st.tensor([a], dtype=st.float64), st.tensor([x], dtype=st.float64)).item()
    z = (x - a) / math.sqrt(a)
    normal = 0.5 * math.erfc(-z / math.sqrt(2))
    assert abs(p - normal) < 0.05 * normal and p > 1e-14


def test_the_expansion_meets_the_series_and_fraction_at_its_border():
    # one ulp inside and outside |x - a| = 0.3 a, the two methods give the same values
    for a in (201.0, 1e3, 3e3):
        for side in (-1, 1):
            border = a + side * 0.3 * a
            inside, outside = np.nextafter(border, a), np.nextafter(border, border + side * a)
            for fn in (st.igamma, st.igammac):
                lo, hi = fn(st.tensor([a, a], dtype=st.float64), st.tensor([inside, outside], dtype=st.float64)).numpy()
                assert abs(lo - hi) <= 1e-10 * max(abs(lo), abs(hi))


def test_the_cuda_header_holds_the_same_coefficients():
    header = pathlib.Path(st.__file__).parent / "backends" / "cuda" / "kernels" / "igamma.cuh"
    text = header.read_text()
    body = text[text.index("EW_IGAM_TEMME[10][25] = {"):]
    body = body[:body.index("};")]
    values = [float(v) for v in re.findall(r"-?\d+\.\d+(?:e-?\d+)?", body.split("=", 1)[1])]
    np.testing.assert_array_equal(np.array(values).reshape(10, 25), _coefficients())


def test_matches_torch_inside_torchs_region():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a = np.exp(rng.uniform(np.log(201), np.log(1e9), 2000))
    x = a * (1 + rng.uniform(-4.4, 4.4, 2000) / np.sqrt(a))
    for fn in ("igamma", "igammac"):
        got = getattr(st, fn)(st.tensor(a), st.tensor(x)).numpy()
        want = getattr(torch, fn)(torch.tensor(a), torch.tensor(x)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-300)  # torch's own error is ~1.5e-9 here
