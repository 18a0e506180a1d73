"""Which element a max pool chooses (Note [The element a max pool chooses] in ``strided/nn/pooling.py``): with
ties the whole gradient of a window reaches one element, the first maximum, and a window holding NaN returns
the last NaN's index -- torch's kernels' rule, checked against torch on every available backend. Random normal
inputs (the other pooling tests) have no ties, so these use small integers."""

from __future__ import annotations

import math

import numpy as np
import pytest

import strided as st
from strided.testing import available_devices

torch = pytest.importorskip("torch")

DEVICES = [d for d in available_devices() if d != "meta"]
RNG = np.random.default_rng(3)
TIES4 = RNG.integers(0, 3, (2, 3, 6, 7)).astype(np.float32)  # many ties in every window
TIES5 = RNG.integers(0, 3, (1, 2, 4, 5, 6)).astype(np.float32)

CASES = [
    ("max_pool1d", TIES4[0], {"kernel_size": 3, "stride": 1, "padding": 1}),
    ("max_pool1d", TIES4[0], {"kernel_size": 2}),
    ("max_pool2d", TIES4, {"kernel_size": 2}),
    ("max_pool2d", TIES4, {"kernel_size": 3, "stride": 1, "padding": 1}),  # overlapping windows
    ("max_pool2d", TIES4, {"kernel_size": (3, 2), "stride": (2, 1), "dilation": (1, 2), "ceil_mode": True}),
    ("max_pool2d", TIES4[0], {"kernel_size": 2, "stride": 1}),  # unbatched
    ("max_pool3d", TIES5, {"kernel_size": 2, "stride": 1}),
    ("max_pool3d", TIES5, {"kernel_size": (1, 3, 3), "stride": 1, "padding": (0, 1, 1)}),
]


def _run(lib, name, array, kw, device=None, channels_last=False):
    x = lib.tensor(array, device=device) if device else lib.tensor(array)
    if channels_last:
        x = x.to(memory_format=lib.channels_last)
    x.requires_grad_(True)
    out, idx = getattr(lib.nn.functional, name)(x, return_indices=True, **kw)
    plain = getattr(lib.nn.functional, name)(x, **kw)
    upstream = np.random.default_rng(0).standard_normal(tuple(out.shape)).astype(np.float32)
    plain.backward(lib.tensor(upstream, device=device) if device else lib.tensor(upstream))
    g_plain = x.grad.detach().cpu().numpy().copy()
    x.grad = None
    out.backward(lib.tensor(upstream, device=device) if device else lib.tensor(upstream))
    with lib.no_grad():  # the inference path (amax) gives the same values
        inference = getattr(lib.nn.functional, name)(x, **kw)
    return (out.detach().cpu().numpy(), idx.cpu().numpy(), g_plain, x.grad.detach().cpu().numpy(),
            inference.cpu().numpy())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", range(len(CASES)))
def test_ties_route_the_gradient_to_the_first_maximum(device, case):
    name, array, kw = CASES[case]
    s_out, s_idx, s_plain, s_grad, s_inf = _run(st, name, array, kw, device)
    t_out, t_idx, t_plain, t_grad, _ = _run(torch, name, array, kw)
    np.testing.assert_array_equal(s_out, t_out)
    np.testing.assert_array_equal(s_inf, t_out)
    np.testing.assert_array_equal(s_idx, t_idx)
    np.testing.assert_allclose(s_grad, t_grad, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(s_plain, t_plain, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_channels_last_ties(device):
    s = _run(st, "max_pool2d", TIES4, {"kernel_size": 3, "stride": 2, "padding": 1}, device, channels_last=True)
    t = _run(torch, "max_pool2d", TIES4, {"kernel_size": 3, "stride": 2, "padding": 1}, channels_last=True)
    for a, b in zip(s[:4], t[:4]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["max_pool1d", "max_pool2d", "max_pool3d"])
def test_a_window_with_nan_returns_its_last_nan(device, name):
    array = np.array([[[[math.nan, 1.0, 2.0], [math.nan, 0.0, 2.0]]]], dtype=np.float32)
    if name == "max_pool1d":
        array, kw = np.array([[math.nan, 2.0, math.nan, 1.0]], dtype=np.float32), {"kernel_size": 4}
    elif name == "max_pool2d":
        kw = {"kernel_size": 2, "stride": 1}
    else:
        array, kw = array[None], {"kernel_size": (1, 2, 2), "stride": 1}
    s_out, s_idx, *_ = _run(st, name, array, kw, device)
    t_out, t_idx, *_ = _run(torch, name, array, kw)
    np.testing.assert_array_equal(s_out, t_out)
    np.testing.assert_array_equal(s_idx, t_idx)


def test_integer_max_pool_keeps_first_maximum():
    array = np.array([[[3, 3, 1, 5, 5, 5]]], dtype=np.int64)
    s = st.nn.functional.max_pool1d(st.tensor(array), 3, return_indices=True)
    t = torch.nn.functional.max_pool1d(torch.tensor(array), 3, return_indices=True)
    assert s[0].tolist() == t[0].tolist() and s[1].tolist() == t[1].tolist()


EDGE = [  # (array, kwargs): values where a window's start, its padding and the dtype's lowest meet
    (np.full((1, 1, 4, 5), -math.inf, np.float32), {"kernel_size": 3, "stride": 2, "padding": 1}),
    (np.array([[[[-math.inf, 1.0, -math.inf], [-math.inf, -math.inf, -math.inf]]]], np.float32),
     {"kernel_size": 2, "stride": 1, "padding": 1}),
    (np.array([[[[math.nan, 1.0, math.nan, 4.0], [2.0, math.nan, 4.0, 0.0], [4.0, 4.0, -1.0, math.nan]]]],
              np.float32), {"kernel_size": 3, "stride": 1, "padding": 1}),
    (np.full((2, 3, 5, 5), -128, np.int8), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
    (RNG.integers(-128, -126, (2, 3, 6, 6)).astype(np.int8), {"kernel_size": 3, "stride": 2, "padding": 1}),
    (RNG.integers(0, 2, (2, 3, 6, 6)).astype(np.uint8), {"kernel_size": 2, "stride": 1, "padding": 1}),
    (RNG.integers(-2, 2, (2, 3, 7, 6)).astype(np.int64), {"kernel_size": (3, 2), "dilation": (2, 1), "padding": 1}),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", None])
@pytest.mark.parametrize("case", range(len(EDGE)))
def test_edge_values_choose_as_torch(device, dtype, case):
    """All -inf windows (torch keeps its start: the window's first element inside the input), NaNs among ties,
    an integer dtype's lowest value in padded and ceil-mode windows; the values, the indices and the gradient."""
    array, kw = EDGE[case]
    results = []
    for lib in (st, torch):
        x = lib.tensor(array, device=device) if lib is st else lib.tensor(array)
        if dtype is not None:
            x = x.to(getattr(lib, dtype))
        if lib is st and device == "cuda" and not x.dtype.is_floating_point:
            with pytest.raises(NotImplementedError, match="max_pool2d_with_indices_out_cuda_frame"):
                st.nn.functional.max_pool2d(x, **kw)  # CUDA max pooling takes floating dtypes only, as torch's
            return
        out, idx = lib.nn.functional.max_pool2d(x, return_indices=True, **kw)
        results.append((out.float().cpu().numpy(), idx.cpu().numpy()))
    (s_out, s_idx), (t_out, t_idx) = results
    np.testing.assert_array_equal(s_out, t_out)
    np.testing.assert_array_equal(s_idx, t_idx)


AVG = [((2, 3, 7, 9), {"kernel_size": 2}), ((2, 3, 7, 9), {"kernel_size": (3, 2), "divisor_override": 5}),
       ((3, 7, 9), {"kernel_size": 3}), ((2, 3, 8, 8), {"kernel_size": 2, "ceil_mode": True}),
       ((2, 3, 7, 7), {"kernel_size": 3, "stride": 2, "ceil_mode": True, "padding": 1}),
       ((2, 3, 8, 8), {"kernel_size": 3, "stride": 1, "padding": 1, "count_include_pad": False}),
       ((2, 3, 14, 14), {"kernel_size": 7})]


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
@pytest.mark.parametrize("case", range(len(AVG)))
def test_cpu_average_pool_sums_as_torch(dtype, case):
    """Note [Window sums by offsets] and Note [Disjoint windows] (ops/composite/pooling.py): the CPU forward adds
    each window in torch's order (half types rounded once, after the division) and disjoint windows' gradient is
    the repeated share, so both are torch's bit for bit."""
    shape, kw = AVG[case]
    x = RNG.standard_normal(shape)
    results = []
    for lib in (st, torch):
        t = lib.tensor(x).to(getattr(lib, dtype)).requires_grad_()
        y = lib.nn.functional.avg_pool2d(t, **kw)
        upstream = lib.tensor(np.arange(math.prod(y.shape), dtype=np.float64).reshape(tuple(y.shape)) % 7)
        y.backward(upstream.to(getattr(lib, dtype)))
        results.append((y.detach().float().numpy(), t.grad.float().numpy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    if kw.get("stride", kw["kernel_size"]) == kw["kernel_size"] and not kw.get("padding"):
        np.testing.assert_array_equal(results[0][1], results[1][1])
    else:
        np.testing.assert_allclose(results[0][1], results[1][1], rtol=2e-2 if "16" in dtype else 1e-6)
