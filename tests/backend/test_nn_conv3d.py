"""The 3-d layers -- conv3d / nn.Conv3d (``strided/nn/convolution3d.py``), max_pool3d / avg_pool3d and their
modules (``pooling3d.py``), BatchNorm3d -- on every available backend: values and gradients against torch (when
installed), gradcheck without it, torch's reprs, state-dict keys and errors."""

from __future__ import annotations

import re

import numpy as np
import pytest

import strided as st
from strided import nn
from strided.autograd import gradcheck
from strided.nn import functional as F
from strided.testing import available_devices

DEVICES = available_devices()
RNG = np.random.default_rng(13)
X5 = RNG.standard_normal((2, 4, 5, 6, 7))
W5 = RNG.standard_normal((6, 2, 3, 2, 3))
B6 = RNG.standard_normal(6)
W_UNBATCHED = RNG.standard_normal((3, 4, 2, 2, 3))

CONV3D = [
    {},
    {"stride": 2},
    {"padding": 1},
    {"stride": (1, 2, 3), "padding": (2, 1, 0), "dilation": (1, 2, 1)},
    {"padding": "valid"},
    {"padding": "same", "dilation": 2},
]


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kw", CONV3D, ids=str)
def test_conv3d_matches_torch(nn_oracle, device, kw):
    nn_oracle(lambda F, x, w, b: F.conv3d(x, w, b, groups=2, **kw), [X5, W5, B6], device, "float32", grad=(0, 1, 2))


@pytest.mark.parametrize("device", DEVICES)
def test_unbatched_conv3d_matches_torch(nn_oracle, device):
    nn_oracle(lambda F, x, w: F.conv3d(x, w, padding=1), [X5[0], W_UNBATCHED], device, "float32", grad=(0, 1))


def test_conv3d_gradcheck_without_torch():
    x = st.tensor(RNG.standard_normal((1, 2, 3, 4, 3))).requires_grad_()
    w = st.tensor(RNG.standard_normal((2, 1, 2, 2, 2))).requires_grad_()
    b = st.tensor(RNG.standard_normal(2)).requires_grad_()
    assert gradcheck(lambda x, w, b: F.conv3d(x, w, b, stride=(1, 2, 1), padding=1, groups=2), (x, w, b))


def test_conv3d_module_repr_state_dict_and_forward():
    m = nn.Conv3d(4, 6, (3, 2, 3), stride=2, padding=1, groups=2, bias=False)
    assert repr(m) == "Conv3d(4, 6, kernel_size=(3, 2, 3), stride=(2, 2, 2), padding=(1, 1, 1), groups=2, bias=False)"
    assert {k: tuple(v.shape) for k, v in m.state_dict().items()} == {"weight": (6, 2, 3, 2, 3)}
    assert tuple(m(st.zeros(2, 4, 5, 6, 7)).shape) == (2, 6, 3, 4, 4)
    torch = pytest.importorskip("torch")
    t = torch.nn.Conv3d(4, 6, 3, padding=1).double()
    s = nn.Conv3d(4, 6, 3, padding=1).double()
    s.load_state_dict({k: st.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    np.testing.assert_allclose(s(st.tensor(X5)).detach().numpy(), t(torch.tensor(X5)).detach().numpy(), rtol=1e-10,
                               atol=1e-12)


def test_conv3d_errors():
    x, w = st.zeros(1, 4, 3, 3, 3), st.zeros(6, 2, 2, 2, 2)
    with pytest.raises(RuntimeError, match=r"Expected 4D \(unbatched\) or 5D \(batched\) input to conv3d"):
        F.conv3d(st.zeros(4, 3, 3), w)
    with pytest.raises(RuntimeError, match="expected input\\[1, 4, 3, 3, 3\\] to have 2 channels, but got 4"):
        F.conv3d(x, w)
    with pytest.raises(RuntimeError, match="Kernel size can't be greater than actual input size"):
        F.conv3d(x, st.zeros(6, 4, 4, 2, 2))
    with pytest.raises(RuntimeError, match="padding='same' is not supported for strided convolutions"):
        F.conv3d(x, w, groups=2, stride=2, padding="same")
    with pytest.raises(RuntimeError, match="expected stride to be a single integer value or a list of 3 values"):
        F.conv3d(x, w, groups=2, stride=(1, 2))
    with pytest.raises(TypeError, match="conv3d\\(\\): argument 'weight' \\(position 2\\) must be Tensor, not list"):
        F.conv3d(x, [1.0])


MAXPOOL3D = [
    {"kernel_size": 2},
    {"kernel_size": 3, "stride": 2, "padding": 1},
    {"kernel_size": (3, 2, 3), "stride": (2, 3, 1), "ceil_mode": True},
    {"kernel_size": 3, "dilation": 2, "padding": 1},
]
AVGPOOL3D = [
    {"kernel_size": 2},
    {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False},
    {"kernel_size": (3, 2, 3), "stride": (2, 3, 1), "ceil_mode": True},
    {"kernel_size": 2, "divisor_override": 3},
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kw", MAXPOOL3D, ids=str)
def test_max_pool3d_matches_torch(nn_oracle, device, kw):
    nn_oracle(lambda F, x: F.max_pool3d(x, **kw), [X5], device, "float32")


@pytest.mark.parametrize("device", [d for d in DEVICES if d != "meta"])
def test_max_pool3d_indices_match_torch(device):
    torch = pytest.importorskip("torch")
    kw = {"kernel_size": 3, "stride": 2, "padding": 1, "dilation": (1, 2, 1)}
    _, s_idx = F.max_pool3d(st.tensor(X5, device=device), return_indices=True, **kw)
    _, t_idx = torch.nn.functional.max_pool3d(torch.tensor(X5), return_indices=True, **kw)
    np.testing.assert_array_equal(s_idx.numpy(force=True), t_idx.numpy())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kw", AVGPOOL3D, ids=str)
def test_avg_pool3d_matches_torch(nn_oracle, device, kw):
    nn_oracle(lambda F, x: F.avg_pool3d(x, **kw), [X5], device, "float32")


def test_pool3d_modules_and_batch_norm3d():
    assert repr(nn.MaxPool3d(3)) == "MaxPool3d(kernel_size=3, stride=3, padding=0, dilation=1, ceil_mode=False)"
    assert repr(nn.AvgPool3d(2, 1)) == "AvgPool3d(kernel_size=2, stride=1, padding=0)"
    assert tuple(nn.MaxPool3d(2)(st.zeros(3, 4, 6, 8)).shape) == (3, 2, 3, 4)  # unbatched
    assert tuple(nn.AvgPool3d(2)(st.zeros(1, 3, 4, 6, 8)).shape) == (1, 3, 2, 3, 4)
    bn = nn.BatchNorm3d(4)
    assert repr(bn) == "BatchNorm3d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)"
    y = bn(st.tensor(X5))
    mean = y.detach().numpy().mean(axis=(0, 2, 3, 4))
    np.testing.assert_allclose(mean, np.zeros(4), atol=1e-6)
    np.testing.assert_allclose(bn.running_mean.numpy(), 0.1 * X5.mean(axis=(0, 2, 3, 4)), rtol=1e-5)
    with pytest.raises(ValueError, match="expected 5D input \\(got 4D input\\)"):
        bn(st.zeros(4, 3, 3, 3))
    with pytest.raises(RuntimeError, match="^pad should be at most half of effective kernel size"):
        F.max_pool3d(st.tensor(X5), 2, padding=2)
    with pytest.raises(RuntimeError, match=re.escape("input image (T: 1 H: 4 W: 4) smaller than kernel size (kT: 2 "
                                                     "kH: 2 kW: 2)")):  # torch's average pool checks this first
        F.avg_pool3d(st.zeros(1, 1, 1, 4, 4), 2)
    with pytest.raises(RuntimeError, match="Output size is too small"):
        F.max_pool3d(st.zeros(1, 1, 1, 4, 4), 2)
