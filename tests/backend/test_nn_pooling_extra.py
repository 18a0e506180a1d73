"""adaptive_max_pool1d/2d/3d (``strided/nn/adaptive_max_pooling.py``), max_unpool1d/2d/3d (``unpooling.py``),
lp_pool1d/2d/3d (``lp_pooling.py``) and their modules on every available backend: values, indices and gradients
against torch (when installed), a NumPy reference and gradcheck without it, torch's reprs and errors."""

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
RNG = np.random.default_rng(29)
NAN = float("nan")


def _ties_and_nans(shape, seed):
    """Small integers (many ties) with a few NaNs: torch's kernel takes the first maximum, the last NaN."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-2, 3, shape).astype(np.float64)
    x.reshape(-1)[rng.choice(x.size, max(1, x.size // 9), replace=False)] = NAN
    return x


# (dims, input shape, output_size): even bins, uneven ones, output larger than input, None, unbatched
ADAPTIVE = [
    (1, (2, 3, 12), 4),
    (1, (3, 11), 4),
    (1, (2, 3, 5), 8),
    (2, (2, 3, 8, 6), (4, 3)),
    (2, (2, 3, 7, 5), (3, 2)),
    (2, (3, 7, 5), (4, None)),
    (2, (2, 2, 3, 5), (5, 7)),
    (3, (2, 2, 4, 6, 4), 2),
    (3, (2, 2, 5, 7, 3), (2, 3, 2)),
    (3, (2, 5, 4, 6), (None, 3, 4)),
]
ADAPTIVE_IDS = [f"{k}d-{shape}-{out}" for k, shape, out in ADAPTIVE]


def _adaptive(k):
    return f"adaptive_max_pool{k}d"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("k,shape,out", ADAPTIVE, ids=ADAPTIVE_IDS)
def test_adaptive_max_pool_matches_torch(nn_oracle, device, k, shape, out):
    x = RNG.standard_normal(shape)
    nn_oracle(lambda F, x: getattr(F, _adaptive(k))(x, out), [x], device, "float32")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("k,shape,out", ADAPTIVE, ids=ADAPTIVE_IDS)
def test_adaptive_max_pool_ties_and_nans_match_torch(nn_oracle, device, k, shape, out):
    """Values and gradients where bins hold ties and NaNs (the gradient goes to torch's chosen element)."""
    x = _ties_and_nans(shape, seed=len(shape) + k)
    nn_oracle(lambda F, x: getattr(F, _adaptive(k))(x, out), [x], device, "float64")


@pytest.mark.parametrize("device", DATA_DEVICES)
@pytest.mark.parametrize("k,shape,out", ADAPTIVE, ids=ADAPTIVE_IDS)
def test_adaptive_max_pool_indices_match_torch(device, k, shape, out):
    torch = pytest.importorskip("torch")
    for x in (RNG.standard_normal(shape), _ties_and_nans(shape, seed=k)):
        s_val, s_idx = getattr(F, _adaptive(k) + "_with_indices")(st.tensor(x, device=device), out)
        t_val, t_idx = getattr(torch.nn.functional, _adaptive(k))(torch.tensor(x), out, return_indices=True)
        assert s_idx.dtype is st.int64
        np.testing.assert_array_equal(s_idx.numpy(force=True), t_idx.numpy())
        np.testing.assert_array_equal(s_val.numpy(force=True), t_val.numpy())


def test_adaptive_max_pool_half_and_empty_batch_match_torch():
    torch = pytest.importorskip("torch")
    x = _ties_and_nans((2, 3, 7, 5), seed=3)
    for dtype in ("float16", "bfloat16"):
        s_val, s_idx = F.adaptive_max_pool2d(st.tensor(x).to(getattr(st, dtype)), (3, 2), return_indices=True)
        t_val, t_idx = torch.nn.functional.adaptive_max_pool2d(torch.tensor(x).to(getattr(torch, dtype)), (3, 2),
                                                               return_indices=True)
        assert s_val.dtype is getattr(st, dtype)
        np.testing.assert_array_equal(s_idx.numpy(), t_idx.numpy())
        np.testing.assert_array_equal(s_val.float().numpy(), t_val.float().numpy())
    s_val, s_idx = F.adaptive_max_pool3d(st.zeros(0, 2, 3, 4, 5), (2, 0, 3), return_indices=True)
    t_val, t_idx = torch.nn.functional.adaptive_max_pool3d(torch.zeros(0, 2, 3, 4, 5), (2, 0, 3), return_indices=True)
    assert tuple(s_val.shape) == tuple(t_val.shape) == tuple(s_idx.shape)


def _numpy_adaptive_max(x, out):
    """torch's CPU kernel, loop by loop: row-major scan of each bin, ``val > max or isnan(val)`` wins."""
    k = len(out)
    spatial = x.shape[-k:]
    lead = x.shape[:-k]
    vals, idxs = np.empty(lead + tuple(out)), np.empty(lead + tuple(out), dtype=np.int64)
    for pre in itertools.product(*map(range, lead)):
        for cell in itertools.product(*map(range, out)):
            ranges = [range(i * n // m, -(-(i + 1) * n // m)) for i, n, m in zip(cell, spatial, out)]
            best, arg = -np.inf, np.ravel_multi_index([r[0] for r in ranges], spatial)
            for pos in itertools.product(*ranges):
                v = x[pre + pos]
                if v > best or np.isnan(v):
                    best, arg = v, np.ravel_multi_index(pos, spatial)
            vals[pre + cell], idxs[pre + cell] = best, arg
    return vals, idxs


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_adaptive_max_pool_and_unpool_numpy_reference_without_torch(device):
    for k, shape, out in ADAPTIVE[:3] + ADAPTIVE[4:5] + ADAPTIVE[8:9]:
        x = _ties_and_nans(shape, seed=11)
        sizes = [out] * k if isinstance(out, int) else list(out)
        ref_val, ref_idx = _numpy_adaptive_max(x, sizes)
        val, idx = getattr(F, _adaptive(k))(st.tensor(x, device=device), out, return_indices=True)
        np.testing.assert_array_equal(idx.numpy(force=True), ref_idx)
        np.testing.assert_array_equal(val.numpy(force=True), ref_val)
        if any(m > n for m, n in zip(sizes, shape[-k:])):
            continue
        # kernel n - m + 1 at stride 1: the unpooled default size is the input's
        kernel = [n - m + 1 for m, n in zip(sizes, shape[-k:])]
        unpool = getattr(F, f"max_unpool{k}d")(val, idx, kernel, 1)
        expected = np.zeros(shape).reshape(shape[:-k] + (-1,))
        np.put_along_axis(expected, ref_idx.reshape(shape[:-k] + (-1,)), ref_val.reshape(shape[:-k] + (-1,)), -1)
        np.testing.assert_array_equal(unpool.numpy(force=True), expected.reshape(shape))


def test_gradcheck_without_torch():
    x = st.tensor(RNG.standard_normal((2, 2, 5, 7))).requires_grad_()
    assert gradcheck(lambda x: F.adaptive_max_pool2d(x, (3, 4)), (x,))
    x3 = st.tensor(RNG.standard_normal((1, 2, 3, 5, 4))).requires_grad_()
    assert gradcheck(lambda x: F.adaptive_max_pool3d(x, (2, 3, 3)), (x3,))
    v = st.tensor(RNG.standard_normal((2, 2, 2, 3))).requires_grad_()
    _, idx = F.max_pool2d(st.tensor(RNG.standard_normal((2, 2, 5, 7))), 2, return_indices=True)
    assert gradcheck(lambda v: F.max_unpool2d(v, idx, 2, output_size=(5, 7)), (v,))
    p = st.tensor(np.abs(RNG.standard_normal((2, 2, 6, 5))) + 0.5).requires_grad_()
    assert gradcheck(lambda p: F.lp_pool2d(p, 3, 2, ceil_mode=True), (p,))
    assert gradcheck(lambda p: F.lp_pool1d(p[0], 2.0, 3, stride=2), (p,))


# max_pool -> max_unpool round trips: (dims, input shape, pool kwargs, unpool output_size)
UNPOOL = [
    (1, (2, 3, 9), {"kernel_size": 2}, None),
    (1, (3, 9), {"kernel_size": 3, "stride": 2, "padding": 1}, [9]),
    (1, (2, 3, 9), {"kernel_size": 2}, (2, 3, 9)),
    (2, (2, 3, 6, 8), {"kernel_size": 2}, None),
    (2, (2, 3, 7, 9), {"kernel_size": 2}, (7, 9)),
    (2, (3, 7, 8), {"kernel_size": 3, "stride": 2, "padding": 1}, (7, 8)),
    (2, (2, 2, 6, 6), {"kernel_size": (3, 2), "stride": 1}, None),
    (3, (2, 2, 4, 6, 4), {"kernel_size": 2}, None),
    (3, (2, 5, 7, 5), {"kernel_size": 2, "stride": (1, 2, 2), "padding": 1}, (5, 7, 5)),
]
UNPOOL_IDS = [f"{k}d-{shape}-{kw}-{out}" for k, shape, kw, out in UNPOOL]


def _round_trip(k, kw, out):
    def fn(F, x):
        values, indices = getattr(F, f"max_pool{k}d")(x, return_indices=True, **kw)
        stride, padding = kw.get("stride"), kw.get("padding", 0)
        return getattr(F, f"max_unpool{k}d")(values, indices, kw["kernel_size"], stride, padding, out)

    return fn


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("k,shape,kw,out", UNPOOL, ids=UNPOOL_IDS)
def test_max_unpool_round_trip_matches_torch(nn_oracle, device, k, shape, kw, out):
    nn_oracle(_round_trip(k, kw, out), [RNG.standard_normal(shape)], device, "float32")


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_max_unpool_keeps_exactly_the_maxima_without_torch(device):
    x = RNG.standard_normal((2, 3, 6, 8))
    values, indices = F.max_pool2d(st.tensor(x, device=device), 2, return_indices=True)
    y = F.max_unpool2d(values, indices, 2).numpy(force=True)
    blocks = x.reshape(2, 3, 3, 2, 4, 2)
    is_max = blocks == blocks.max(axis=(3, 5), keepdims=True)
    np.testing.assert_array_equal(y, np.where(is_max, blocks, 0.0).reshape(x.shape))


@pytest.mark.parametrize("device", DEVICES)
def test_max_unpool_of_adaptive_indices_matches_torch(nn_oracle, device):
    def fn(F, x):
        values, indices = F.adaptive_max_pool2d(x, (3, 2), return_indices=True)
        return F.max_unpool2d(values, indices, (2, 2), output_size=(2, 3, 7, 5))

    nn_oracle(fn, [RNG.standard_normal((2, 3, 7, 5))], device, "float32")


LP = [
    (1, (2, 3, 10), 1, {"kernel_size": 3}),
    (1, (3, 10), 2, {"kernel_size": 3, "stride": 2, "ceil_mode": True}),
    (2, (2, 3, 7, 8), 1, {"kernel_size": 2}),
    (2, (2, 3, 7, 8), 2, {"kernel_size": (3, 2), "stride": (2, 1)}),
    (2, (3, 7, 8), 3, {"kernel_size": 3, "stride": 2, "ceil_mode": True}),
    (2, (2, 3, 7, 8), 1.5, {"kernel_size": 2, "ceil_mode": True}),
    (3, (2, 2, 5, 6, 4), 2, {"kernel_size": 2}),
    (3, (2, 5, 6, 7), 3, {"kernel_size": (2, 3, 2), "stride": 2, "ceil_mode": True}),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("k,shape,p,kw", LP, ids=[f"{k}d-{s}-p{p}-{kw}" for k, s, p, kw in LP])
def test_lp_pool_matches_torch(nn_oracle, device, k, shape, p, kw):
    x = RNG.standard_normal(shape)
    if p not in (1, 2):  # odd and fractional powers of a negative sum are NaN in torch too
        x = np.abs(x) + 0.1
    nn_oracle(lambda F, x: getattr(F, f"lp_pool{k}d")(x, p, **kw), [x], device, "float64")


@pytest.mark.parametrize("device", DEVICES)
def test_lp_pool_zero_window_has_zero_gradient(nn_oracle, device):
    x = RNG.standard_normal((1, 2, 4, 4))
    x[0, 0, :2, :2] = 0.0  # a window whose sum of squares is zero: no gradient, not NaN
    nn_oracle(lambda F, x: F.lp_pool2d(x, 2, 2), [x], device, "float64")
    if device == "cpu":
        t = st.tensor(x).requires_grad_()
        F.lp_pool2d(t, 2, 2).sum().backward()
        assert np.all(t.grad.numpy()[0, 0, :2, :2] == 0.0)


def test_lp_pool_numpy_reference_without_torch():
    x = RNG.standard_normal((2, 3, 6, 9))
    windows = np.abs(x).reshape(2, 3, 3, 2, 3, 3)  # p = +-inf: max / min of |x| (torch 2.11 still took pow(x, inf))
    np.testing.assert_array_equal(F.lp_pool2d(st.tensor(x), float("inf"), (2, 3)).numpy(), windows.max(axis=(3, 5)))
    np.testing.assert_array_equal(F.lp_pool2d(st.tensor(x), -float("inf"), (2, 3)).numpy(), windows.min(axis=(3, 5)))
    y = F.lp_pool2d(st.tensor(x), 3.0, (2, 3)).numpy()
    windows = x.reshape(2, 3, 3, 2, 3, 3)
    s = (windows ** 3).sum(axis=(3, 5))
    np.testing.assert_allclose(y, np.where(s >= 0, s, np.nan) ** (1 / 3), rtol=1e-12)
    np.testing.assert_allclose(F.lp_pool1d(st.tensor(x[0]), 1, 3).numpy(), x[0].reshape(3, 6, 3, 3).sum(-1),
                               rtol=1e-12, atol=1e-12)


def test_modules_reprs_and_forward():
    assert repr(nn.AdaptiveMaxPool2d((5, None))) == "AdaptiveMaxPool2d(output_size=(5, None))"
    assert repr(nn.AdaptiveMaxPool1d(3, return_indices=True)) == "AdaptiveMaxPool1d(output_size=3)"
    assert repr(nn.AdaptiveMaxPool3d(2)) == "AdaptiveMaxPool3d(output_size=2)"
    assert repr(nn.LPPool2d(2, 3)) == "LPPool2d(norm_type=2, kernel_size=3, stride=None, ceil_mode=False)"
    assert repr(nn.LPPool1d(1.5, 3, stride=2, ceil_mode=True)) == (
        "LPPool1d(norm_type=1.5, kernel_size=3, stride=2, ceil_mode=True)")
    assert repr(nn.LPPool3d(3, (1, 2, 2))) == (
        "LPPool3d(norm_type=3, kernel_size=(1, 2, 2), stride=None, ceil_mode=False)")
    assert repr(nn.MaxUnpool1d(2)) == "MaxUnpool1d(kernel_size=(2,), stride=(2,), padding=(0,))"
    assert repr(nn.MaxUnpool2d(2, stride=1)) == "MaxUnpool2d(kernel_size=(2, 2), stride=(1, 1), padding=(0, 0))"
    assert repr(nn.MaxUnpool3d((1, 2, 3), padding=1)) == (
        "MaxUnpool3d(kernel_size=(1, 2, 3), stride=(1, 2, 3), padding=(1, 1, 1))")
    with pytest.raises(ValueError, match="norm_type must be a non-zero value, but got 0"):
        nn.LPPool2d(0, 2)
    x = st.tensor(np.abs(RNG.standard_normal((2, 3, 7, 5))))
    values, indices = nn.AdaptiveMaxPool2d((3, 2), return_indices=True)(x)
    assert tuple(values.shape) == tuple(indices.shape) == (2, 3, 3, 2)
    assert tuple(nn.AdaptiveMaxPool1d(4)(st.zeros(3, 9)).shape) == (3, 4)
    assert tuple(nn.AdaptiveMaxPool3d((None, 1, 2))(st.zeros(2, 3, 4, 5)).shape) == (2, 3, 1, 2)
    pooled, idx = nn.MaxPool2d(2, return_indices=True)(x)
    restored = nn.MaxUnpool2d(2)(pooled, idx, output_size=[7, 5])
    assert tuple(restored.shape) == (2, 3, 7, 5)
    np.testing.assert_array_equal(nn.MaxPool2d(2)(restored).numpy(), pooled.numpy())
    assert tuple(nn.LPPool2d(2, 3, stride=2)(x).shape) == (2, 3, 3, 2)
    assert tuple(nn.LPPool1d(2, 2)(st.ones(3, 9)).shape) == (3, 4)
    assert tuple(nn.LPPool3d(1, 2)(st.ones(1, 2, 4, 4, 4)).shape) == (1, 2, 2, 2, 2)


def test_adaptive_max_pool_errors_in_torchs_words():
    with pytest.raises(RuntimeError, match=r"adaptive_max_pool2d\(\): Expected 3D or 4D tensor, but got: \[2, 3\]"):
        F.adaptive_max_pool2d(st.zeros(2, 3), 2)
    with pytest.raises(RuntimeError, match=r"adaptive_max_pool3d\(\): Expected 4D or 5D tensor, but got: \[2, 4, 4\]"):
        F.adaptive_max_pool3d(st.zeros(2, 4, 4), 2)
    with pytest.raises(RuntimeError, match=r"Expected 2 to 3 dimensions, but got 4-dimensional tensor for argument "
                       r"#1 'self' \(while checking arguments for adaptive_max_pool1d\)"):
        F.adaptive_max_pool1d(st.zeros(2, 2, 4, 4), 2)
    with pytest.raises(RuntimeError, match=r"adaptive_max_pool2d\(\): Expected input to have non-zero size for "
                       r"non-batch dimensions, but input has sizes \[2, 0, 4\] with dimension 1 being empty"):
        F.adaptive_max_pool2d(st.zeros(2, 0, 4), 2)
    with pytest.raises(RuntimeError, match=r"adaptive_max_pool2d\(\): internal error: output_size.size\(\) must be 2"):
        F.adaptive_max_pool2d(st.zeros(2, 2, 4, 4), (2, 3, 4))
    with pytest.raises(RuntimeError, match=r"adaptive_max_pool3d\(\): internal error: output_size.size\(\) must be 3"):
        F.adaptive_max_pool3d(st.zeros(2, 4, 4, 4), (2, 2))
    with pytest.raises(RuntimeError, match=r"adaptive_max_pool1d\(\) argument 'output_size' should contain one int "
                       r"\(got 2\)"):
        F.adaptive_max_pool1d(st.zeros(2, 4), (2, 3))
    with pytest.raises(ValueError, match="Input dimension should be at least 3"):
        F.adaptive_max_pool2d(st.zeros(4, 4), (None, 2))
    with pytest.raises(RuntimeError, match=r"Trying to create tensor with negative dimension -1: \[2, 2, -1, 2\]"):
        F.adaptive_max_pool2d(st.zeros(2, 2, 4, 4), (-1, 2))
    with pytest.raises(NotImplementedError, match="\"adaptive_max_pool2d\" not implemented for 'Long'"):
        F.adaptive_max_pool2d(st.zeros(2, 2, 4, 4, dtype=st.int64), 2)
    with pytest.raises(TypeError, match=r"adaptive_max_pool2d\(\): argument 'output_size' must be int or tuple of "
                       r"ints, not 2.5"):
        F.adaptive_max_pool2d(st.zeros(2, 2, 4, 4), 2.5)
    with pytest.raises(TypeError, match=r"adaptive_max_pool1d\(\): argument 'input' must be Tensor, not list"):
        F.adaptive_max_pool1d([1.0, 2.0], 1)


def test_max_unpool_errors_in_torchs_words():
    values, indices = F.max_pool2d(st.arange(16.0).reshape(1, 1, 4, 4), 2, return_indices=True)  # 5, 7, 13, 15
    one_bad = st.tensor([[[[5, 7], [13, 103]]]])  # torch names one bad index; several: whichever its loop met
    with pytest.raises(RuntimeError, match=r"Found an invalid max index: 103 \(output volumes are of size 4x4\)"):
        F.max_unpool2d(values, one_bad, 2)
    with pytest.raises(RuntimeError, match=r"Found an invalid max index: -1 \(output volumes are of size 4x4\)"):
        F.max_unpool2d(values, st.tensor([[[[5, 7], [-1, 15]]]]), 2)
    with pytest.raises(RuntimeError, match=r"Found an invalid max index: 7 \(output volumes are of size 4x1\)"):
        F.max_unpool1d(values[0, :, 0], st.tensor([[0, 7]]), 2)
    with pytest.raises(ValueError, match=r'invalid output_size "\(6, 5\)" \(dim 0 must be between 2 and 6\)'):
        F.max_unpool2d(values, indices, 2, output_size=(6, 5))
    with pytest.raises(ValueError, match="output_size should be a sequence containing 2 or 4 elements, but it has a "
                       "length of '1'"):
        F.max_unpool2d(values, indices, 2, output_size=(5,))
    with pytest.raises(RuntimeError, match="elements in indices should be type int64 but got: Int"):
        F.max_unpool2d(values, indices.int(), 2)
    with pytest.raises(RuntimeError, match=r"Expected shape of indices to be same as that of the input tensor "
                       r"\(\[1, 1, 2, 2\]\) but got indices tensor with shape: \[1, 1, 2, 1\]"):
        F.max_unpool2d(values, indices[..., :1], 2)
    with pytest.raises(RuntimeError, match="Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor "
                       "with 2 dimensions."):
        F.max_unpool2d(values[0, 0], indices[0, 0], 2)
    with pytest.raises(RuntimeError, match="Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor "
                       "with 3 dimensions."):
        F.max_unpool3d(values[0], indices[0], 2)
    with pytest.raises(RuntimeError, match=r"strides should be greater than zero, but got stride: \[0, 0, 0\]"):
        F.max_unpool3d(values, indices, 2, stride=0)
    with pytest.raises(ValueError, match=r"max_unpooling: output_size must contain non-negative spatial dimensions, "
                       r"but got output_size\[0\]=-1"):
        F.max_unpool2d(values, indices, 2, stride=1, padding=2)
    with pytest.raises(NotImplementedError, match="\"max_unpool2d\" not implemented for 'Long'"):
        F.max_unpool2d(values.long(), indices, 2)
    with pytest.raises(RuntimeError, match=r"max_unpooling2d_forward_out_cpu\(\): Expected input to have non-zero "
                       r"size for non-batch dimensions, but got \[1, 0, 2, 2\] with dimension 1 being empty."):
        F.max_unpool2d(st.zeros(1, 0, 2, 2), st.zeros(1, 0, 2, 2, dtype=st.int64), 2)
    # an empty output volume is written and checked no further, as torch's kernel
    assert tuple(F.max_unpool2d(values[0], indices[0], 1, stride=1, padding=1).shape) == (1, 0, 0)


def test_lp_pool_errors_in_torchs_words():
    with pytest.raises(ValueError, match="norm_type must be a non-zero value, but got 0"):
        F.lp_pool2d(st.ones(1, 2, 4, 4), 0, 2)
    with pytest.raises(IndexError, match=re.escape("Dimension out of range (expected to be in range of [-2, 1], but "
                                                   "got -3)")):  # torch's avg_pool2d reads size(-3) first
        F.lp_pool2d(st.ones(4, 4), 2, 2)
    with pytest.raises(TypeError, match=r"lp_pool3d\(\): argument 'input' must be Tensor, not list"):
        F.lp_pool3d([1.0], 2, 2)


def test_average_pools_of_int64_truncate_and_other_integers_are_refused_as_torch():
    """torch's CPU average pools take int64 (the window mean truncated toward zero, divisor_override too) and
    refuse the other integer dtypes and bool in their AT_DISPATCH words."""
    import re

    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a = {"avg_pool1d": rng.integers(-50, 50, (2, 3, 9)), "avg_pool2d": rng.integers(-50, 50, (2, 3, 7, 6)),
         "avg_pool3d": rng.integers(-50, 50, (1, 2, 5, 6, 4))}
    for name, k, s, p, ceil, cip, dov in itertools.product(a, (2, 3), (None, 2), (0, 1), (False, True),
                                                          (True, False), (None, 3)):
        kw = {"kernel_size": k, "stride": s, "padding": p, "ceil_mode": ceil, "count_include_pad": cip}
        if name != "avg_pool1d":
            kw["divisor_override"] = dov
        elif dov is not None:
            continue
        got = getattr(st.nn.functional, name)(st.from_numpy(a[name].copy()), **kw)
        want = getattr(torch.nn.functional, name)(torch.from_numpy(a[name].copy()), **kw)
        assert got.dtype is st.int64 and got.numpy().tolist() == want.numpy().tolist(), (name, kw)
    for d, (name, shape) in itertools.product(("int32", "uint8", "bool"), (("avg_pool1d", (1, 1, 4)),
                                                                          ("avg_pool2d", (1, 1, 4, 4)),
                                                                          ("avg_pool3d", (1, 1, 4, 4, 4)))):
        with pytest.raises(NotImplementedError) as want:
            getattr(torch.nn.functional, name)(torch.ones(shape, dtype=getattr(torch, d)), 2)
        with pytest.raises(NotImplementedError, match=re.escape(str(want.value))):
            getattr(st.nn.functional, name)(st.ones(shape, dtype=getattr(st, d)), 2)
