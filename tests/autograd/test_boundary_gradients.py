"""Gradients at the edges of a function's domain, at its kinks and at ties, against torch: where the value is NaN
or infinite, or the function has no derivative, the gradient is still torch's (random inputs of the op database
never land there). Ties of clamp / maximum / fmax / atan2's origin follow torch >= 2.14 (Note [Subgradients at
ties and bounds] in ``strided/autograd/functions_ties.py``): their expected values are torch 2.14.1's, recorded in
``tests/data/torch_2_14_tie_gradients.json``, so the test does not depend on the installed torch."""

from __future__ import annotations

import json
import math
import pathlib

import numpy as np
import pytest

import strided as st
from strided.testing import available_devices

DEVICES = [d for d in available_devices() if d != "meta"]
POINTS = [0.0, 1.0, -1.0, 0.3, 2.0, 0.999, -3.0, 1e-9, 20.0, math.inf, -math.inf, math.nan]
TIES = json.loads((pathlib.Path(__file__).parent.parent / "data" / "torch_2_14_tie_gradients.json").read_text())

UNARY = {
    "logit": lambda T, x: T.logit(x),
    "logit_eps": lambda T, x: T.logit(x, 0.01),
    "acosh": lambda T, x: T.acosh(x),
    "relu": lambda T, x: T.relu(x),
    "abs": lambda T, x: T.abs(x),
    "sqrt": lambda T, x: T.sqrt(x),
    "hardtanh": lambda T, x: T.nn.functional.hardtanh(x),
    "relu6": lambda T, x: T.nn.functional.relu6(x * 3),
    "leaky_relu": lambda T, x: T.nn.functional.leaky_relu(x, 0.1),
}

REDUCTIONS = {  # (function, input): ties and NaN share the gradient as torch's evenly_distribute_backward
    "median_ties": (lambda T, x: T.median(x), [1.0, 2.0, 2.0, 3.0]),
    "median_nan": (lambda T, x: T.median(x), [1.0, math.nan, 2.0, math.nan]),
    "nanmedian_ties": (lambda T, x: T.nanmedian(x), [1.0, 2.0, 2.0, math.nan, 3.0]),
    "max_ties": (lambda T, x: T.max(x), [3.0, 1.0, 3.0]),
    "max_nan": (lambda T, x: T.max(x), [1.0, math.nan, 3.0, math.nan]),
    "min_ties": (lambda T, x: T.min(x), [1.0, 1.0, 3.0]),
    "median_dim_ties": (lambda T, x: T.median(x, 0)[0], [2.0, 2.0, 1.0]),
    "std_constant": (lambda T, x: T.std(x), [2.0, 2.0, 2.0]),
    "std_mean_constant": (lambda T, x: T.std_mean(x)[0], [2.0, 2.0]),
    "var_one_element": (lambda T, x: T.var(x), [1.0]),
}

TIE_FUNCTIONS = {
    "clampT": lambda T, x, a, b: T.clamp(x, a, b),
    "clampTmin": lambda T, x, a, b: T.clamp(x, min=a) + 0 * b,
    "clampTmax": lambda T, x, a, b: T.clamp(x, max=b) + 0 * a,
    "clampS": lambda T, x, a, b: T.clamp(x, 0.0, 1.0) + 0 * a + 0 * b,
    "clampSmin": lambda T, x, a, b: T.clamp_min(x, 1.0) + 0 * a + 0 * b,
    "clampSmax": lambda T, x, a, b: T.clamp_max(x, 1.0) + 0 * a + 0 * b,
    "fmax": lambda T, x, a, b: T.fmax(x, a) + 0 * b,
    "fmin": lambda T, x, a, b: T.fmin(x, a) + 0 * b,
    "maximum": lambda T, x, a, b: T.maximum(x, a) + 0 * b,
    "minimum": lambda T, x, a, b: T.minimum(x, b) + 0 * a,
    "atan2": lambda T, x, a, b: T.atan2(x, a) + 0 * b,
}


def _grad(lib, fn, values, device=None):
    x = lib.tensor(values, dtype=lib.float64, **({"device": device} if device else {}))
    x.requires_grad_(True)
    y = fn(lib, x)
    y.backward(lib.ones_like(y))
    return y.detach().cpu().numpy(), x.grad.cpu().numpy()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_boundary_gradient_as_torch(device, name):
    torch = pytest.importorskip("torch")
    s_val, s_grad = _grad(st, UNARY[name], POINTS, device)
    t_val, t_grad = _grad(torch, UNARY[name], POINTS)
    np.testing.assert_allclose(s_val, t_val, rtol=1e-12, equal_nan=True)
    finite = np.isfinite(t_grad)  # an infinite gradient at +-0.0 takes the zero's sign: compare magnitudes there
    np.testing.assert_allclose(s_grad[finite], t_grad[finite], rtol=1e-12, err_msg=f"{name} at {POINTS}")
    np.testing.assert_array_equal(np.abs(s_grad[~finite]), np.abs(t_grad[~finite]))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction_ties_and_constants_as_torch(device, name):
    torch = pytest.importorskip("torch")
    fn, values = REDUCTIONS[name]
    s_val, s_grad = _grad(st, fn, values, device)
    t_val, t_grad = _grad(torch, fn, values)
    np.testing.assert_allclose(s_val, t_val, rtol=1e-12, equal_nan=True)
    np.testing.assert_allclose(s_grad, t_grad, rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(TIE_FUNCTIONS))
def test_ties_and_bounds_as_torch_2_14(device, name):
    fn = TIE_FUNCTIONS[name]
    assert len(TIES[name]) >= 27
    for values, expected in TIES[name]:
        ts = [st.tensor([v], dtype=st.float64, device=device, requires_grad=True) for v in values]
        fn(st, *ts).backward()
        got = [t.grad.item() for t in ts]
        np.testing.assert_allclose(got, expected, equal_nan=True, err_msg=f"{name}{tuple(values)}")


def test_logit_double_backward():
    x = st.tensor([0.2, 0.7, 0.95], dtype=st.float64, requires_grad=True)
    assert st.autograd.gradgradcheck(lambda v: st.logit(v), (x,))
    assert st.autograd.gradgradcheck(lambda v: st.logit(v, 0.1), (x,))


def test_tie_rules_double_backward():
    x = st.tensor([0.2, 0.7, 0.95], dtype=st.float64, requires_grad=True)
    lo = st.tensor([0.1, 0.3, 0.5], dtype=st.float64, requires_grad=True)
    hi = st.tensor([0.9, 0.8, 0.9], dtype=st.float64, requires_grad=True)
    assert st.autograd.gradgradcheck(lambda a, b, c: st.clamp(a, b, c) * a, (x, lo, hi))
    assert st.autograd.gradgradcheck(lambda a, b: st.atan2(a, b), (x, lo))
    assert st.autograd.gradgradcheck(lambda a, b: st.fmax(a, b) * a, (x, lo))
