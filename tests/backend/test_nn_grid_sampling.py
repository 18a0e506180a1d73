"""``F.grid_sample`` and ``F.affine_grid`` (strided/nn/grid_sampling.py) on every available backend: values and the
gradients of input, grid and theta against torch (when installed) for every mode, padding mode and
align_corners, 4-D and 5-D; a NumPy bilinear reference without torch; torch's errors and warnings."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import strided as st
from strided.nn import functional as F
from strided.testing import available_devices

DEVICES = available_devices()
RNG = np.random.default_rng(61)
CASES = [(nd, mode, pad, align) for nd, mode, pad, align in itertools.product(
    (4, 5), ("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection"), (False, True))
    if not (nd == 5 and mode == "bicubic")]


def _grid(shape):
    g = RNG.uniform(-1.6, 1.6, shape)  # beyond [-1, 1]: the padding modes matter
    g.flat[:6] = [-1.0, 1.0, 0.0, 1.0, -1.0, 0.5]  # the corners and the centre exactly
    return g


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("nd,mode,pad,align", CASES, ids=str)
def test_grid_sample_matches_torch(nn_oracle, device, nd, mode, pad, align):
    x = RNG.standard_normal((2, 3, 4, 5) if nd == 4 else (2, 3, 3, 4, 5))
    g = _grid((2, 3, 4, 2) if nd == 4 else (2, 2, 3, 4, 3))
    nn_oracle(lambda F, x, g: F.grid_sample(x, g, mode, pad, align), [x, g], device, "float64", grad=(0, 1))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("size", [(2, 3, 4, 5), (2, 3, 2, 4, 5), (1, 1, 1, 3)], ids=str)
@pytest.mark.parametrize("align", [False, True])
def test_affine_grid_matches_torch(nn_oracle, device, size, align):
    theta = RNG.standard_normal((size[0], 2, 3) if len(size) == 4 else (size[0], 3, 4))
    nn_oracle(lambda F, t: F.affine_grid(t, list(size), align), [theta], device, "float32")


@pytest.mark.parametrize("device", [d for d in DEVICES if d != "meta"])
def test_identity_warp_and_bilinear_reference_without_torch(device):
    x0 = RNG.standard_normal((1, 2, 4, 5))
    x = st.tensor(x0, device=device)
    eye = st.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], dtype=st.float64, device=device)
    for align in (False, True):
        grid = F.affine_grid(eye, [1, 2, 4, 5], align_corners=align)
        out = F.grid_sample(x, grid, align_corners=align)
        np.testing.assert_allclose(out.cpu().numpy(), x0, rtol=1e-12, atol=1e-12)  # the identity map samples pixels
    px, py = 1.3, 2.6  # a point between pixels, in pixel units (align_corners=True)
    g = st.tensor([[[[px / 4 * 2 - 1, py / 3 * 2 - 1]]]], dtype=st.float64, device=device)
    got = F.grid_sample(x, g, align_corners=True).cpu().numpy()[0, :, 0, 0]
    fx, fy = px - 1, py - 2
    want = ((1 - fx) * (1 - fy) * x0[0, :, 2, 1] + fx * (1 - fy) * x0[0, :, 2, 2] + (1 - fx) * fy * x0[0, :, 3, 1]
            + fx * fy * x0[0, :, 3, 2])
    np.testing.assert_allclose(got, want, rtol=1e-12)
    far = st.tensor([[[[3.0, 3.0]]]], dtype=st.float64, device=device)
    assert not F.grid_sample(x, far, align_corners=False).cpu().numpy().any()  # zeros padding
    border = F.grid_sample(x, far, padding_mode="border", align_corners=True).cpu().numpy()[0, :, 0, 0]
    np.testing.assert_allclose(border, x0[0, :, 3, 4], rtol=1e-12)


def test_errors_and_warnings_in_torchs_words():
    x, g = st.ones(1, 1, 3, 3), st.zeros(1, 2, 2, 2)
    with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior has changed"):
        F.grid_sample(x, g)
    with pytest.raises(ValueError, match="expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: 'area'"):
        F.grid_sample(x, g, "area", align_corners=False)
    with pytest.raises(ValueError, match="expected padding_mode to be 'zeros', 'border', or 'reflection', but got: "
                       "'wrap'"):
        F.grid_sample(x, g, padding_mode="wrap", align_corners=False)
    cases = [
        ((x, st.zeros(1, 2, 2, 2, 2)), r"expected 4D input and grid with same number of dimensions, but got input "
         r"with sizes \[1, 1, 3, 3\] and grid with sizes \[1, 2, 2, 2, 2\]"),
        ((st.ones(2, 1, 3, 3), g), r"expected grid and input to have same batch size, but got input with sizes "
         r"\[2, 1, 3, 3\] and grid with sizes \[1, 2, 2, 2\]"),
        ((x, st.zeros(1, 2, 2, 3)), r"expected grid to have size 2 in last dimension, but got grid with sizes "
         r"\[1, 2, 2, 3\]"),
        ((x, st.zeros(1, 2, 2, 2, dtype=st.float64)), "expected scalar type Float but found Double"),
        ((st.ones(1, 1, 0, 3), g), r"expected input to have non-empty spatial dimensions, but input has sizes "
         r"\[1, 1, 0, 3\] with dimension 2 being empty"),
    ]
    for args, match in cases:
        with pytest.raises(RuntimeError, match=match):
            F.grid_sample(*args, align_corners=False)
    with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D input"):
        F.grid_sample(st.ones(1, 1, 2, 2, 2), st.zeros(1, 1, 1, 1, 3), "bicubic", align_corners=False)
    with pytest.raises(NotImplementedError, match="\"grid_sampler_2d_cpu_kernel_impl\" not implemented for 'Long'"):
        F.grid_sample(st.ones(1, 1, 3, 3, dtype=st.int64), st.zeros(1, 2, 2, 2, dtype=st.int64), align_corners=False)
    with pytest.raises(ValueError, match="Expected theta to have floating point type"):
        F.affine_grid(st.ones(1, 2, 3, dtype=st.int64), [1, 1, 2, 2], align_corners=False)
    with pytest.raises(ValueError, match=r"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                       r"\[1, 1, 2, 2\]"):
        F.affine_grid(st.ones(1, 2, 2), [1, 1, 2, 2], align_corners=False)
    with pytest.raises(NotImplementedError, match="affine_grid only supports 4D and 5D sizes"):
        F.affine_grid(st.ones(1, 2, 3), [1, 1, 2], align_corners=False)
    with pytest.raises(ValueError, match=r"Expected non-zero, positive output size. Got \[1, 1, 0, 2\]"):
        F.affine_grid(st.ones(1, 2, 3), [1, 1, 0, 2], align_corners=False)
