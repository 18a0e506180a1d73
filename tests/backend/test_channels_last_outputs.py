"""Note [Channels-last outputs]: the nn.functional results torch lays out channels-last, strided does too
(strides, values and input gradients checked against torch); on CUDA, the same layouts as on the CPU."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.cuda

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)


def _cases(lib):
    F = lib.nn.functional
    cl, cl3 = lib.channels_last, lib.channels_last_3d
    return {
        "conv2d": (cl, (2, 3, 8, 8), lambda x: F.conv2d(x, _w(lib, (4, 3, 3, 3)), padding=1)),
        "conv2d bias stride": (cl, (2, 3, 9, 9), lambda x: F.conv2d(x, _w(lib, (5, 3, 2, 2)), _w(lib, (5,)), 2)),
        "conv2d weight cl": (None, (2, 3, 8, 8), lambda x: F.conv2d(x, _w(lib, (4, 3, 3, 3)).contiguous(
            memory_format=cl))),
        "conv2d groups": (cl, (2, 4, 8, 8), lambda x: F.conv2d(x, _w(lib, (6, 2, 3, 3)), groups=2)),
        "conv_transpose2d": (cl, (2, 3, 5, 5), lambda x: F.conv_transpose2d(x, _w(lib, (3, 4, 3, 3)), stride=2)),
        "max_pool2d": (cl, (2, 3, 8, 8), lambda x: F.max_pool2d(x, 2)),
        "max_pool2d indices": (cl, (2, 3, 8, 8), lambda x: F.max_pool2d(x, 3, 2, 1, return_indices=True)[1]),
        "avg_pool2d": (cl, (2, 3, 8, 8), lambda x: F.avg_pool2d(x, 3, ceil_mode=True)),
        "adaptive_avg_pool2d": (cl, (2, 3, 8, 8), lambda x: F.adaptive_avg_pool2d(x, 3)),
        "adaptive_max_pool2d": (cl, (2, 3, 8, 8), lambda x: F.adaptive_max_pool2d(x, 3, return_indices=True)[0]),
        "lp_pool2d": (cl, (2, 3, 8, 8), lambda x: F.lp_pool2d(x, 2, 2)),
        "interpolate nearest": (cl, (2, 3, 5, 5), lambda x: F.interpolate(x, scale_factor=2)),
        "interpolate bilinear": (cl, (2, 3, 5, 5), lambda x: F.interpolate(x, size=(7, 4), mode="bilinear")),
        "interpolate bicubic": (cl, (2, 3, 5, 5), lambda x: F.interpolate(x, scale_factor=2, mode="bicubic")),
        "interpolate area": (cl, (2, 3, 8, 8), lambda x: F.interpolate(x, scale_factor=0.5, mode="area")),
        "pad constant": (cl, (2, 3, 5, 5), lambda x: F.pad(x, (1, 2, 0, 1))),
        "pad reflect": (cl, (2, 3, 5, 5), lambda x: F.pad(x, (1, 1, 2, 2), mode="reflect")),
        "pad replicate": (cl, (2, 3, 5, 5), lambda x: F.pad(x, (1, 1, 1, 1), mode="replicate")),
        "pad circular": (cl, (2, 3, 5, 5), lambda x: F.pad(x, (1, 1, 1, 1), mode="circular")),
        "max_unpool2d": (cl, (2, 3, 8, 8), lambda x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2)),
        "pixel_unshuffle": (cl, (1, 2, 4, 4), lambda x: F.pixel_unshuffle(x, 2)),
        "pixel_shuffle": (cl, (1, 4, 3, 3), lambda x: F.pixel_shuffle(x, 2)),
        "conv3d": (cl3, (2, 3, 5, 5, 5), lambda x: F.conv3d(x, _w(lib, (4, 3, 2, 2, 2)))),
        "conv_transpose3d": (cl3, (2, 3, 3, 3, 3), lambda x: F.conv_transpose3d(x, _w(lib, (3, 2, 2, 2, 2)))),
        "max_pool3d": (cl3, (2, 3, 6, 6, 6), lambda x: F.max_pool3d(x, 2)),
        "avg_pool3d": (cl3, (2, 3, 6, 6, 6), lambda x: F.avg_pool3d(x, 2)),
        "adaptive_avg_pool3d": (cl3, (2, 3, 6, 6, 6), lambda x: F.adaptive_avg_pool3d(x, 2)),
        "interpolate trilinear": (cl3, (1, 2, 3, 3, 3), lambda x: F.interpolate(x, scale_factor=2, mode="trilinear")),
        "pad 3d replicate": (cl3, (1, 2, 3, 3, 3), lambda x: F.pad(x, (1,) * 6, mode="replicate")),
    }


_WEIGHTS: dict = {}


def _w(lib, shape):
    """The same random weight for both libraries (drawn once per shape)."""
    a = _WEIGHTS.setdefault(shape, RNG.standard_normal(shape).astype(np.float32))
    return lib.tensor(a, device=_DEVICE[0]) if lib is st else torch.tensor(a)


_DEVICE = ["cpu"]


def _run(lib, name, device="cpu"):
    _DEVICE[0] = device
    mf, shape, fn = _cases(lib)[name]
    a = _WEIGHTS.setdefault(("input", shape), RNG.standard_normal(shape).astype(np.float32))
    x = lib.tensor(a, device=device) if lib is st else torch.tensor(a)
    if mf is not None:
        x = x.contiguous(memory_format=mf)
    x.requires_grad_(True)
    out = fn(x)
    return x, out


def _layout(t) -> tuple:
    """The strides that matter: those of dims longer than one (torch and strided may differ on the others)."""
    return tuple(s if n > 1 else None for s, n in zip(t.stride(), t.shape))


# float32 throughout: torch's CPU float64 conv3d / conv_transpose3d (its slow path) return contiguous results,
# its float32 and bfloat16 ones (and strided's of every dtype) channels-last-3d; its conv_transpose3d of a
# batch of one is contiguous too (so the case here has two)
@pytest.mark.parametrize("name", sorted(_cases(st)))
def test_layout_values_and_gradient_as_torch(name):
    xs, ys = _run(st, name)
    xt, yt = _run(torch, name)
    assert _layout(ys) == _layout(yt), f"{name}: strided {ys.stride()}, torch {yt.stride()}"
    np.testing.assert_allclose(ys.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-5)
    if ys.dtype.is_floating_point:
        g = RNG.standard_normal(tuple(yt.shape)).astype(np.float32)
        ys.backward(st.tensor(g))
        yt.backward(torch.tensor(g))
        np.testing.assert_allclose(xs.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(not strided.cuda.is_available(), reason="no CUDA device")
@pytest.mark.parametrize("name", sorted(_cases(st)))
def test_cuda_layouts_and_values_as_cpu(name):
    xc, yc = _run(st, name, "cpu")
    with st.backends.cudnn.flags(enabled=True, allow_tf32=False):  # convolutions' TF32 default: test_conv_precision
        xg, yg = _run(st, name, "cuda")
    assert _layout(yg) == _layout(yc), name
    # float32 GEMMs in full precision and sums in another order than the CPU's
    np.testing.assert_allclose(yg.detach().cpu().numpy(), yc.detach().numpy(), rtol=1e-4, atol=1e-4)
