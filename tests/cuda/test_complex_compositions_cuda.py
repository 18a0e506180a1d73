"""Complex values through the Python compositions on CUDA: grids and repeats match the CPU backend; the losses,
pools, normalizations and interpolations torch's CUDA refuses are refused in its CUDA words (torch 2.11's,
read on an H200 on 2026-11-27)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]

_GRIDS = {
    "meshgrid": lambda m, x, y: m.stack(m.meshgrid(x[0], y, indexing="ij")),
    "cartesian_prod": lambda m, x, y: m.cartesian_prod(x[0], y),
    "repeat_interleave int": lambda m, x, y: m.repeat_interleave(x, 2, 0),
    "repeat_interleave tensor": lambda m, x, y: x.repeat_interleave(m.tensor([1, 0, 2, 3], device=x.device), dim=1),
    "fill_diagonal_ wrap": lambda m, x, y: m.cat([x, x, x]).fill_diagonal_(1j, wrap=True),
    "cumulative_trapezoid": lambda m, x, y: m.cumulative_trapezoid(x),
    "cumulative_trapezoid x": lambda m, x, y: m.cumulative_trapezoid(x, y.real),
}


@pytest.mark.parametrize("name", list(_GRIDS))
def test_grids_and_repeats_match_the_cpu(name):
    rng = np.random.default_rng(5)
    a = (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(np.complex64)
    b = (rng.standard_normal(4) + 1j * rng.standard_normal(4)).astype(np.complex64)
    got = _GRIDS[name](st, st.from_numpy(a.copy()).cuda(), st.from_numpy(b.copy()).cuda())
    want = _GRIDS[name](st, st.from_numpy(a.copy()), st.from_numpy(b.copy()))
    assert got.device.type == "cuda" and got.dtype is st.complex64
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-6, atol=1e-6)


def _z(*shape):
    rng = np.random.default_rng(2)
    return st.from_numpy((rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)).cuda()


F = st.nn.functional
_REFUSED = {
    "mse_cuda": lambda: F.mse_loss(_z(2, 3), _z(2, 3)),
    "smooth_l1_cuda": lambda: F.smooth_l1_loss(_z(2, 3), _z(2, 3)),
    "huber_cuda": lambda: F.huber_loss(_z(2, 3), _z(2, 3)),
    "erfcx_cuda": lambda: st.special.erfcx(_z(2, 3)),
    "GroupNormKernelImpl": lambda: F.group_norm(_z(1, 2, 3, 3), 1),
    "avg_pool2d_out_cuda_frame": lambda: F.avg_pool1d(_z(1, 2, 6), 2),
    "avg_pool3d_out_cuda": lambda: F.local_response_norm(_z(1, 2, 6, 6), 2),
    "upsample_nearest1d_out_frame": lambda: F.interpolate(_z(1, 2, 6), scale_factor=2, mode="nearest-exact"),
    "upsample_nearest2d_out_frame": lambda: F.interpolate(_z(1, 2, 6, 6), scale_factor=2),
    "upsample_linear1d_out_frame": lambda: F.interpolate(_z(1, 2, 6), scale_factor=2, mode="linear"),
    "upsample_bilinear2d_out_frame": lambda: F.interpolate(_z(1, 2, 6, 6), scale_factor=2, mode="bilinear"),
    "upsample_bicubic2d_out_frame": lambda: F.interpolate(_z(1, 2, 6, 6), scale_factor=2, mode="bicubic"),
    "upsample_trilinear3d_out_frame": lambda: F.interpolate(_z(1, 2, 4, 4, 4), scale_factor=2, mode="trilinear"),
}


@pytest.mark.parametrize("name", list(_REFUSED))
def test_complex_input_refused_in_torchs_cuda_words(name):
    with pytest.raises(NotImplementedError, match=re.escape(f"\"{name}\" not implemented for 'ComplexFloat'")):
        _REFUSED[name]()
