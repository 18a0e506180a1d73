"""torch.special's i0e, i1, i1e, modified_bessel_i0 / _i1 (Note [Modified Bessel series] in
``strided/special_bessel.py``): values against torch's over the series / asymptote boundary, float32 and float64,
gradients against torch's formulas, dtype promotion, out=, meta shapes."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st

NAMES = ["i0e", "i1", "i1e", "modified_bessel_i0", "modified_bessel_i1", "spherical_bessel_j0"]
X = np.concatenate([np.linspace(-30, 30, 601), [0.0, -0.0, 1e-300, 1e-8, 0.4999, 0.5, 19.999, 20.0, 20.001, 100.0,
                                                 700.0, -700.0, 710.0, np.inf, -np.inf, np.nan]])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", NAMES)
def test_values_as_torch(name, dtype):
    torch = pytest.importorskip("torch")
    # at +-inf torch's Cephes code gives NaN for I0 / I1, strided +-inf (Note [Modified Bessel series])
    x = X if name in ("i0e", "i1e", "spherical_bessel_j0") else X[~np.isinf(X)]
    t = getattr(torch.special, name)(torch.tensor(x, dtype=getattr(torch, dtype))).double().numpy()
    s = getattr(st.special, name)(st.tensor(x, dtype=getattr(st, dtype))).double().numpy()
    np.testing.assert_allclose(s, t, rtol=2e-15 if dtype == "float64" else 2e-6, atol=0, equal_nan=True)


@pytest.mark.parametrize("name", ["i0e", "i1", "i1e"])
def test_gradients_as_torch(name):
    torch = pytest.importorskip("torch")
    pts = [-25.0, -3.0, -0.5, 0.0, 1e-8, 0.7, 5.0, 19.9, 20.1, 40.0]
    x = torch.tensor(pts, dtype=torch.float64, requires_grad=True)
    getattr(torch.special, name)(x).sum().backward()
    y = st.tensor(pts, dtype=st.float64, requires_grad=True)
    getattr(st.special, name)(y).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), x.grad.numpy(), rtol=1e-13, atol=1e-300)


@pytest.mark.parametrize("name", NAMES)
def test_gradcheck_promotion_out_and_meta(name):
    fn = getattr(st.special, name)
    assert st.autograd.gradcheck(fn, (st.tensor([0.3, -2.0, 25.0], dtype=st.float64, requires_grad=True),))
    assert fn(st.tensor([1, 2])).dtype is st.get_default_dtype()  # integers give the default float, as torch
    out = st.empty(3)
    assert fn(st.tensor([0.5, 1.0, 2.0]), out=out) is out
    np.testing.assert_allclose(out.numpy(), fn(st.tensor([0.5, 1.0, 2.0])).numpy())
    assert fn(st.empty(2, 3, device="meta")).shape == (2, 3)


def test_scaled_forms_stay_finite_where_the_plain_ones_overflow():
    x = st.tensor([800.0, -800.0, float("inf")], dtype=st.float64)
    assert np.isfinite(st.special.i0e(x)[:2].numpy()).all() and st.special.i0e(x)[2].item() == 0.0
    assert np.isfinite(st.special.i1e(x)[:2].numpy()).all()
    assert st.special.i1(x)[0].item() == float("inf") and st.special.i1(x)[1].item() == float("-inf")


@pytest.mark.parametrize("name", [*NAMES, "i0", "entr", "ndtr", "logit"])
def test_bad_input_in_torchs_words(name):
    fn = getattr(st.special, name)
    arg = "x" if name == "spherical_bessel_j0" else "input"
    words = rf"^special_{name}\(\): argument '{arg}' \(position 1\) must be Tensor, not int$"
    with pytest.raises(TypeError, match=words):
        fn(3)
    with pytest.raises(NotImplementedError, match=rf"^\"{name}_cpu\" not implemented for 'ComplexFloat'$"):
        fn(st.tensor([1 + 2j]))  # it used to drop the imaginary part


def test_sinc_of_a_complex_tensor_as_torch():
    torch = pytest.importorskip("torch")
    z = [1 + 2j, 0j, 0.5]
    np.testing.assert_allclose(st.special.sinc(st.tensor(z)).numpy(), torch.special.sinc(torch.tensor(z)).numpy(),
                               rtol=1e-6)
