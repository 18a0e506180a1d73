"""``F.interpolate(..., antialias=True)`` (Note [Antialiased resampling] in ``strided/nn/interpolation.py``) on every
available backend: values against a NumPy transcription of torch's weight rule and against torch (when installed),
gradients against torch and gradcheck, and the errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import strided as st
from strided.autograd import gradcheck
from strided.nn import functional as F
from strided.testing import available_devices

DEVICES = available_devices()
RNG = np.random.default_rng(53)

# (input shape, size, scale_factor, mode, align_corners): down, up, mixed, factors, align_corners
CASES = [
    ((2, 3, 17, 13), (5, 4), None, "bilinear", False),
    ((2, 3, 17, 13), (5, 4), None, "bicubic", False),
    ((1, 2, 9, 7), (3, 4), None, "bilinear", True),
    ((1, 2, 9, 7), (20, 3), None, "bicubic", True),
    ((1, 2, 30, 30), None, 0.3, "bicubic", False),
    ((1, 2, 30, 31), None, (0.25, 0.5), "bilinear", False),
    ((1, 1, 8, 8), (16, 3), None, "bicubic", False),
    ((1, 1, 6, 5), (6, 1), None, "bilinear", False),
]


def _filter(v, mode):
    v = np.abs(v)
    if mode == "bilinear":
        return np.maximum(1.0 - v, 0.0)
    a = -0.5
    return np.where(v < 1, ((a + 2) * v - (a + 3)) * v * v + 1,
                    np.where(v < 2, ((a * v - 5 * a) * v + 8 * a) * v - 4 * a, 0.0))


def _weights(n_in, n_out, factor, mode, align_corners):
    """torch's _compute_weights_aa, one output row at a time, in float64."""
    if align_corners:
        scale = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    else:
        scale = 1.0 / factor if factor else n_in / n_out
    support = (1.0 if mode == "bilinear" else 2.0) * max(scale, 1.0)
    invscale = 1.0 / scale if scale >= 1.0 else 1.0
    taps = math.ceil(support) * 2 + 1
    w = np.zeros((n_out, n_in))
    for i in range(n_out):
        center = scale * (i + 0.5)
        xmin = max(int(center - support + 0.5), 0)
        xsize = min(max(min(int(center + support + 0.5), n_in) - xmin, 0), taps)
        row = _filter((np.arange(xmin, xmin + xsize) - center + 0.5) * invscale, mode)
        w[i, xmin:xmin + xsize] = row / row.sum() if row.sum() != 0 else row
    return w


def _reference(x, size, scale_factor, mode, align_corners):
    n_in = x.shape[2:]
    if size is None:
        factors = scale_factor if isinstance(scale_factor, tuple) else (scale_factor,) * 2
        size = tuple(math.floor(n * f) for n, f in zip(n_in, factors))
    else:
        factors = (None, None)
    out = x
    for d, (a, b, f) in enumerate(zip(n_in, size, factors)):
        if a != b:
            out = np.moveaxis(np.moveaxis(out, 2 + d, -1) @ _weights(a, b, f, mode, align_corners).T, -1, 2 + d)
    return out


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape, size, scale_factor, mode, align_corners", CASES)
def test_antialias_matches_reference(device, shape, size, scale_factor, mode, align_corners):
    x = RNG.standard_normal(shape)
    out = F.interpolate(st.tensor(x, device=device), size=size, scale_factor=scale_factor, mode=mode,
                        align_corners=align_corners, antialias=True)
    want = _reference(x, size, scale_factor, mode, align_corners)
    assert tuple(out.shape) == want.shape and out.dtype is st.float64
    if device != "meta":
        np.testing.assert_allclose(out.cpu().numpy(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, size, scale_factor, mode, align_corners", CASES)
def test_antialias_matches_torch(nn_oracle, device, dtype, shape, size, scale_factor, mode, align_corners):
    nn_oracle(lambda F_, x: F_.interpolate(x, size=size, scale_factor=scale_factor, mode=mode,
                                           align_corners=align_corners, antialias=True),
              [RNG.standard_normal(shape)], device, dtype)


def test_antialias_identity_gradcheck_and_errors():
    x = st.tensor(RNG.standard_normal((1, 2, 5, 6)))
    for mode in ("bilinear", "bicubic"):  # equal sizes: both filters are the identity, as torch's
        np.testing.assert_array_equal(F.interpolate(x, size=(5, 6), mode=mode, antialias=True).numpy(), x.numpy())
    y = st.tensor(RNG.standard_normal((1, 1, 7, 6)), requires_grad=True)
    assert gradcheck(lambda y: F.interpolate(y, size=(3, 4), mode="bicubic", antialias=True), (y,))
    assert gradcheck(lambda y: F.interpolate(y, scale_factor=0.6, mode="bilinear", antialias=True), (y,))
    for bad in (dict(mode="nearest"), dict(mode="area")):
        with pytest.raises(ValueError, match="Anti-alias option is restricted to bilinear and bicubic modes and "
                                             "requires a 4-D tensor as input"):
            F.interpolate(x, size=(2, 2), antialias=True, **bad)
    with pytest.raises(ValueError, match="Anti-alias option is restricted"):
        F.interpolate(st.ones(1, 2, 5, 5, 5), size=(2, 2, 2), mode="trilinear", antialias=True)
    with pytest.raises(NotImplementedError, match="\"compute_index_ranges_weights\" not implemented for 'Long'"):
        F.interpolate(st.ones(1, 1, 5, 5, dtype=st.int64), size=(2, 2), mode="bilinear", antialias=True)


@pytest.mark.parametrize("mode,antialias", [("bilinear", False), ("bicubic", False), ("bilinear", True),
                                            ("bicubic", True)])
@pytest.mark.parametrize("dtype", [st.bfloat16, st.float16])
def test_half_inputs_resample_in_float32_and_round_once(mode, antialias, dtype):
    """A half input is resampled in float32 and rounded once, as torch's kernels accumulate in float (rounding each
    pass and each term drifted to 1.5x torch's error in bfloat16 bicubic)."""
    rng = np.random.default_rng(0)
    x = st.tensor(rng.standard_normal((1, 2, 37, 45)).astype(np.float32)).to(dtype)
    kw = {"size": (23, 61), "mode": mode, "align_corners": False, "antialias": antialias}
    got = F.interpolate(x, **kw)
    assert got.dtype is dtype
    np.testing.assert_array_equal(got.float().numpy(), F.interpolate(x.float(), **kw).to(dtype).float().numpy())
