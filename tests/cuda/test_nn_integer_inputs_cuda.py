"""Integer and bool inputs of pooling, interpolation, unfold and padding on CUDA: refused in the words of torch's
CUDA kernels (torch 2.11's, read on an H200 on 2026-11-27, and compared with torch's CUDA where it is installed),
and where torch computes (nearest of uint8, reflect / replicate / circular padding, unfold of bool) the values of
the CPU backend."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]

_TYPE_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}
_INTS = ["int64", "int32", "int16", "int8", "uint8"]


def _x(m, dt, shape, device):
    a = np.random.default_rng(4).integers(0, 2 if dt == "bool" else 100, shape).astype(dt)
    return m.from_numpy(a).to(device)


# name -> (function of (functional module, x), input shape, {dtype: CUDA kernel name refusing it; absent: computed})
CASES = {
    "max_pool1d": (lambda F, x: F.max_pool1d(x, 2), (1, 2, 6),
                   dict.fromkeys([*_INTS, "bool"], "max_pool2d_with_indices_out_cuda_frame")),
    "max_pool2d": (lambda F, x: F.max_pool2d(x, 2), (1, 2, 4, 4),
                   dict.fromkeys([*_INTS, "bool"], "max_pool2d_with_indices_out_cuda_frame")),
    "max_pool3d": (lambda F, x: F.max_pool3d(x, 2), (1, 2, 2, 4, 4),
                   dict.fromkeys([*_INTS, "bool"], "max_pool3d_with_indices_out_frame")),
    "adaptive_max_pool1d": (lambda F, x: F.adaptive_max_pool1d(x, 2), (1, 2, 6),
                            dict.fromkeys([*_INTS, "bool"], "adaptive_max_pool2d_cuda")),
    "adaptive_max_pool3d": (lambda F, x: F.adaptive_max_pool3d(x, 2), (1, 2, 2, 4, 4),
                            dict.fromkeys([*_INTS, "bool"], "adaptive_max_pool3d_cuda")),
    "adaptive_avg_pool1d": (lambda F, x: F.adaptive_avg_pool1d(x, 3), (1, 2, 6),
                            dict.fromkeys([*_INTS, "bool"], "adaptive_avg_pool2d_cuda")),
    "adaptive_avg_pool3d": (lambda F, x: F.adaptive_avg_pool3d(x, 3), (1, 2, 2, 4, 4),
                            dict.fromkeys([*_INTS, "bool"], "adaptive_avg_pool3d_cuda")),
    "area": (lambda F, x: F.interpolate(x, size=(3, 3), mode="area"), (1, 2, 4, 4),
             dict.fromkeys([*_INTS, "bool"], "adaptive_avg_pool2d_cuda")),
    "nearest 1d": (lambda F, x: F.interpolate(x, scale_factor=2), (1, 2, 6),
                   dict.fromkeys(["int64", "int32", "int16", "int8", "bool"], "upsample_nearest1d_out_frame")),
    "nearest 2d": (lambda F, x: F.interpolate(x, size=(7, 3)), (1, 2, 4, 4),
                   dict.fromkeys(["int64", "int32", "int16", "int8", "bool"], "upsample_nearest2d_out_frame")),
    "nearest-exact 3d": (lambda F, x: F.interpolate(x, scale_factor=1.5, mode="nearest-exact"), (1, 2, 2, 4, 4),
                         dict.fromkeys(["int64", "int32", "int16", "int8", "bool"], "upsample_nearest3d_out_frame")),
    "linear": (lambda F, x: F.interpolate(x, scale_factor=2, mode="linear"), (1, 2, 6),
               dict.fromkeys([*_INTS, "bool"], "upsample_linear1d_out_frame")),
    "bilinear": (lambda F, x: F.interpolate(x, size=(7, 3), mode="bilinear"), (1, 2, 4, 4),
                 dict.fromkeys([*_INTS, "bool"], "upsample_bilinear2d_out_frame")),
    "bicubic": (lambda F, x: F.interpolate(x, size=(7, 3), mode="bicubic"), (1, 2, 4, 4),
                dict.fromkeys([*_INTS, "bool"], "upsample_bicubic2d_out_frame")),
    "bicubic aa": (lambda F, x: F.interpolate(x, size=(3, 2), mode="bicubic", antialias=True), (1, 2, 4, 4),
                   dict.fromkeys([*_INTS, "bool"], "upsample_bilinear2d_out_frame")),
    "trilinear": (lambda F, x: F.interpolate(x, scale_factor=2, mode="trilinear"), (1, 2, 2, 4, 4),
                  dict.fromkeys([*_INTS, "bool"], "upsample_trilinear3d_out_frame")),
    "unfold": (lambda F, x: F.unfold(x, 2), (1, 2, 4, 4), dict.fromkeys(_INTS, "im2col_out_cuda")),
    "reflect 1d": (lambda F, x: F.pad(x, (1, 2), mode="reflect"), (1, 2, 6), {"bool": "reflection_pad1d_out"}),
    "reflect 2d": (lambda F, x: F.pad(x, (1, 1, 2, 0), mode="reflect"), (1, 2, 4, 4),
                   {"bool": "reflection_pad2d_out_template"}),
    "reflect 3d": (lambda F, x: F.pad(x, (1, 1, 1, 1, 1, 0), mode="reflect"), (1, 2, 2, 4, 4),
                   {"bool": "reflection_pad3d_out_cuda"}),
    "replicate 2d": (lambda F, x: F.pad(x, (1, 1, 2, 0), mode="replicate"), (1, 2, 4, 4),
                     {"bool": "replication_pad2d_cuda"}),
    "circular 2d": (lambda F, x: F.pad(x, (1, 1, 2, 0), mode="circular"), (1, 2, 4, 4), {}),
}


@pytest.mark.parametrize("dt", [*_INTS, "bool"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_integer_inputs_on_cuda_as_torch(dt, case):
    f, shape, refused = CASES[case]
    x = _x(st, dt, shape, "cuda")
    if dt in refused:
        with pytest.raises(NotImplementedError) as info:
            f(st.nn.functional, x)
        assert str(info.value) == f"\"{refused[dt]}\" not implemented for '{_TYPE_NAMES[dt]}'"
    else:
        got = f(st.nn.functional, x)
        want = f(st.nn.functional, _x(st, dt, shape, "cpu"))
        assert got.device.type == "cuda" and got.dtype == want.dtype
        np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():  # the table above is torch's CUDA behaviour
        tx = _x(torch, dt, shape, "cuda")
        if dt in refused:
            with pytest.raises(NotImplementedError, match=f"\"{refused[dt]}\" not implemented"):
                f(torch.nn.functional, tx)
        else:
            np.testing.assert_array_equal(f(torch.nn.functional, tx).cpu().numpy(), got.cpu().numpy())
