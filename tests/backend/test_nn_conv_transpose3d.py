"""3-d transposed convolution (``strided/nn/convolution_transpose3d.py``, ``nn.ConvTranspose3d``) on every available
backend: values and gradients against torch (when installed), the adjoint of conv3d and gradcheck without it, the
module's parameters, repr, ``output_size`` and torch's errors."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import strided as st
from strided import nn
from strided.autograd import gradcheck
from strided.nn import functional as F
from strided.testing import available_devices

DEVICES = available_devices()
RNG = np.random.default_rng(31)

CASES = [
    {},
    {"stride": 2},
    {"stride": 2, "padding": 1, "output_padding": 1},
    {"stride": (2, 1, 3), "padding": (1, 0, 2), "dilation": (1, 2, 1), "output_padding": (1, 0, 2)},
    {"groups": 2},
    {"stride": 3, "padding": 2, "groups": 2, "dilation": 2, "output_padding": 2},
    {"padding": (0, 1, 1), "dilation": (2, 1, 1), "output_padding": (1, 0, 0)},  # output_padding < dilation
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kw", CASES, ids=str)
def test_conv_transpose3d_matches_torch(nn_oracle, device, kw):
    g = kw.get("groups", 1)
    nn_oracle(
        lambda F, x, w, b: F.conv_transpose3d(x, w, b, **kw),
        [RNG.standard_normal((2, 4, 3, 4, 5)), RNG.standard_normal((4, 6 // g, 3, 2, 2)), RNG.standard_normal(6)],
        device,
        "float32",
        grad=(0, 1, 2),
    )


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kw", [{}, {"stride": 2, "padding": 1, "output_padding": 1}, {"dilation": 2, "groups": 2}],
                         ids=str)
def test_unbatched_conv_transpose3d_matches_torch(nn_oracle, device, kw):
    g = kw.get("groups", 1)
    nn_oracle(lambda F, x, w: F.conv_transpose3d(x, w, **kw),
              [RNG.standard_normal((4, 3, 2, 4)), RNG.standard_normal((4, 6 // g, 2, 3, 2))], device, "float32",
              grad=(0, 1))


@pytest.mark.parametrize("device", DEVICES)
def test_conv_transpose3d_of_a_non_contiguous_input_and_an_empty_batch(nn_oracle, device):
    x = RNG.standard_normal((2, 5, 3, 4, 4))  # used as its (2, 4, 3, 5, 4) transpose
    nn_oracle(lambda F, x, w: F.conv_transpose3d(x.transpose(1, 3), w, stride=(1, 2, 1), padding=1),
              [x, RNG.standard_normal((4, 2, 2, 3, 2))], device, "float64", grad=(0, 1))
    out = F.conv_transpose3d(st.zeros(0, 4, 3, 3, 3, device=device), st.zeros(4, 2, 2, 2, 2, device=device))
    assert tuple(out.shape) == (0, 2, 4, 4, 4) and out.device.type == device


def test_conv_transpose3d_is_the_adjoint_of_conv3d_and_gradchecks():
    # <conv3d(y, w), x> == <y, conv_transpose3d(x, w)>: the transposed convolution is conv3d's adjoint
    kw = {"stride": (2, 1, 2), "padding": (1, 0, 1), "dilation": (1, 2, 1), "groups": 2}
    y = st.tensor(RNG.standard_normal((2, 4, 7, 8, 7)))
    w = st.tensor(RNG.standard_normal((6, 2, 3, 2, 3)))
    conv = F.conv3d(y, w, **kw)
    x = st.tensor(RNG.standard_normal(tuple(conv.shape)))
    back = F.conv_transpose3d(x, w, output_padding=(0, 0, 0), **kw)
    assert tuple(back.shape) == (2, 4, 7, 8, 7)
    lhs, rhs = float((conv * x).sum()), float((y * back).sum())
    assert abs(lhs - rhs) < 1e-9 * max(1.0, abs(lhs))
    args = (st.tensor(RNG.standard_normal((1, 2, 2, 2, 1)), requires_grad=True),
            st.tensor(RNG.standard_normal((2, 1, 2, 1, 2)), requires_grad=True),
            st.tensor(RNG.standard_normal(2), requires_grad=True))
    assert gradcheck(lambda x, w, b: F.conv_transpose3d(x, w, b, stride=2, padding=(1, 0, 0), output_padding=1,
                                                        groups=2), args)


def _x(*shape):
    return st.ones(*shape)


W = st.ones(4, 3, 2, 2, 2)
X = st.ones(1, 4, 3, 3, 3)

ERRORS = [
    (lambda: F.conv_transpose3d(_x(4, 3, 3), W), RuntimeError,
     r"Expected 4D \(unbatched\) or 5D \(batched\) input to conv_transpose3d, but got input of size: \[4, 3, 3\]"),
    (lambda: F.conv_transpose3d(_x(1, 3, 3, 3, 3), W), RuntimeError,
     r"Given transposed=1, weight of size \[4, 3, 2, 2, 2\], expected input\[1, 3, 3, 3, 3\] to have 4 channels, "
     r"but got 3 channels instead"),
    (lambda: F.conv_transpose3d(X, _x(4, 3, 2, 2)), RuntimeError,
     r"conv_transpose3d: expected a 5-D weight \(in_channels, out_channels/groups, kD, kH, kW\), got weight of size "
     r"\[4, 3, 2, 2\]"),
    (lambda: F.conv_transpose3d(X, W, groups=3), RuntimeError,
     r"Given groups=3, expected weight to be divisible by 3 at dimension 0, but got weight of size "
     r"\[\[4, 3, 2, 2, 2\]\] instead"),
    (lambda: F.conv_transpose3d(X, W, groups=8), RuntimeError,
     r"Given groups=8, expected weight to be at least 8 at dimension 0"),
    (lambda: F.conv_transpose3d(X, W, groups=0), RuntimeError, "non-positive groups is not supported"),
    (lambda: F.conv_transpose3d(X, W, groups=1.5), TypeError,
     r"conv_transpose3d\(\): argument 'groups' must be int, not float"),
    (lambda: F.conv_transpose3d(X, W, bias=_x(3, 1)), RuntimeError,
     r"expected bias to be 1-dimensional with 3 elements, but got bias of size \[3, 1\] instead"),
    (lambda: F.conv_transpose3d(X, W, stride=(1, 0, 1)), RuntimeError, "non-positive stride is not supported"),
    (lambda: F.conv_transpose3d(X, W, padding=(0, -1, 0)), RuntimeError, "negative padding is not supported"),
    (lambda: F.conv_transpose3d(X, W, output_padding=-1), RuntimeError,
     "negative output_padding is not supported"),
    (lambda: F.conv_transpose3d(X, W, dilation=(1, 0, 1)), RuntimeError,
     "dilation should be greater than zero, but got dilation_depth: 1, dilation_height: 0, dilation_width: 1"),
    (lambda: F.conv_transpose3d(X, W, stride=(2, 3, 4), output_padding=(1, 3, 1)), RuntimeError,
     "output padding must be smaller than either stride or dilation, but got output_padding_depth: 1 "
     "output_padding_height: 3 output_padding_width: 1 stride_depth: 2 stride_height: 3 stride_width: 4 "
     "dilation_depth: 1 dilation_height: 1 dilation_width: 1"),
    (lambda: F.conv_transpose3d(X, W, padding=(0, 5, 0)), RuntimeError,
     r"Given input size per channel: \(3 x 3 x 3\). Calculated output size per channel: \(4 x -6 x 4\). "
     "Output size is too small"),
    (lambda: F.conv_transpose3d(X, W, stride=(1, 2)), RuntimeError,
     r"expected stride to be a single integer value or a list of 3 values to match the convolution dimensions, but "
     r"got stride=\[1, 2\]"),
    (lambda: F.conv_transpose3d(X, W, stride=1.0), TypeError,
     r"conv_transpose3d\(\): argument 'stride' must be tuple of ints, not float"),
    (lambda: F.conv_transpose3d(X, W, padding="same"), TypeError,
     r"conv_transpose3d\(\): argument 'padding' must be tuple of ints, not str"),
    (lambda: F.conv_transpose3d([1.0], W), TypeError,
     r"conv_transpose3d\(\): argument 'input' must be Tensor, not list"),
    (lambda: F.conv_transpose3d(X, _x(4, 3, 0, 2, 2)), RuntimeError,
     r"non-empty 5D \(n_output_plane x n_input_plane x kernel_depth x kernel_height x kernel_width\) tensor expected "
     r"for weight, but got: \[4, 3, 0, 2, 2\]"),
    (lambda: F.conv_transpose3d(_x(1, 4, 0, 3, 3), W), RuntimeError,
     r"Only zero batch or zero channel inputs are supported, but got input shape: \[1, 4, 0, 3, 3\]"),
    (lambda: nn.ConvTranspose3d(4, 6, 3, padding_mode="reflect"), ValueError,
     'Only "zeros" padding mode is supported for ConvTranspose3d'),
    (lambda: nn.ConvTranspose3d(4, 6, 3, stride=2)(_x(1, 4, 3, 3, 3), output_size=[9, 7, 6]), ValueError,
     r"requested an output size of \[9, 7, 6\], but valid sizes range from \[7, 7, 7\] to \[8, 8, 8\] "
     r"\(for an input of strided.Size\(\[3, 3, 3\]\)\)"),
    (lambda: nn.ConvTranspose3d(4, 6, 3)(_x(1, 4, 3, 3, 3), output_size=[5, 5]), ValueError,
     r"ConvTranspose3D: for 5D input, output_size must have 3 or 5 elements \(got 2\)"),
]


@pytest.mark.parametrize("call,error,text", ERRORS, ids=range(len(ERRORS)))
def test_conv_transpose3d_errors_in_torchs_words(call, error, text):
    with pytest.raises(error, match=text):
        call()


def test_conv_transpose3d_module_repr_and_parameters():
    def make(nn):
        return nn.ConvTranspose3d(4, 6, (3, 2, 2), stride=2, padding=1, output_padding=1, groups=2, bias=False,
                                  dilation=(2, 1, 2))

    text = ("ConvTranspose3d(4, 6, kernel_size=(3, 2, 2), stride=(2, 2, 2), padding=(1, 1, 1), dilation=(2, 1, 2), "
            "output_padding=(1, 1, 1), groups=2, bias=False)")
    m = make(nn)
    assert repr(m) == text
    assert {k: tuple(v.shape) for k, v in m.state_dict().items()} == {"weight": (4, 3, 3, 2, 2)}  # (in, out / groups)
    plain = nn.ConvTranspose3d(4, 6, 3)
    assert repr(plain) == "ConvTranspose3d(4, 6, kernel_size=(3, 3, 3), stride=(1, 1, 1))"
    # torch's init: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with fan_in = weight.size(1) * prod(kernel) = 6 * 27
    bound = 1 / np.sqrt(6 * 27)
    assert 0.5 * bound < float(abs(plain.weight).max()) <= bound  # 648 draws: the max is near the bound
    assert float(abs(plain.bias).max()) <= bound
    assert "output_size" in inspect.signature(type(m).forward).parameters
    torch = pytest.importorskip("torch")
    assert repr(make(torch.nn)) == text
    assert list(plain.state_dict()) == list(torch.nn.ConvTranspose3d(4, 6, 3).state_dict())


@pytest.mark.parametrize("device", [d for d in DEVICES if d != "meta"])
def test_conv_transpose3d_module_with_torchs_state_dict_matches_torch(device):
    torch = pytest.importorskip("torch")
    t = torch.nn.ConvTranspose3d(4, 6, (3, 2, 3), stride=(2, 2, 1), padding=(1, 0, 1), groups=2).double()
    m = nn.ConvTranspose3d(4, 6, (3, 2, 3), stride=(2, 2, 1), padding=(1, 0, 1), groups=2)
    m.load_state_dict({k: st.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    m = m.double().to(device)
    x = RNG.standard_normal((2, 4, 3, 4, 3))
    for size in (None, [6, 9, 3], [2, 6, 5, 8, 3]):
        np.testing.assert_allclose(m(st.tensor(x, device=device), output_size=size).detach().cpu().numpy(),
                                   t(torch.tensor(x), output_size=size).detach().numpy(), rtol=1e-10, atol=1e-10)
    out = m(st.tensor(x[0], device=device))  # unbatched
    np.testing.assert_allclose(out.detach().cpu().numpy(), t(torch.tensor(x[0])).detach().numpy(), rtol=1e-10,
                               atol=1e-10)
