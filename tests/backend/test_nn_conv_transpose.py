"""Transposed convolution (``strided/nn/convolution_transpose.py``, ``nn.ConvTranspose1d/2d``) on every
available backend: values and gradients against torch (when installed), gradcheck without it, the
module's parameters, reprs, ``output_size`` and torch's errors."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

import strided as st
from strided import nn
from strided.autograd import gradcheck
from strided.nn import functional as F
from strided.testing import available_devices

DEVICES = available_devices()
RNG = np.random.default_rng(3)

CASES = [
    {},
    {"stride": 2},
    {"stride": 2, "padding": 1, "output_padding": 1},
    {"stride": (2, 3), "padding": (1, 2), "dilation": (2, 1), "output_padding": (1, 0)},
    {"groups": 2},
    {"stride": 3, "padding": 2, "groups": 2, "dilation": 2, "output_padding": 2},
    {"padding": 1},
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kw", CASES, ids=str)
def test_conv_transpose2d_matches_torch(nn_oracle, device, kw):
    g = kw.get("groups", 1)
    nn_oracle(
        lambda F, x, w, b: F.conv_transpose2d(x, w, b, **kw),
        [RNG.standard_normal((2, 4, 5, 6)), RNG.standard_normal((4, 6 // g, 3, 2)), RNG.standard_normal(6)],
        device,
        "float32",
        grad=(0, 1, 2),
    )


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kw", [{}, {"stride": 2, "padding": 1, "output_padding": 1}, {"dilation": 2, "groups": 2}],
                         ids=str)
def test_conv_transpose1d_and_unbatched_inputs_match_torch(nn_oracle, device, kw):
    g = kw.get("groups", 1)
    nn_oracle(lambda F, x, w: F.conv_transpose1d(x, w, **kw),
              [RNG.standard_normal((3, 4, 7)), RNG.standard_normal((4, 6 // g, 3))], device, "float32", grad=(0, 1))
    nn_oracle(lambda F, x, w: F.conv_transpose2d(x, w, **kw),
              [RNG.standard_normal((4, 5, 3)), RNG.standard_normal((4, 6 // g, 2, 3))], device, "float32", grad=(0, 1))


def test_conv_transpose_is_the_adjoint_of_conv_and_gradchecks():
    # <conv2d(y, w), x> == <y, conv_transpose2d(x, w)>: the transposed convolution is conv's adjoint
    y = st.tensor(RNG.standard_normal((2, 3, 9, 8)))
    w = st.tensor(RNG.standard_normal((4, 3, 3, 2)))
    x = st.tensor(RNG.standard_normal((2, 4, 5, 5)))
    lhs = float((F.conv2d(y, w, stride=2, padding=1) * x).sum())
    rhs = float((y * F.conv_transpose2d(x, w, stride=2, padding=1)).sum())
    assert abs(lhs - rhs) < 1e-9 * max(1.0, abs(lhs))
    args = (st.tensor(RNG.standard_normal((1, 2, 3, 3)), requires_grad=True),
            st.tensor(RNG.standard_normal((2, 2, 2, 2)), requires_grad=True),
            st.tensor(RNG.standard_normal(2), requires_grad=True))
    assert gradcheck(lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1), args)


@settings(max_examples=25, deadline=None)
@given(hs.integers(1, 3), hs.integers(1, 3), hs.integers(0, 2), hs.integers(1, 2), hs.integers(1, 2),
       hs.integers(1, 3), hs.integers(1, 3), hs.integers(0, 5))
def test_conv_transpose_is_the_adjoint_of_conv_for_any_geometry(sh, sw, p, dh, g, kh, kw, extra):
    """<conv2d(y, w), x> == <y, conv_transpose2d(x, w)> over strides, padding, dilation and groups: the
    transposed convolution's output size (output_padding chosen to give y's size) and values."""
    rng = np.random.default_rng(sh * 1000 + sw * 100 + p * 10 + dh + extra)
    h = w = max(dh * (kh - 1) + 1, kw) + extra + 2 * p  # a conv output of at least one position
    y = st.tensor(rng.standard_normal((2, 2 * g, h, w)))
    wt = st.tensor(rng.standard_normal((3 * g, 2, kh, kw)))
    out = F.conv2d(y, wt, stride=(sh, sw), padding=p, dilation=(dh, 1), groups=g)
    oh, ow = out.shape[2], out.shape[3]
    x = st.tensor(rng.standard_normal(tuple(out.shape)))
    op = (h + 2 * p - dh * (kh - 1) - 1 - (oh - 1) * sh, w + 2 * p - (kw - 1) - 1 - (ow - 1) * sw)
    back = F.conv_transpose2d(x, wt, stride=(sh, sw), padding=p, output_padding=op, dilation=(dh, 1), groups=g)
    assert back.shape == y.shape
    lhs, rhs = float((out * x).sum()), float((y * back).sum())
    assert abs(lhs - rhs) <= 1e-9 * max(1.0, abs(lhs))


@pytest.mark.parametrize("call,error,text", [
    (lambda: F.conv_transpose2d(st.ones(4, 5), st.ones(4, 3, 3, 3)), RuntimeError,
     r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv_transpose2d, but got input of size: \[4, 5\]"),
    (lambda: F.conv_transpose2d(st.ones(1, 3, 5, 5), st.ones(4, 3, 3, 3)), RuntimeError,
     r"Given transposed=1, weight of size \[4, 3, 3, 3\], expected input\[1, 3, 5, 5\] to have 4 channels, "
     r"but got 3 channels instead"),
    (lambda: F.conv_transpose2d(st.ones(1, 4, 5, 5), st.ones(4, 3, 3, 3), stride=2, output_padding=2), RuntimeError,
     "output padding must be smaller than either stride or dilation, but got output_padding_height: 2 "
     "output_padding_width: 2 stride_height: 2 stride_width: 2 dilation_height: 1 dilation_width: 1"),
    (lambda: F.conv_transpose2d(st.ones(1, 4, 5, 5), st.ones(4, 3, 3, 3), padding=5), RuntimeError,
     r"Given input size per channel: \(5 x 5\). Calculated output size per channel: \(-3 x -3\). "
     "Output size is too small"),
    (lambda: F.conv_transpose2d(st.ones(1, 4, 5, 5), st.ones(4, 3, 3, 3), groups=3), RuntimeError,
     "Given groups=3, expected weight to be divisible by 3 at dimension 0"),
    (lambda: F.conv_transpose2d(st.ones(1, 4, 5, 5), st.ones(4, 3, 3, 3), bias=st.ones(5)), RuntimeError,
     "expected bias to be 1-dimensional with 3 elements, but got bias of size \\[5\\] instead"),
    (lambda: F.conv_transpose2d(st.ones(1, 4, 5, 5), st.ones(4, 3, 3)), RuntimeError,
     r"conv_transpose2d: expected a 4-D weight"),
    (lambda: F.conv_transpose2d(st.ones(1, 4, 5, 5), st.ones(4, 3, 3, 3), stride=0), RuntimeError,
     "non-positive stride is not supported"),
    (lambda: F.conv_transpose2d(st.ones(1, 4, 5, 5), st.ones(4, 3, 3, 3), padding=-1), RuntimeError,
     "negative padding is not supported"),
    # a 1-d one names its own shapes, not the height-one 2-d ones it runs as
    (lambda: F.conv_transpose1d(st.ones(2, 5, 5), st.ones(2, 3, 3)), RuntimeError,
     r"Given transposed=1, weight of size \[2, 3, 3\], expected input\[2, 5, 5\] to have 2 channels"),
    (lambda: F.conv_transpose1d(st.ones(2, 2, 5), st.ones(2, 3, 3), st.ones(4)), RuntimeError,
     r"Given transposed=1, weight of size \[2, 3, 3\], expected bias to be 1-dimensional with 3 elements"),
    (lambda: F.conv_transpose1d([1.0], st.ones(4, 3, 3)), TypeError,
     r"conv_transpose1d\(\): argument 'input' \(position 1\) must be Tensor, not list"),
    (lambda: nn.ConvTranspose2d(4, 6, 3, padding_mode="reflect"), ValueError,
     'Only "zeros" padding mode is supported for ConvTranspose2d'),
    (lambda: nn.ConvTranspose2d(4, 6, 3, stride=2)(st.ones(1, 4, 5, 5), output_size=[14, 12]), ValueError,
     r"requested an output size of \[14, 12\], but valid sizes range from \[11, 11\] to \[12, 12\] "
     r"\(for an input of strided.Size\(\[5, 5\]\)\)"),
])
def test_conv_transpose_errors(call, error, text):
    with pytest.raises(error, match=text):
        call()


MODULES = [
    (lambda nn: nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2, bias=False, dilation=2),
     "ConvTranspose2d(4, 6, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), dilation=(2, 2), "
     "output_padding=(1, 1), groups=2, bias=False)"),
    (lambda nn: nn.ConvTranspose1d(4, 6, 3), "ConvTranspose1d(4, 6, kernel_size=(3,), stride=(1,))"),
]


@pytest.mark.parametrize("make,text", MODULES, ids=[t.split("(")[0] for _, t in MODULES])
def test_conv_transpose_modules(make, text):
    m = make(nn)
    assert repr(m) == text
    assert m.weight.shape == (4, 6 // m.groups) + m.kernel_size  # (in, out / groups, *kernel), as torch's
    try:
        import torch
    except ImportError:
        return
    assert repr(make(torch.nn)) == text and list(m.state_dict()) == list(make(torch.nn).state_dict())
    assert "output_size" in inspect.signature(type(m).forward).parameters


@pytest.mark.parametrize("device", [d for d in DEVICES if d != "meta"])
def test_conv_transpose_module_matches_torch_with_output_size(device):
    torch = pytest.importorskip("torch")
    t = torch.nn.ConvTranspose2d(4, 6, 3, stride=2, groups=2).double()
    m = nn.ConvTranspose2d(4, 6, 3, stride=2, groups=2)
    m.load_state_dict({k: st.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    m = m.double().to(device)
    x = RNG.standard_normal((2, 4, 5, 5))
    for size in (None, [12, 12], [2, 6, 11, 12]):
        np.testing.assert_allclose(m(st.tensor(x, device=device), output_size=size).detach().cpu().numpy(),
                                   t(torch.tensor(x), output_size=size).detach().numpy(), rtol=1e-10, atol=1e-10)
