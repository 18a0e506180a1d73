"""fractional_max_pool2d / 3d (``strided/nn/fractional_max_pooling.py``) and nn.FractionalMaxPool2d / 3d on every
available backend: values, indices and gradients against a NumPy reference of torch's interval rule and window
scan, and against torch when installed; seeded draws of the samples, gradcheck, reprs and torch's errors."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

import strided as st
from strided import nn
from strided.autograd import gradcheck
from strided.nn import functional as F
from strided.testing import available_devices

DEVICES = available_devices()
DATA_DEVICES = [d for d in DEVICES if d != "meta"]
NAN = float("nan")


def _numpy_starts(u, n, m, k, dtype):
    """torch's generate_intervals, computed in ``dtype`` as its kernels compute in the input's scalar type."""
    if m <= 0:
        return []
    if m == 1:
        return [n - k]
    dt = np.dtype(dtype).type
    alpha = dt(n - k) / dt(m - 1)
    u = dt(u)
    return [int((dt(i) + u) * alpha) - int(u * alpha) for i in range(m - 1)] + [n - k]


def _numpy_fractional(x, kernel, out, samples):
    """(values, indices): torch's CPU kernel loop by loop; a window scans row-major from max = -inf and takes
    ``val > max or isnan(val)`` (first maximum, last NaN)."""
    k = len(out)
    unbatched = x.ndim == k + 1
    if unbatched:
        x = x[None]
    spatial = x.shape[2:]
    columns = (1, 0) if k == 2 else (0, 1, 2)  # torch's sample order: 2d (W, H), 3d (T, H, W)
    vals = np.empty(x.shape[:2] + tuple(out), dtype=x.dtype)
    idxs = np.empty(x.shape[:2] + tuple(out), dtype=np.int64)
    for b, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
        starts = [_numpy_starts(samples[b, c, columns[j]], spatial[j], out[j], kernel[j], x.dtype) for j in range(k)]
        for cell in itertools.product(*map(range, out)):
            ranges = [range(s[i], s[i] + kk) for s, i, kk in zip(starts, cell, kernel)]
            best, arg = -np.inf, np.ravel_multi_index([r[0] for r in ranges], spatial)
            for pos in itertools.product(*ranges):
                v = x[(b, c) + pos]
                if v > best or np.isnan(v):
                    best, arg = v, np.ravel_multi_index(pos, spatial)
            vals[(b, c) + cell], idxs[(b, c) + cell] = best, arg
    return (vals[0], idxs[0]) if unbatched else (vals, idxs)


def _numpy_grad(shape, indices, upstream, k):
    """torch's backward: each output's gradient added at its index in the plane."""
    lead = shape[:-k]
    grad = np.zeros(lead + (int(np.prod(shape[-k:])),))
    flat_idx = indices.reshape(lead + (-1,))
    flat_up = upstream.reshape(lead + (-1,))
    for pre in itertools.product(*map(range, lead)):
        np.add.at(grad[pre], flat_idx[pre], flat_up[pre])
    return grad.reshape(shape)


def _sizes(shape, k, output_size, output_ratio):
    if output_size is not None:
        return [output_size] * k if isinstance(output_size, int) else list(output_size)
    ratio = [output_ratio] * k if isinstance(output_ratio, float) else list(output_ratio)
    return [int(n * r) for n, r in zip(shape[-k:], ratio)]


def _samples_for(shape, k, seed, dtype="float64"):
    n = 1 if len(shape) == k + 1 else shape[0]
    return np.random.default_rng(seed).random((n, shape[-k - 1], k)).astype(dtype)


# (dims, input shape, kernel_size, output_size, output_ratio): square and non-square kernels, overlapping
# windows, an output of one along a dim, output_ratio, unbatched inputs
CASES = [
    (2, (2, 3, 8, 9), 2, (5, 4), None),
    (2, (3, 11, 10), (3, 2), (4, 6), None),
    (2, (2, 2, 7, 7), 3, 5, None),
    (2, (1, 2, 9, 8), (2, 3), (1, 4), None),
    (2, (2, 3, 10, 12), 2, None, (0.5, 0.75)),
    (2, (2, 9, 7), (1, 2), None, (0.6, 0.6)),
    (3, (2, 2, 7, 8, 9), (2, 3, 2), (3, 4, 5), None),
    (3, (2, 6, 7, 8), 2, (4, 4, 4), None),
    (3, (1, 2, 8, 8, 8), (3, 2, 2), None, 0.5),
]
IDS = [f"{k}d-{shape}-k{kernel}-{size}-{ratio}" for k, shape, kernel, size, ratio in CASES]


def _call(F, k, kernel, size, ratio, return_indices=False):
    fn = F.fractional_max_pool2d if k == 2 else F.fractional_max_pool3d

    def run(x, samples):
        return fn(x, kernel, output_size=size, output_ratio=ratio, return_indices=return_indices,
                  _random_samples=samples)

    return run


def _kernel(kernel, k):
    return [kernel] * k if isinstance(kernel, int) else list(kernel)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("k,shape,kernel,size,ratio", CASES, ids=IDS)
def test_fractional_max_pool_numpy_reference(device, k, shape, kernel, size, ratio):
    """Values, indices and gradients against the NumPy reference (float64; meta: shapes and dtypes)."""
    rng = np.random.default_rng(len(shape) * 7 + k)
    x = rng.standard_normal(shape)
    samples = _samples_for(shape, k, seed=k + len(shape))
    sx = st.tensor(x, device=device).requires_grad_()
    values, indices = _call(F, k, kernel, size, ratio, True)(sx, st.tensor(samples, device=device))
    out = _sizes(shape, k, size, ratio)
    expected_shape = tuple(shape[:-k]) + tuple(out)
    assert tuple(values.shape) == expected_shape and tuple(indices.shape) == expected_shape
    assert values.dtype is st.float64 and indices.dtype is st.int64
    assert values.device.type == device
    upstream = rng.standard_normal(expected_shape)
    values.backward(st.tensor(upstream, device=device))
    assert tuple(sx.grad.shape) == shape
    if device == "meta":
        return
    ref_val, ref_idx = _numpy_fractional(x, _kernel(kernel, k), out, samples)
    np.testing.assert_array_equal(indices.numpy(force=True), ref_idx)
    np.testing.assert_array_equal(values.detach().numpy(force=True), ref_val)
    np.testing.assert_allclose(sx.grad.numpy(force=True), _numpy_grad(shape, ref_idx, upstream, k), rtol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("k,shape,kernel,size,ratio", CASES, ids=IDS)
def test_fractional_max_pool_matches_torch(nn_oracle, device, k, shape, kernel, size, ratio):
    x = np.random.default_rng(k).standard_normal(shape)
    nn_oracle(lambda F, x, s: _call(F, k, kernel, size, ratio)(x, s), [x, _samples_for(shape, k, seed=3)], device,
              "float32")


def _ties_and_nans(shape, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(-2, 3, shape).astype(np.float64)
    x.reshape(-1)[rng.choice(x.size, max(1, x.size // 9), replace=False)] = NAN
    x.reshape(-1)[rng.choice(x.size, max(1, x.size // 9), replace=False)] = -np.inf
    return x


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("k,shape,kernel,size,ratio", CASES, ids=IDS)
def test_fractional_max_pool_ties_nans_and_indices(device, k, shape, kernel, size, ratio):
    """Windows with ties, NaNs and -inf: the first maximum or the last NaN wins, as torch's kernel; torch's
    indices when torch is installed."""
    x = _ties_and_nans(shape, seed=len(shape))
    samples = _samples_for(shape, k, seed=5)
    values, indices = _call(F, k, kernel, size, ratio, True)(st.tensor(x, device=device),
                                                             st.tensor(samples, device=device))
    ref_val, ref_idx = _numpy_fractional(x, _kernel(kernel, k), _sizes(shape, k, size, ratio), samples)
    np.testing.assert_array_equal(indices.numpy(force=True), ref_idx)
    np.testing.assert_array_equal(values.numpy(force=True), ref_val)
    try:
        import torch
    except ImportError:
        return
    t_val, t_idx = _call(torch.nn.functional, k, kernel, size, ratio, True)(torch.tensor(x), torch.tensor(samples))
    np.testing.assert_array_equal(indices.numpy(force=True), t_idx.numpy())
    np.testing.assert_array_equal(values.numpy(force=True), t_val.numpy())


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_ties_send_the_gradient_to_the_first_maximum(device):
    """All-equal input: every window picks its first element, and overlapping picks add up (torch's result)."""
    x = st.ones((1, 1, 3, 3), dtype=st.float64, device=device).requires_grad_()
    samples = st.tensor([[[0.3, 0.6]]], dtype=st.float64, device=device)
    values, indices = F.fractional_max_pool2d(x, 2, 2, return_indices=True, _random_samples=samples)
    np.testing.assert_array_equal(indices.numpy(force=True), [[[[0, 1], [3, 4]]]])
    values.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(force=True), [[[[1, 1, 0], [1, 1, 0], [0, 0, 0]]]])


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("dtype,u,starts", [
    ("float32", 0.8, [0, 1, 3, 5]),  # 0.8 rounded to float32 moves (1 + u) * 5/3 below 3
    ("float64", 0.8, [0, 2, 3, 5]),
    ("float32", 0.2, [0, 2, 3, 5]),  # the float32 product rounds up to 2; the same operands in float64 give 1
    ("float64", 0.2, [0, 2, 3, 5]),
])
def test_interval_rule_is_computed_in_the_input_dtype(device, dtype, u, starts):
    """n = 6, k = 1, m = 4: the starts depend on the sample's and the arithmetic's precision, as torch's
    (values checked against torch 2.14)."""
    x = np.arange(36.0).reshape(1, 1, 6, 6)
    assert _numpy_starts(np.dtype(dtype).type(u), 6, 4, 1, dtype) == starts
    samples = st.full((1, 1, 2), u, dtype=getattr(st, dtype), device=device)
    _, idx = F.fractional_max_pool2d(st.tensor(x, dtype=getattr(st, dtype), device=device), 1, 4,
                                     return_indices=True, _random_samples=samples)
    np.testing.assert_array_equal(idx.numpy(force=True)[0, 0], np.add.outer(np.multiply(starts, 6), starts))


def test_half_precision_matches_torch_on_cpu():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(4).standard_normal((2, 3, 9, 11))
    samples = _samples_for((2, 3, 9, 11), 2, seed=9)
    for dtype in ("float16", "bfloat16", "float32"):
        s_val, s_idx = F.fractional_max_pool2d(st.tensor(x).to(getattr(st, dtype)), 2, (5, 7), return_indices=True,
                                               _random_samples=st.tensor(samples).to(getattr(st, dtype)))
        t_val, t_idx = torch.nn.functional.fractional_max_pool2d(
            torch.tensor(x).to(getattr(torch, dtype)), 2, (5, 7), return_indices=True,
            _random_samples=torch.tensor(samples).to(getattr(torch, dtype)))
        assert s_val.dtype is getattr(st, dtype)
        np.testing.assert_array_equal(s_idx.numpy(), t_idx.numpy())
        np.testing.assert_array_equal(s_val.float().numpy(), t_val.float().numpy())


@pytest.mark.parametrize("device", DEVICES)
def test_samples_drawn_when_not_given_follow_manual_seed(device):
    """Without ``_random_samples`` the samples are ``rand(N, C, k)`` of the input's dtype on its device: the
    same seed gives the same windows, and the same result as passing that draw explicitly."""
    x = st.tensor(np.random.default_rng(6).standard_normal((2, 3, 11, 12)), dtype=st.float32, device=device)
    x3 = st.tensor(np.random.default_rng(7).standard_normal((3, 9, 8, 10)), dtype=st.float32, device=device)
    st.manual_seed(1234)
    a = F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5), return_indices=True)
    a3 = F.fractional_max_pool3d(x3, (2, 2, 3), (4, 3, 3), return_indices=True)
    st.manual_seed(1234)
    b = F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5), return_indices=True)
    s = st.rand(1, 3, 3, dtype=st.float32, device=device)
    st.manual_seed(1234)
    s2 = st.rand(2, 3, 2, dtype=st.float32, device=device)
    assert tuple(a[0].shape) == (2, 3, 5, 6) and tuple(a3[0].shape) == (3, 4, 3, 3)
    if device == "meta":
        return
    c = F.fractional_max_pool2d(x, 2, (5, 6), return_indices=True, _random_samples=s2)
    c3 = F.fractional_max_pool3d(x3, (2, 2, 3), (4, 3, 3), return_indices=True, _random_samples=s)
    for p, q in ((a, b), (a, c), (a3, c3)):
        np.testing.assert_array_equal(p[1].numpy(force=True), q[1].numpy(force=True))
        np.testing.assert_array_equal(p[0].numpy(force=True), q[0].numpy(force=True))
    st.manual_seed(99)
    d = F.fractional_max_pool2d(x, 2, (5, 6), return_indices=True)
    assert not np.array_equal(d[1].numpy(force=True), a[1].numpy(force=True))


@pytest.mark.parametrize("device", DEVICES)
def test_empty_batch_and_empty_output(device):
    x = st.zeros((0, 3, 8, 9), device=device)
    values, indices = F.fractional_max_pool2d(x, 2, (3, 4), return_indices=True)
    assert tuple(values.shape) == (0, 3, 3, 4) and indices.dtype is st.int64
    values = F.fractional_max_pool3d(st.zeros((2, 3, 6, 7, 8), device=device), 2, (0, 3, 3))
    assert tuple(values.shape) == (2, 3, 0, 3, 3)


def test_scalar_output_ratio():
    """A float ``output_ratio`` applies to every dim (torch's 2d function raises a TypeError on it, its module
    passes a pair; 3d takes it)."""
    x = st.tensor(np.random.default_rng(8).standard_normal((2, 3, 10, 12)))
    s = st.tensor(_samples_for((2, 3, 10, 12), 2, seed=1))
    a = F.fractional_max_pool2d(x, 2, output_ratio=0.5, _random_samples=s)
    b = F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5), _random_samples=s)
    assert tuple(a.shape) == (2, 3, 5, 6)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_gradcheck_without_ties():
    rng = np.random.default_rng(12)
    x = st.tensor(rng.permutation(2 * 2 * 8 * 7).reshape(2, 2, 8, 7) / 10.0).requires_grad_()
    s = st.tensor(rng.random((2, 2, 2)))
    assert gradcheck(lambda x: F.fractional_max_pool2d(x, (3, 2), (4, 5), _random_samples=s), (x,))
    x3 = st.tensor(rng.permutation(2 * 6 * 5 * 7).reshape(2, 6, 5, 7) / 10.0).requires_grad_()
    s3 = st.tensor(rng.random((1, 2, 3)))
    assert gradcheck(lambda x: F.fractional_max_pool3d(x, 2, (3, 3, 4), _random_samples=s3), (x3,))


@pytest.mark.parametrize("device", DEVICES)
def test_modules(device):
    samples = st.tensor(_samples_for((2, 3, 8, 9), 2, seed=1), device=device)
    x = st.tensor(np.random.default_rng(2).standard_normal((2, 3, 8, 9)), device=device)
    m = nn.FractionalMaxPool2d(3, output_size=(4, 5), return_indices=True, _random_samples=samples)
    assert repr(m) == "FractionalMaxPool2d()"
    assert m.kernel_size == (3, 3) and m.output_size == (4, 5) and m.output_ratio is None
    assert "_random_samples" in dict(m.named_buffers())
    values, indices = m(x)
    ref_val, ref_idx = F.fractional_max_pool2d(x, 3, (4, 5), return_indices=True, _random_samples=samples)
    assert tuple(values.shape) == (2, 3, 4, 5)
    m3 = nn.FractionalMaxPool3d((1, 2, 2), output_ratio=0.5)
    assert repr(m3) == "FractionalMaxPool3d()" and m3.output_ratio == (0.5, 0.5, 0.5) and m3.kernel_size == (1, 2, 2)
    assert m3._random_samples is None and dict(m3.named_buffers()) == {}
    assert tuple(m3(st.zeros((3, 4, 6, 8), device=device)).shape) == (3, 2, 3, 4)
    if device != "meta":
        np.testing.assert_array_equal(values.numpy(force=True), ref_val.numpy(force=True))
        np.testing.assert_array_equal(indices.numpy(force=True), ref_idx.numpy(force=True))


@pytest.mark.parametrize("cls,kwargs,message", [
    (nn.FractionalMaxPool2d, {"kernel_size": 2},
     "FractionalMaxPool2d requires specifying either an output size, or a pooling ratio"),
    (nn.FractionalMaxPool3d, {"kernel_size": 2},
     "FractionalMaxPool3d requires specifying either an output size, or a pooling ratio"),
    (nn.FractionalMaxPool2d, {"kernel_size": 2, "output_size": 3, "output_ratio": 0.5},
     "only one of output_size and output_ratio may be specified"),
    (nn.FractionalMaxPool2d, {"kernel_size": 2, "output_ratio": 1.0}, "output_ratio must be between 0 and 1 (got 1.0)"),
    (nn.FractionalMaxPool3d, {"kernel_size": 2, "output_ratio": (0.5, 0.5, 1)},
     "output_ratio must be between 0 and 1 (got (0.5, 0.5, 1))"),
    (nn.FractionalMaxPool3d, {"kernel_size": 0, "output_ratio": 0.5}, "kernel_size must be greater than 0, but got 0"),
])
def test_module_errors(cls, kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        cls(**kwargs)


# (dims, input shape, kwargs, samples shape/dtype or None, exception, torch's message)
ERRORS = [
    (2, (2, 3, 8, 9), {"kernel_size": 2}, None, ValueError,
     "fractional_max_pool2d requires specifying either an output_size or an output_ratio"),
    (3, (2, 3, 6, 7, 8), {"kernel_size": 2}, None, ValueError,
     "fractional_max_pool3d requires specifying either an output_size or an output_ratio"),
    (2, (2, 3, 8, 9), {"kernel_size": 2, "output_ratio": (0.5, 0.5, 0.5)}, None, ValueError,
     "fractional_max_pool2d requires output_ratio to either be a single Int or tuple of Ints."),
    (2, (2, 3, 8, 9), {"kernel_size": 2, "output_ratio": (0.5, 1.5)}, None, RuntimeError,
     "fractional_max_pool2d(): pool width 2 too large relative to input width 9"),
    (2, (2, 3, 8, 9), {"kernel_size": 2, "output_size": 8}, None, RuntimeError,
     "fractional_max_pool2d(): pool height 2 too large relative to input height 8"),
    (3, (2, 3, 6, 7, 8), {"kernel_size": 2, "output_size": (5, 3, 3)}, None, RuntimeError,
     "fractional_max_pool3d_out(): pool time 2 too large relative to input time 6"),
    (3, (2, 3, 6, 7, 8), {"kernel_size": 2, "output_size": (4, 6, 7)}, None, RuntimeError,
     "fractional_max_pool3d_out(): pool width 2 too large relative to input width 8"),
    (3, (2, 3, 6, 7, 8), {"kernel_size": 2, "output_size": (4, 6, 6)}, None, RuntimeError,
     "fractional_max_pool3d_out(): pool height 2 too large relative to input height 7"),
    (2, (2, 3, 8, 9), {"kernel_size": (0, 2), "output_size": 3}, None, RuntimeError,
     "fractional_max_pool2d(): kernel size should be greater than zero, but got 0x2"),
    (3, (2, 3, 6, 7, 8), {"kernel_size": (1, 0, 2), "output_size": 3}, None, RuntimeError,
     "fractional_max_pool3d(): kernel size should be greater than zero, but got 1x0x2"),
    (2, (2, 3, 8, 9), {"kernel_size": (2, 2, 2), "output_size": 3}, None, RuntimeError,
     "fractional_max_pool2d: kernel_size must either be a single Int or tuple of Ints"),
    (2, (2, 3, 8, 9), {"kernel_size": 2, "output_size": (3, 3, 3)}, None, RuntimeError,
     "fractional_max_pool2d: output_size must either be a single Int or tuple of Ints"),
    (3, (2, 3, 6, 7, 8), {"kernel_size": 2, "output_size": (3, 3)}, None, RuntimeError,
     "fractional_max_pool3d: output_size must either be a single Int or tuple of three Ints"),
    (2, (2, 3, 8, 9), {"kernel_size": 2.0, "output_size": 3}, None, TypeError,
     "fractional_max_pool2d(): argument 'kernel_size' (position 2) must be tuple of ints, not float"),
    (2, (2, 3, 8, 9), {"kernel_size": 2, "output_size": (3.0, 3)}, None, TypeError,
     "fractional_max_pool2d(): argument 'output_size' (position 3) must be tuple of ints, but found element of "
     "type float at pos 0"),
    (2, (8, 9), {"kernel_size": 2, "output_size": 3}, ((1, 3, 2), "float32"), RuntimeError,
     "fractional_max_pool2d(): Expected 3D or 4D tensor, but got: [8, 9]"),
    (3, (6, 7, 8), {"kernel_size": 2, "output_size": 3}, ((1, 6, 3), "float32"), RuntimeError,
     "fractional_max_pool3d_out(): Expected 4D or 5D tensor, but got: [6, 7, 8]"),
    (2, (8, 9), {"kernel_size": 2, "output_size": 3}, None, IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got -3)"),
    (2, (2, 0, 8, 9), {"kernel_size": 2, "output_size": 3}, None, RuntimeError,
     "fractional_max_pool2d(): Expected input to have non-zero size for non-batch dimensions, but got[2, 0, 8, 9] "
     "with dimension 1 being empty."),
    (3, (2, 3, 0, 7, 8), {"kernel_size": 2, "output_size": 3}, None, RuntimeError,
     "fractional_max_pool3d_out(): Expected input to have non-zero size for non-batch dimensions, but "
     "got[2, 3, 0, 7, 8] with dimension 2 being empty."),
    (2, (2, 3, 8, 9), {"kernel_size": 2, "output_size": (-1, 3)}, None, RuntimeError,
     "Trying to create tensor with negative dimension -1: [2, 3, -1, 3]"),
    (2, (2, 3, 8, 9), {"kernel_size": 2, "output_size": 3}, ((2, 3, 2), "float64"), RuntimeError,
     "Expect _random_samples to have the same dtype as input"),
    (2, (2, 3, 8, 9), {"kernel_size": 2, "output_size": 3}, ((2, 3), "float32"), RuntimeError,
     "Expect _random_samples to have 3 dimensions, got 2"),
    (2, (2, 3, 8, 9), {"kernel_size": 2, "output_size": 3}, ((1, 3, 2), "float32"), RuntimeError,
     "Expect _random_samples.size(0) no less then input batch size."),
    (2, (2, 3, 8, 9), {"kernel_size": 2, "output_size": 3}, ((2, 4, 2), "float32"), RuntimeError,
     "Expect _random_samples.size(1) equals to input channel size."),
    (3, (2, 3, 6, 7, 8), {"kernel_size": 2, "output_size": 3}, ((2, 3, 2), "float32"), RuntimeError,
     "Expect _random_samples.size(2) equals to 3; got 2."),
]
ERROR_IDS = [f"{i}-{e[-1][:40]}" for i, e in enumerate(ERRORS)]


def _error_call(lib, k, shape, kwargs, samples, int_input=False):
    x = lib.zeros(shape, dtype=lib.int64 if int_input else lib.float32)
    extra = {}
    if samples is not None:
        size, dtype = samples
        extra["_random_samples"] = lib.zeros(size, dtype=getattr(lib, dtype))
    fn = lib.nn.functional.fractional_max_pool2d if k == 2 else lib.nn.functional.fractional_max_pool3d
    return lambda: fn(x, **kwargs, **extra)


@pytest.mark.parametrize("k,shape,kwargs,samples,exc,message", ERRORS, ids=ERROR_IDS)
def test_errors_in_torchs_words(k, shape, kwargs, samples, exc, message):
    with pytest.raises(exc, match=re.escape(message)):
        _error_call(st, k, shape, kwargs, samples)()


def _torch_version(torch) -> tuple:
    return tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])


@pytest.mark.parametrize("k,shape,kwargs,samples,exc,message", ERRORS, ids=ERROR_IDS)
def test_errors_match_torch(k, shape, kwargs, samples, exc, message):
    torch = pytest.importorskip("torch")
    if "kernel size should be greater than zero" in message and _torch_version(torch) < (2, 14):
        pytest.skip(f"torch {torch.__version__} does not check kernel sizes yet (torch 2.14 does)")
    with pytest.raises(exc, match=re.escape(message)):
        _error_call(torch, k, shape, kwargs, samples)()


def test_integer_input_errors():
    with pytest.raises(NotImplementedError, match=re.escape("\"check_uniform_bounds\" not implemented for 'Long'")):
        F.fractional_max_pool2d(st.zeros((2, 3, 8, 9), dtype=st.int64), 2, 3)
    with pytest.raises(NotImplementedError,
                       match=re.escape("\"fractional_max_pool3d_out_frame\" not implemented for 'Long'")):
        F.fractional_max_pool3d(st.zeros((2, 3, 6, 7, 8), dtype=st.int64), 2, 3,
                                _random_samples=st.zeros((2, 3, 3), dtype=st.int64))
