"""InverseGamma against torch (values, gradients, shapes, validation), a closed form and Monte Carlo, on every
device."""

from __future__ import annotations

import math

import numpy as np
import pytest

import strided as st
from strided import distributions as D
from strided.testing import available_devices

DEVICES = available_devices()
DATA_DEVICES = [d for d in DEVICES if d != "meta"]
C = np.array([[0.7, 2.5, 3.2], [1.5, 4.0, 0.9]])
R = np.array([1.3, 0.4, 2.0])
X = np.array([0.5, 1.7, 3.0])


def _t(a, device, grad=False):
    t = st.tensor(np.asarray(a), device=device)
    return t.requires_grad_() if grad else t


def _host(t):
    return np.asarray(t.detach().cpu().numpy())


@pytest.mark.parametrize("device", DEVICES)
def test_shapes_and_expand(device):
    d = D.InverseGamma(_t(C, device), _t(R, device))
    assert d.batch_shape == (2, 3) and d.event_shape == ()
    assert tuple(d.rsample((5,)).shape) == (5, 2, 3)
    e = d.expand((4, 2, 3))
    assert isinstance(e, D.InverseGamma) and e.batch_shape == (4, 2, 3) and tuple(e.sample().shape) == (4, 2, 3)
    assert d.has_rsample and repr(d) == "InverseGamma()"


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_closed_form_log_prob(device):
    d = D.InverseGamma(_t(C, device), _t(R, device))
    lgamma = np.vectorize(math.lgamma)
    want = C * np.log(R) - lgamma(C) - (C + 1) * np.log(X) - R / X
    np.testing.assert_allclose(_host(d.log_prob(_t(X, device))), want, rtol=1e-12)


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_matches_torch(device):
    torch = pytest.importorskip("torch")
    sc, sr = _t(C, device, True), _t(R, device, True)
    tc, tr = torch.tensor(C, requires_grad=True), torch.tensor(R, requires_grad=True)
    s, t = D.InverseGamma(sc, sr), torch.distributions.InverseGamma(tc, tr)
    for name in ("mean", "mode", "variance"):
        np.testing.assert_allclose(_host(getattr(s, name)), getattr(t, name).detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(_host(s.entropy()), t.entropy().detach().numpy(), rtol=1e-12)
    (s.log_prob(_t(X, device)).sum() + s.entropy().sum()).backward()
    (t.log_prob(torch.tensor(X)).sum() + t.entropy().sum()).backward()
    # the entropy's concentration gradient holds a trigamma: torch's is ~4e-10 off mpmath's, strided's ~1e-16
    np.testing.assert_allclose(_host(sc.grad), tc.grad.numpy(), rtol=1e-8)
    np.testing.assert_allclose(_host(sr.grad), tr.grad.numpy(), rtol=1e-10)


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_sample_moments(device):
    st.manual_seed(3)
    d = D.InverseGamma(_t(np.array([5.0, 9.0]), device), _t(np.array([2.0, 1.0]), device))
    x = _host(d.sample((200000,)))
    mean = np.array([2.0 / 4, 1.0 / 8])
    sd = np.sqrt(np.array([4.0 / (16 * 3), 1.0 / (64 * 7)]))
    assert np.all(np.abs(x.mean(0) - mean) < 5 * sd / math.sqrt(x.shape[0]))
    assert np.all(x > 0)


def test_validation():
    with pytest.raises(ValueError, match="to satisfy the constraint GreaterThan"):
        D.InverseGamma(st.tensor(-1.0), st.tensor(1.0), validate_args=True)
    with pytest.raises(ValueError, match="support"):
        D.InverseGamma(st.tensor(2.0), st.tensor(1.0), validate_args=True).log_prob(st.tensor(-1.0))
