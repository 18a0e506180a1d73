"""Convolution, pooling and batch norm (``strided/nn/convolution.py``, ``batch_norm.py`` and their
modules) on every available backend: values and gradients against torch (when installed), gradcheck
and shapes without it, torch's reprs, state-dict keys, running statistics and errors."""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

import strided as st
from strided import nn
from strided.autograd import gradcheck
from strided.nn import functional as F
from strided.testing import available_devices

DEVICES = available_devices()
RNG = np.random.default_rng(11)
X4 = RNG.standard_normal((2, 4, 7, 9))
W4 = RNG.standard_normal((6, 2, 3, 2))
B6 = RNG.standard_normal(6)
X3 = RNG.standard_normal((2, 3, 11))
W3 = RNG.standard_normal((4, 3, 3))

CONV2D = [
    {},
    {"stride": 2},
    {"padding": 1},
    {"padding": (2, 1), "dilation": (2, 1)},
    {"stride": (1, 2), "padding": "valid"},
    {"padding": "same", "dilation": 2},
]
CONV1D = [{}, {"stride": 2, "padding": 1}, {"dilation": 2}, {"padding": "same"}]
MAXPOOL = [
    {"kernel_size": 2},
    {"kernel_size": 3, "stride": 2, "padding": 1},
    {"kernel_size": (3, 2), "stride": (2, 3), "ceil_mode": True},
    {"kernel_size": 3, "dilation": 2, "padding": 1},
    {"kernel_size": 2, "stride": 2, "ceil_mode": True, "padding": 1},
]
AVGPOOL = [
    {"kernel_size": 2},
    {"kernel_size": 3, "stride": 2, "padding": 1},
    {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False},
    {"kernel_size": (3, 2), "stride": (2, 3), "ceil_mode": True},
    {"kernel_size": 3, "stride": 2, "ceil_mode": True, "padding": 1, "count_include_pad": False},
    {"kernel_size": 2, "divisor_override": 3},
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kw", CONV2D, ids=str)
def test_conv2d_matches_torch(nn_oracle, device, kw):
    nn_oracle(lambda F, x, w, b: F.conv2d(x, w, b, groups=2, **kw), [X4, W4, B6], device, "float32", grad=(0, 1, 2))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kw", CONV1D, ids=str)
def test_conv1d_matches_torch(nn_oracle, device, kw):
    nn_oracle(lambda F, x, w: F.conv1d(x, w, **kw), [X3, W3], device, "float32", grad=(0, 1))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kw", MAXPOOL, ids=str)
def test_max_pool2d_matches_torch(nn_oracle, device, kw):
    nn_oracle(lambda F, x: F.max_pool2d(x, **kw), [X4], device, "float32")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kw", AVGPOOL, ids=str)
def test_avg_pool2d_matches_torch(nn_oracle, device, kw):
    nn_oracle(lambda F, x: F.avg_pool2d(x, **kw), [X4], device, "float32")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("size", [(1, 1), (3, 4), (2, 3), 5], ids=str)
def test_adaptive_avg_pool2d_matches_torch(nn_oracle, device, size):
    nn_oracle(lambda F, x: F.adaptive_avg_pool2d(x, size), [X4], device, "float32")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("size", [(1, 1, 1), (2, 3, 4), (3, None, 2), 5], ids=str)
def test_adaptive_avg_pool3d_matches_torch(nn_oracle, device, size):
    x5 = RNG.standard_normal((2, 3, 5, 6, 7))
    nn_oracle(lambda F, x: F.adaptive_avg_pool3d(x, size), [x5], device, "float32")
    nn_oracle(lambda F, x: F.adaptive_avg_pool3d(x, size), [x5[0]], device, "float32")  # unbatched


def test_adaptive_pooling_checks():
    with pytest.raises(NotImplementedError, match="\"adaptive_avg_pool2d\" not implemented for 'Long'"):
        F.adaptive_avg_pool2d(st.ones(1, 3, 3, dtype=st.int64), 2)
    with pytest.raises(RuntimeError, match="adaptive_avg_pool3d: output_size must be 3"):
        F.adaptive_avg_pool3d(st.ones(1, 3, 3, 3), (2, 2))
    with pytest.raises(RuntimeError, match="Expected 4D or 5D tensor"):
        F.adaptive_avg_pool3d(st.ones(3, 3), 2)
    assert repr(nn.AdaptiveAvgPool3d((2, None, 3))) == "AdaptiveAvgPool3d(output_size=(2, None, 3))"
    x = st.tensor(RNG.standard_normal((1, 1, 4, 6, 2)), dtype=st.float64, requires_grad=True)
    assert gradcheck(lambda y: F.adaptive_avg_pool3d(y, (3, 4, 1)), (x,))


@pytest.mark.parametrize("device", DEVICES)
def test_1d_pooling_matches_torch(nn_oracle, device):
    nn_oracle(lambda F, x: F.max_pool1d(x, 3, 2, 1), [X3], device, "float32")
    nn_oracle(lambda F, x: F.avg_pool1d(x, 3, 2, 1), [X3], device, "float32")
    nn_oracle(lambda F, x: F.adaptive_avg_pool1d(x, 4), [X3], device, "float32")


@pytest.mark.parametrize("device", [d for d in DEVICES if d != "meta"])
def test_max_pool_indices_match_torch(device):
    torch = pytest.importorskip("torch")
    x = st.tensor(X4, dtype=st.float32, device=device)
    out, idx = F.max_pool2d(x, 3, 2, 1, return_indices=True)
    t_out, t_idx = torch.nn.functional.max_pool2d(torch.tensor(X4, dtype=torch.float32), 3, 2, 1, return_indices=True)
    np.testing.assert_allclose(out.cpu().numpy(), t_out.numpy())
    np.testing.assert_array_equal(idx.cpu().numpy(), t_idx.numpy())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_matches_torch(nn_oracle, device, training):
    rm, rv = RNG.standard_normal(4), RNG.random(4) + 0.5
    nn_oracle(
        lambda F, x, w, b, m=rm, v=rv: F.batch_norm(x, _like(x, m), _like(x, v), w, b, training, 0.2, 1e-3),
        [X4, RNG.standard_normal(4), RNG.standard_normal(4)],
        device,
        "float32",
        grad=(0, 1, 2),
    )


def _like(x, values):
    """A running-statistics buffer of ``values`` in ``x``'s library, dtype and device."""
    if isinstance(x, st.Tensor):
        return st.tensor(values, dtype=x.dtype, device=x.device)
    import torch

    return torch.tensor(values, dtype=x.dtype)


# ------------------------------------------------------------------------------------ without torch
def test_gradcheck_conv_and_pooling():
    x = st.tensor(RNG.standard_normal((1, 2, 5, 4)), dtype=st.float64, requires_grad=True)
    w = st.tensor(RNG.standard_normal((2, 1, 2, 3)), dtype=st.float64, requires_grad=True)
    assert gradcheck(lambda x, w: F.conv2d(x, w, stride=(2, 1), padding=1, groups=2), (x, w))
    assert gradcheck(lambda x: F.max_pool2d(x, 2, 1, ceil_mode=True), (x,))
    assert gradcheck(lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), (x,))
    assert gradcheck(lambda x: F.batch_norm(x, None, None, training=True), (x,))


@pytest.mark.parametrize("device", DEVICES)
def test_shapes_and_unbatched_inputs(device):
    x = st.randn(4, 7, 9, device=device)  # (C, H, W)
    assert F.conv2d(x, st.randn(6, 4, 3, 3, device=device), padding=1).shape == (6, 7, 9)
    assert F.max_pool2d(x, 2).shape == (4, 3, 4)
    assert F.conv1d(st.randn(3, 11, device=device), st.randn(5, 3, 3, device=device)).shape == (5, 9)
    assert nn.AdaptiveAvgPool2d((1, 1)).to(device)(st.randn(2, 4, 7, 9, device=device)).shape == (2, 4, 1, 1)


def test_errors():
    x = st.randn(2, 4, 7, 9)
    with pytest.raises(RuntimeError, match=r"expected input\[2, 4, 7, 9\] to have 3 channels, but got 4 channels"):
        F.conv2d(x, st.randn(6, 3, 3, 3))
    with pytest.raises(RuntimeError, match="Expected 3D \\(unbatched\\) or 4D \\(batched\\) input to conv2d"):
        F.conv2d(st.randn(7, 9), st.randn(6, 3, 3, 3))
    with pytest.raises(RuntimeError, match="padding='same' is not supported for strided convolutions"):
        F.conv2d(x, st.randn(6, 4, 3, 3), stride=2, padding="same")  # torch's functional form: RuntimeError
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel size"):
        F.max_pool2d(x, 2, padding=2)
    with pytest.raises(RuntimeError, match="Kernel size can't be greater than actual input size"):
        F.conv2d(st.randn(1, 1, 2, 2), st.randn(1, 1, 3, 3))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        F.batch_norm(st.randn(1, 3), None, None, training=True)
    with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
        nn.BatchNorm2d(3)(st.randn(2, 3, 4))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 6, 3, groups=2)


# ------------------------------------------------------------------------------------ modules
MODULES = [
    (lambda nn: nn.Conv2d(3, 6, 3), "Conv2d(3, 6, kernel_size=(3, 3), stride=(1, 1))"),
    (
        lambda nn: nn.Conv2d(
            3, 6, (3, 2), stride=2, padding=1, dilation=2, groups=3, bias=False, padding_mode="reflect"
        ),
        "Conv2d(3, 6, kernel_size=(3, 2), stride=(2, 2), padding=(1, 1), dilation=(2, 2), groups=3, bias=False, "
        "padding_mode=reflect)",
    ),
    (lambda nn: nn.Conv1d(3, 6, 3, padding="same"), "Conv1d(3, 6, kernel_size=(3,), stride=(1,), padding=same)"),
    (lambda nn: nn.MaxPool2d(2), "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"),
    (lambda nn: nn.AvgPool2d(3, 2, 1, count_include_pad=False), "AvgPool2d(kernel_size=3, stride=2, padding=1)"),
    (lambda nn: nn.AdaptiveAvgPool2d((1, 1)), "AdaptiveAvgPool2d(output_size=(1, 1))"),
    (
        lambda nn: nn.BatchNorm2d(16),
        "BatchNorm2d(16, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)",
    ),
    (
        lambda nn: nn.BatchNorm1d(4, affine=False, momentum=None),
        "BatchNorm1d(4, eps=1e-05, momentum=None, affine=False, bias=False, track_running_stats=True)",
    ),
    (lambda nn: nn.MaxPool1d(3), "MaxPool1d(kernel_size=3, stride=3, padding=0, dilation=1, ceil_mode=False)"),
    (lambda nn: nn.AvgPool1d(3), "AvgPool1d(kernel_size=(3,), stride=(3,), padding=(0,))"),
]


@pytest.mark.parametrize("make,text", MODULES, ids=[t.split("(")[0] for _, t in MODULES])
def test_module_reprs(make, text):
    assert repr(make(nn)) == text


@pytest.mark.parametrize("make,text", MODULES, ids=[t.split("(")[0] for _, t in MODULES])
def test_module_reprs_and_state_dicts_match_torch(make, text):
    torch = pytest.importorskip("torch")
    if "BatchNorm" in text and "bias" not in inspect.signature(torch.nn.BatchNorm2d).parameters:
        text = text.replace(" bias=True,", "").replace(" bias=False,", "")  # torch < 2.13 has no bias= (nor prints it)
    assert repr(make(torch.nn)) == text
    assert list(make(nn).state_dict()) == list(make(torch.nn).state_dict())


@pytest.mark.parametrize("device", [d for d in DEVICES if d != "meta"])
@pytest.mark.parametrize("padding_mode", ["zeros", "reflect", "circular"])
def test_conv_module_forward_matches_torch(device, padding_mode):
    torch = pytest.importorskip("torch")
    t = torch.nn.Conv2d(4, 6, 3, padding=1, groups=2, padding_mode=padding_mode).double()
    m = nn.Conv2d(4, 6, 3, padding=1, groups=2, padding_mode=padding_mode)
    m.load_state_dict({k: st.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    m = m.double().to(device)
    np.testing.assert_allclose(
        m(st.tensor(X4, device=device)).cpu().detach().numpy(),
        t(torch.tensor(X4)).detach().numpy(),
        rtol=1e-10,
        atol=1e-10,
    )


@pytest.mark.parametrize("device", [d for d in DEVICES if d != "meta"])
@pytest.mark.parametrize("momentum", [0.1, None])
def test_batchnorm_module_tracks_running_statistics_as_torch(device, momentum):
    torch = pytest.importorskip("torch")
    t, m = torch.nn.BatchNorm2d(4, momentum=momentum).double(), nn.BatchNorm2d(4, momentum=momentum).double().to(device)
    for step in range(3):
        x = RNG.standard_normal((3, 4, 5, 2)) + step
        np.testing.assert_allclose(
            m(st.tensor(x, device=device)).cpu().detach().numpy(),
            t(torch.tensor(x)).detach().numpy(),
            rtol=1e-10,
            atol=1e-10,
        )
    for name in ("running_mean", "running_var"):
        np.testing.assert_allclose(getattr(m, name).cpu().numpy(), getattr(t, name).numpy(), rtol=1e-12)
    assert int(m.num_batches_tracked.item()) == 3
    m.eval()
    t.eval()
    x = RNG.standard_normal((2, 4, 5, 2))
    np.testing.assert_allclose(
        m(st.tensor(x, device=device)).cpu().detach().numpy(),
        t(torch.tensor(x)).detach().numpy(),
        rtol=1e-10,
        atol=1e-10,
    )


@pytest.mark.parametrize("device", [d for d in DEVICES if d != "meta"])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_half_inputs_keep_float32_statistics_as_torch(device, training):
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((8, 4, 5, 5)) * 3 + 100  # a large mean: bfloat16 statistics would lose it
    rm, rv = st.zeros(4, device=device), st.ones(4, device=device)
    t_rm, t_rv = torch.zeros(4), torch.ones(4)
    out = F.batch_norm(st.tensor(x, dtype=st.bfloat16, device=device), rm, rv, training=training)
    ref = torch.nn.functional.batch_norm(torch.tensor(x, dtype=torch.bfloat16), t_rm, t_rv, training=training)
    assert out.dtype is st.bfloat16 and rm.dtype is st.float32
    np.testing.assert_allclose(out.float().cpu().numpy(), ref.float().numpy(), atol=2e-2)
    np.testing.assert_allclose(rm.cpu().numpy(), t_rm.numpy(), rtol=1e-6)
    np.testing.assert_allclose(rv.cpu().numpy(), t_rv.numpy(), rtol=1e-5)


# ------------------------------------------------------------------------------------ group norm
@pytest.mark.parametrize("device", DEVICES)
def test_group_norm_matches_torch(nn_oracle, device):
    x = RNG.standard_normal((2, 6, 4, 3))
    nn_oracle(
        lambda F, x, w, b: F.group_norm(x, 3, w, b),
        [x, RNG.standard_normal(6), RNG.standard_normal(6)],
        device,
        "float32",
        grad=(0, 1, 2),
    )
    nn_oracle(lambda F, x: F.group_norm(x, 6, eps=1e-3), [RNG.standard_normal((3, 6, 5))], device, "float32")


def test_group_norm_gradcheck_errors_and_module():
    x = st.tensor(RNG.standard_normal((2, 4, 3)), dtype=st.float64, requires_grad=True)
    assert gradcheck(lambda x: F.group_norm(x, 2), (x,))
    with pytest.raises(RuntimeError, match=r"but got input of shape \[2, 6, 4\] and num_groups=4"):
        F.group_norm(st.ones(2, 6, 4), 4)
    with pytest.raises(ValueError, match=r"num_channels \(6\) must be divisible by num_groups \(4\)"):
        nn.GroupNorm(4, 6)
    m = nn.GroupNorm(2, 6)
    assert repr(m) == "GroupNorm(2, 6, eps=1e-05, affine=True, bias=True)" and list(m.state_dict()) == [
        "weight",
        "bias",
    ]
    out = m(st.randn(3, 6, 5)).detach()
    np.testing.assert_allclose(out.reshape(3, 2, -1).mean(-1).numpy(), 0, atol=1e-5)


# ------------------------------------------------------------------------------------ interpolate
INTERP4 = [
    {"scale_factor": 2},
    {"size": (5, 3)},
    {"scale_factor": 1.5},
    {"size": (7, 9), "mode": "nearest-exact"},
    {"size": (5, 3), "mode": "bilinear"},
    {"size": (5, 3), "mode": "bilinear", "align_corners": True},
    {"scale_factor": 1.7, "mode": "bilinear"},
    {"scale_factor": (2, 0.5), "mode": "bilinear"},
    {"scale_factor": 1.7, "mode": "bilinear", "recompute_scale_factor": True},
    {"size": (7, 9), "mode": "bicubic"},
    {"size": (3, 4), "mode": "bicubic", "align_corners": True},
    {"scale_factor": (1.5, 0.5), "mode": "bicubic"},
    {"size": (2, 3), "mode": "area"},
    {"scale_factor": 0.5, "mode": "area"},
    {"size": (5, 9), "mode": "area"},
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kw", INTERP4, ids=str)
def test_interpolate_matches_torch(nn_oracle, device, kw):
    # torch computes the source positions in float32 (its opmath type), strided in float64: outputs of O(1) inputs
    # differ by up to ~2e-6 (the draws from the shared RNG depend on which tests ran before, so the margin must
    # hold for any input, not just the usual one)
    nn_oracle(lambda F, x: F.interpolate(x, **kw), [RNG.standard_normal((2, 3, 4, 6))], device, "float32", atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_interpolate_1d_and_3d_match_torch(nn_oracle, device):
    nn_oracle(lambda F, x: F.interpolate(x, size=7, mode="linear"), [RNG.standard_normal((2, 3, 9))], device, "float32")
    nn_oracle(
        lambda F, x: F.interpolate(x, scale_factor=0.6, mode="linear", align_corners=True),
        [RNG.standard_normal((2, 3, 9))],
        device,
        "float32",
    )
    nn_oracle(lambda F, x: F.interpolate(x, size=4, mode="area"), [RNG.standard_normal((2, 3, 9))], device, "float32")
    nn_oracle(lambda F, x: F.interpolate(x, size=(2, 3, 5), mode="area"), [RNG.standard_normal((1, 2, 4, 6, 7))],
              device, "float32")
    nn_oracle(
        lambda F, x: F.interpolate(x, size=(3, 4, 5), mode="trilinear"),
        [RNG.standard_normal((1, 2, 2, 3, 4))],
        device,
        "float32",
    )


def test_interpolate_errors_and_gradcheck():
    x = st.randn(1, 1, 3, 4)
    with pytest.raises(ValueError, match="either size or scale_factor should be defined"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="only one of size or scale_factor should be defined"):
        F.interpolate(x, size=3, scale_factor=2)
    with pytest.raises(NotImplementedError, match="Got 3D input, but bilinear mode needs 4D input"):
        F.interpolate(st.ones(1, 2, 3), size=4, mode="bilinear")
    with pytest.raises(ValueError, match="align_corners option can only be set with the interpolating modes"):
        F.interpolate(x, size=3, align_corners=True)
    with pytest.raises(ValueError, match="Anti-alias option is restricted to bilinear and bicubic modes"):
        F.interpolate(x, size=(2, 2), mode="nearest", antialias=True)
    with pytest.raises(NotImplementedError, match="Got 3D input, but bicubic mode needs 4D input"):
        F.interpolate(st.ones(1, 2, 3), size=4, mode="bicubic")
    y = st.tensor(RNG.standard_normal((1, 2, 3, 4)), dtype=st.float64, requires_grad=True)
    assert gradcheck(lambda y: F.interpolate(y, scale_factor=1.5, mode="bilinear"), (y,))
    assert gradcheck(lambda y: F.interpolate(y, size=(5, 3), mode="bicubic"), (y,))
    assert gradcheck(lambda y: F.interpolate(y, size=(2, 3), mode="area"), (y,))


def test_bicubic_keeps_constants_and_area_averages():
    const = st.full((1, 2, 4, 5), 3.0)
    np.testing.assert_allclose(F.interpolate(const, size=(9, 7), mode="bicubic").numpy(), 3.0, rtol=1e-6)
    x = RNG.standard_normal((1, 1, 4, 6)).astype(np.float32)
    got = F.interpolate(st.tensor(x), scale_factor=0.5, mode="area").numpy()
    np.testing.assert_allclose(got, x.reshape(1, 1, 2, 2, 3, 2).mean((3, 5)), rtol=1e-6)
    up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)
    assert tuple(up(st.tensor(x)).shape) == (1, 1, 8, 12)
    assert "scale_factor=2.0, mode='bilinear'" in repr(up)
    np.testing.assert_allclose(nn.UpsamplingBilinear2d(scale_factor=2)(st.tensor(x)).numpy(), up(st.tensor(x)).numpy())
    assert tuple(nn.UpsamplingNearest2d(size=(3, 3))(st.tensor(x)).shape) == (1, 1, 3, 3)


BAD_INPUTS = [
    (lambda: F.conv2d(X, [1]), TypeError, "conv2d(): argument 'weight' (position 2) must be Tensor, not list"),
    (lambda: F.conv2d(X, st.randn(2, 3, 2, 2), padding=-1), RuntimeError, "negative padding is not supported"),
    (lambda: F.conv2d(X, st.randn(2, 3, 0, 2)), RuntimeError, "has a kernel dimension of size 0"),
    (lambda: F.conv2d(X, st.randn(2, 3, 2, 2), dilation=0), RuntimeError, "non-positive dilation is not supported"),
    (lambda: F.conv2d(X, st.randn(2, 3, 2, 2), dilation=-1), RuntimeError, "dilation should be greater than zero"),
    (lambda: F.max_pool2d(X, 0), RuntimeError, "stride should not be zero"),
    (lambda: F.max_pool2d(X, 2, padding=-1), RuntimeError, "pad must be non-negative, but got pad: -1"),
    (lambda: F.avg_pool2d(X, "a"), TypeError, "avg_pool2d(): argument 'kernel_size' must be tuple of ints, not str"),
    (lambda: F.adaptive_avg_pool2d(X, -1), RuntimeError, "adaptive_avg_pool2d: elements of output_size must be greater "
     "than or equal to 0 but received {-1, -1}"),
    (lambda: F.interpolate(X, size=(-1, 2)), RuntimeError, "output (H: -1, W: 2)"),
    (lambda: F.interpolate(X, scale_factor=0), RuntimeError, "Input and output sizes should be greater than 0"),
    (lambda: F.interpolate(X, size=2.5), TypeError, "interpolate(): size must be int or tuple of ints"),
    (lambda: F.interpolate([1], size=2), TypeError, "interpolate(): argument 'input' must be Tensor"),
    (lambda: F.group_norm(X, 0), ValueError, "group_norm(): num_groups must be a positive integer, got 0"),
    (lambda: F.batch_norm([1], None, None), TypeError, "batch_norm(): argument 'input' must be Tensor"),
]
X = st.randn(2, 3, 4, 5)


@pytest.mark.parametrize("call,exc,message", BAD_INPUTS, ids=[m[:40] for _, _, m in BAD_INPUTS])
def test_bad_inputs_are_refused_with_the_op_and_value(call, exc, message):
    with pytest.raises(exc, match=re.escape(message)):
        call()
    assert F.adaptive_avg_pool2d(X, (None, 2)).shape == (2, 3, 4, 2)  # None keeps that input size
