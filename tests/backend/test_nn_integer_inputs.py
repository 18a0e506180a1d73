"""Integer and bool inputs of pooling, interpolation, unfold, padding, hinge_embedding_loss and convolutions, as
torch's CPU: the same values where torch computes (uint8 bilinear / bicubic in torch's fixed point, hinge in the input's
dtype) and torch's AT_DISPATCH words where it refuses."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import strided as st

torch = pytest.importorskip("torch")

DTYPES = ["int64", "int32", "int16", "int8", "uint8", "bool"]


def _inputs(m, dt):
    d = getattr(m, dt)
    rng = np.random.default_rng(3)
    arr = rng.integers(0, 2 if dt == "bool" else 100, (1, 2, 2, 4, 4)).astype(dt)

    def t(a):
        return m.from_numpy(np.ascontiguousarray(a)).to(d)

    return {"1d": t(arr[:, :, 0, 0]), "2d": t(arr[:, :, 0]), "3d": t(arr), "unbatched": t(arr[0, :, 0, 0])}


# name -> function of (functional module, inputs)
CASES = {
    "max_pool1d": lambda F, x: F.max_pool1d(x["1d"], 2),
    "max_pool1d unbatched": lambda F, x: F.max_pool1d(x["unbatched"], 2),
    "max_pool1d indices": lambda F, x: F.max_pool1d(x["1d"], 2, return_indices=True)[0],
    "max_pool2d": lambda F, x: F.max_pool2d(x["2d"], 2),
    "max_pool2d indices": lambda F, x: F.max_pool2d(x["2d"], 2, return_indices=True)[1],
    "max_pool3d": lambda F, x: F.max_pool3d(x["3d"], 2),
    "adaptive_max_pool1d": lambda F, x: F.adaptive_max_pool1d(x["1d"], 2),
    "adaptive_max_pool3d": lambda F, x: F.adaptive_max_pool3d(x["3d"], 2),
    "adaptive_avg_pool1d": lambda F, x: F.adaptive_avg_pool1d(x["1d"], 3),
    "adaptive_avg_pool2d": lambda F, x: F.adaptive_avg_pool2d(x["2d"], 3),
    "adaptive_avg_pool3d": lambda F, x: F.adaptive_avg_pool3d(x["3d"], 3),
    "nearest 1d": lambda F, x: F.interpolate(x["1d"], scale_factor=2),
    "nearest 2d": lambda F, x: F.interpolate(x["2d"], size=(7, 3)),
    "nearest 3d": lambda F, x: F.interpolate(x["3d"], scale_factor=1.5),
    "nearest-exact 2d": lambda F, x: F.interpolate(x["2d"], size=(7, 3), mode="nearest-exact"),
    "linear": lambda F, x: F.interpolate(x["1d"], scale_factor=2, mode="linear"),
    "bilinear": lambda F, x: F.interpolate(x["2d"], size=(7, 3), mode="bilinear"),
    "bilinear aa": lambda F, x: F.interpolate(x["2d"], size=(3, 2), mode="bilinear", antialias=True),
    "bicubic": lambda F, x: F.interpolate(x["2d"], size=(7, 3), mode="bicubic"),
    "bicubic aa": lambda F, x: F.interpolate(x["2d"], size=(3, 2), mode="bicubic", antialias=True),
    "trilinear": lambda F, x: F.interpolate(x["3d"], scale_factor=2, mode="trilinear"),
    "area": lambda F, x: F.interpolate(x["2d"], size=(3, 3), mode="area"),
    "unfold": lambda F, x: F.unfold(x["2d"], 2),
    "reflect 1d": lambda F, x: F.pad(x["1d"], (1, 2), mode="reflect"),
    "reflect 2d": lambda F, x: F.pad(x["2d"], (1, 1, 2, 0), mode="reflect"),
    "reflect 3d": lambda F, x: F.pad(x["3d"], (1, 1, 1, 1, 1, 0), mode="reflect"),
    "replicate 1d": lambda F, x: F.pad(x["1d"], (1, 2), mode="replicate"),
    "replicate 2d": lambda F, x: F.pad(x["2d"], (1, 1, 2, 0), mode="replicate"),
    "replicate 3d": lambda F, x: F.pad(x["3d"], (1, 1, 1, 1, 1, 0), mode="replicate"),
    "circular 2d": lambda F, x: F.pad(x["2d"], (1, 1, 2, 0), mode="circular"),
    "hinge none": lambda F, x: F.hinge_embedding_loss(x["1d"], x["1d"], reduction="none"),
    "hinge sum": lambda F, x: F.hinge_embedding_loss(x["1d"], x["1d"], reduction="sum"),
    "hinge mean": lambda F, x: F.hinge_embedding_loss(x["1d"], x["1d"]),
    # torch's CPU transposed convolutions take int64 only among the integers (slow_conv_transpose2d / 3d)
    "conv_transpose1d": lambda F, x: F.conv_transpose1d(x["1d"], x["1d"].new_ones((2, 3, 2)), stride=2),
    "conv_transpose2d": lambda F, x: F.conv_transpose2d(x["2d"], x["2d"].new_ones((2, 3, 2, 2)), padding=1),
    "conv_transpose2d output_padding": lambda F, x: F.conv_transpose2d(x["2d"], x["2d"].new_ones((2, 2, 3, 3)),
                                                                       stride=2, output_padding=1, groups=2),
    "conv_transpose3d": lambda F, x: F.conv_transpose3d(x["3d"], x["3d"].new_ones((2, 3, 2, 2, 2))),
    "conv_transpose2d dilated": lambda F, x: F.conv_transpose2d(x["2d"], x["2d"].new_ones((2, 3, 2, 2)), dilation=2),
    "conv3d dilated": lambda F, x: F.conv3d(x["3d"], x["3d"].new_ones((3, 2, 2, 2, 2)), dilation=(1, 2, 1)),
    "conv1d": lambda F, x: F.conv1d(x["1d"], x["1d"].new_ones((3, 2, 2))),
    "conv2d": lambda F, x: F.conv2d(x["2d"], x["2d"].new_ones((3, 2, 2, 2))),
    "conv2d dilated": lambda F, x: F.conv2d(x["2d"], x["2d"].new_ones((3, 2, 2, 2)), dilation=2),
    "conv3d": lambda F, x: F.conv3d(x["3d"], x["3d"].new_ones((3, 2, 2, 2, 2))),
}


def outcome(m, dt, case):
    """('ok', dtype name, values) or (exception type name, message) of a case."""
    try:
        r = CASES[case](m.nn.functional, _inputs(m, dt))
    except Exception as e:  # noqa: BLE001 - the outcome is what is compared
        return type(e).__name__, str(e).splitlines()[0]
    return "ok", str(r.dtype).split(".")[-1], r.cpu().numpy()


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_integer_inputs_as_torch(dt, case):
    got, want = outcome(st, dt, case), outcome(torch, dt, case)
    assert got[:2] == want[:2]
    if got[0] == "ok":
        np.testing.assert_array_equal(got[2], want[2])


@pytest.mark.parametrize("mode,antialias,align_corners", list(itertools.product(("bilinear", "bicubic"), (False, True),
                                                                                (False, True))))
def test_uint8_bilinear_bicubic_in_torch_fixed_point(mode, antialias, align_corners):
    """Exactly torch's values: up and down, uneven factors, one dim unchanged, more than four channels (torch's
    generic path) and channels-last input (its AVX path)."""
    rng = np.random.default_rng(0)
    for shape in ((1, 3, 7, 9), (2, 5, 6, 4)):
        x = rng.integers(0, 256, shape, dtype=np.uint8)
        for kw in ({"scale_factor": 2.0}, {"scale_factor": 0.6}, {"size": (5, 11)}, {"scale_factor": (0.5, 3.0)},
                   {"size": (shape[2], 4)}, {"scale_factor": 0.3, "recompute_scale_factor": True}):
            kw = dict(kw, mode=mode, antialias=antialias, align_corners=align_corners)
            want = torch.nn.functional.interpolate(torch.from_numpy(x), **kw).numpy()
            for layout in ("contiguous_format", "channels_last"):
                s = st.from_numpy(x.copy()).contiguous(memory_format=layout)
                got = st.nn.functional.interpolate(s, **kw)
                assert got.dtype == st.uint8
                np.testing.assert_array_equal(got.numpy(), want, err_msg=f"{shape} {kw} {layout}")


def test_uint8_resampling_keeps_the_image_when_sizes_match():
    x = st.from_numpy(np.arange(24, dtype=np.uint8).reshape(1, 2, 3, 4))
    y = st.nn.functional.interpolate(x, size=(3, 4), mode="bicubic")
    np.testing.assert_array_equal(y.numpy(), x.numpy())
    assert y.data_ptr() != x.data_ptr()


@pytest.mark.parametrize("dt", ["uint8", "int8", "int32", "int64"])
def test_integer_hinge_embedding_loss_in_the_input_dtype(dt):
    """torch's ``margin - x`` fills the margin into the input's dtype: truncated, uint8 wrapping, out of range
    refused in its words."""
    x = np.array([[0, 3, 1, 5]], dtype=dt)
    y = np.array([[1, -1, -1, 1]])
    for margin in (1.0, 0.7, -1.0, 4.9, 300.0, 1e20):
        for reduction in ("none", "sum"):
            got, want = [], []
            for m, out in ((st, got), (torch, want)):
                try:
                    r = m.nn.functional.hinge_embedding_loss(m.from_numpy(x.copy()), m.from_numpy(y), margin=margin,
                                                             reduction=reduction)
                    out.append((str(r.dtype).split(".")[-1], r.tolist()))
                except RuntimeError as e:
                    out.append(str(e))
            assert got == want, (margin, reduction)


def test_hinge_embedding_loss_refusals_as_torch():
    for dt, exc, msg in (("bool", NotImplementedError, "with two bool tensors is not supported"),
                         ("complex64", NotImplementedError, "clamp is not supported for complex types")):
        with pytest.raises(exc, match=msg):
            st.nn.functional.hinge_embedding_loss(st.ones(3, dtype=getattr(st, dt)), st.ones(3))


def test_int32_fill_overflow_names_cpp_int():
    with pytest.raises(RuntimeError, match="value cannot be converted to type int without overflow"):
        st.empty(2, dtype=st.int32).fill_(1e20)
