"""pixel_shuffle, pixel_unshuffle, unfold and their modules (``strided/nn/rearrangement.py``) on every available
backend: values and gradients against torch (when installed), exact round trips without it, torch's reprs and
errors."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided import nn
from strided.nn import functional as F
from strided.testing import available_devices

DEVICES = available_devices()
RNG = np.random.default_rng(17)
X = RNG.standard_normal((2, 8, 3, 5))
X5 = RNG.standard_normal((2, 3, 18, 4, 6))  # extra leading dims: pixel ops take (*, C, H, W)
UNFOLD = [{"kernel_size": 2}, {"kernel_size": (2, 3), "stride": 2, "padding": 1}, {"kernel_size": 3, "dilation": 2,
                                                                                   "padding": (2, 1)}]


@pytest.mark.parametrize("device", DEVICES)
def test_pixel_shuffle_and_unshuffle_match_torch(nn_oracle, device):
    nn_oracle(lambda F, x: F.pixel_shuffle(x, 2), [X], device, "float32")
    nn_oracle(lambda F, x: F.pixel_shuffle(x, 3), [X5], device, "float32")
    nn_oracle(lambda F, x: F.pixel_unshuffle(x, 2), [X5], device, "float32")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kw", UNFOLD, ids=str)
def test_unfold_matches_torch(nn_oracle, device, kw):
    nn_oracle(lambda F, x: F.unfold(x, **kw), [X], device, "float32")
    nn_oracle(lambda F, x: F.unfold(x, **kw), [X[0]], device, "float32")


def test_round_trips_and_modules_without_torch():
    x = st.tensor(X)
    y = F.pixel_shuffle(x, 2)
    assert tuple(y.shape) == (2, 2, 6, 10)
    np.testing.assert_array_equal(F.pixel_unshuffle(y, 2).numpy(), X)
    np.testing.assert_array_equal(y.numpy()[0, 1, 1, 0], X[0, 4 + 2, 0, 0])  # channel c*r*r + i*r + j -> (h*r+i, w*r+j)
    assert repr(nn.PixelShuffle(2)) == "PixelShuffle(upscale_factor=2)"
    assert repr(nn.PixelUnshuffle(3)) == "PixelUnshuffle(downscale_factor=3)"
    assert repr(nn.Unfold(2, padding=1)) == "Unfold(kernel_size=2, dilation=1, padding=1, stride=1)"
    cols = nn.Unfold(2)(x)
    assert tuple(cols.shape) == (2, 32, 8)
    np.testing.assert_array_equal(cols.numpy()[1, :, 0], X[1, :, :2, :2].reshape(-1))


def test_errors_in_torchs_words():
    with pytest.raises(RuntimeError, match=r"pixel_shuffle expects input to have at least 3 dimensions, but got input "
                       r"with 2 dimension\(s\)"):
        F.pixel_shuffle(st.ones(4, 4), 2)
    with pytest.raises(RuntimeError, match="pixel_shuffle expects a positive upscale_factor, but got 0"):
        F.pixel_shuffle(st.ones(4, 4, 4), 0)
    with pytest.raises(RuntimeError, match=r"input.size\(-3\)=3 is not divisible by 4"):
        F.pixel_shuffle(st.ones(3, 4, 4), 2)
    with pytest.raises(RuntimeError, match=r"pixel_unshuffle expects width to be divisible by downscale_factor, but "
                       r"input.size\(-1\)=5 is not divisible by 2"):
        F.pixel_unshuffle(st.ones(3, 4, 5), 2)
    with pytest.raises(RuntimeError, match="Expected 3D or 4D \\(batch mode\\) tensor"):
        F.unfold(st.ones(2, 3, 4, 4, 4), 2)
    with pytest.raises(RuntimeError, match=r"calculated shape of the array of sliding blocks as \(0, 0\)"):
        F.unfold(st.ones(2, 3, 4, 4), 5)
