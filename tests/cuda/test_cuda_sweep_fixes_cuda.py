"""Fixes found by running torch's OpInfo samples through strided's CUDA backend against torch's CUDA results
(scratch sweep on an H200, 2026-11-30): half-precision convolutions whose col2im summed rounded columns, grid
sampling in half precision, and CUDA-only dtype support torch has (bool abs / trace, integral histc)."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]

F = st.nn.functional
HALF = [st.bfloat16, st.float16]
# one unit in the last place, relative: what a single rounding of the exact result may lose
ULP = {st.bfloat16: 2.0 ** -7, st.float16: 2.0 ** -10}


def _half_inputs(shapes, dtype, seed=0):
    """Half-valued tensors on CUDA and their exact float64 copies on the CPU (values like torch's make_tensor)."""
    g = st.Generator().manual_seed(seed)
    cpu = [(st.rand(s, generator=g) * 18 - 9).to(dtype) for s in shapes]
    return [t.to("cuda") for t in cpu], [t.double() for t in cpu]


def _assert_rounded_once(got, ref, dtype):
    got = got.cpu().double().numpy()
    ref = ref.numpy()
    bound = ULP[dtype] * np.abs(ref) + 1e-3
    worst = np.max(np.abs(got - ref) - bound)
    assert worst <= 0, f"error exceeds one rounding by {worst}"


# -- Note [Half columns] / Note [Half transposed convolutions] ---------------------------------------------------
CONVS = {
    # the direct kernel: one group, 1-d / 2-d
    "transpose2d s2 p2 op1": (F.conv_transpose2d, (1, 3, 4, 4), (3, 3, 3, 3), dict(stride=2, padding=2,
                                                                                   output_padding=1)),
    "transpose2d": (F.conv_transpose2d, (2, 4, 5, 5), (4, 6, 3, 3), {}),
    "transpose1d": (F.conv_transpose1d, (1, 4, 5), (4, 8, 3), {}),
    # the composite: grouped, 3-d
    "transpose2d groups": (F.conv_transpose2d, (2, 4, 4, 4), (4, 1, 3, 3), dict(groups=4)),
    "transpose3d": (F.conv_transpose3d, (1, 4, 5, 5, 5), (4, 8, 3, 3, 3), {}),
}


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("name", list(CONVS))
def test_half_transposed_convolutions_round_once(name, dtype):
    fn, xs, ws, kw = CONVS[name]
    (x, w), (x64, w64) = _half_inputs([xs, ws], dtype)
    _assert_rounded_once(fn(x, w, **kw), fn(x64, w64, **kw), dtype)


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("fn, xs, ws, kw", [
    (F.conv2d, (3, 4, 6, 6), (5, 4, 3, 3), dict(padding=1)),      # direct, per-sample weight gradient
    (F.conv2d, (2, 8, 5, 5), (3, 8, 3, 3), dict(stride=2)),       # direct, one-GEMM weight gradient
    (F.conv1d, (2, 3, 9), (4, 3, 3), {}),
    (F.conv2d, (2, 4, 6, 6), (4, 2, 3, 3), dict(groups=2)),       # composite
])
def test_half_convolution_gradients_round_once(fn, xs, ws, kw, dtype):
    (x, w, gy), (x64, w64, gy64) = _half_inputs([xs, ws, fn(st.ones(xs), st.ones(ws), **kw).shape], dtype, seed=1)
    x.requires_grad_()
    w.requires_grad_()
    fn(x, w, **kw).backward(gy)
    x64.requires_grad_()
    w64.requires_grad_()
    fn(x64, w64, **kw).backward(gy64)
    _assert_rounded_once(x.grad, x64.grad, dtype)
    _assert_rounded_once(w.grad, w64.grad, dtype)


def test_float32_out_of_a_half_gemm():
    from strided.backends.cuda import blas

    (a, b), (a64, b64) = _half_inputs([(2, 33, 17), (2, 17, 9)], st.bfloat16)
    out = st.empty((2, 33, 9), device="cuda")
    blas.gemm("test", out, a, b)
    np.testing.assert_allclose(out.cpu().double().numpy(), (a64 @ b64).numpy(), rtol=1e-6, atol=1e-5)
    blas.gemm("test", out, a, b, beta=1.0, c=out)  # adding into a float32 accumulator
    np.testing.assert_allclose(out.cpu().double().numpy(), 2 * (a64 @ b64).numpy(), rtol=1e-6, atol=1e-5)


# -- grid sampling in half precision: coordinates and weights in float32 ------------------------------------------
@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_half_grid_sample_matches_the_float32_one(dtype, mode, padding_mode):
    g = st.Generator().manual_seed(2)
    x = st.randn((2, 3, 5, 20), generator=g).to(dtype)
    grid = (st.rand((2, 13, 10, 2), generator=g) * 2.4 - 1.2).to(dtype)
    for align in (False, True):
        got = F.grid_sample(x.cuda(), grid.cuda(), mode=mode, padding_mode=padding_mode, align_corners=align)
        want = F.grid_sample(x.float(), grid.float(), mode=mode, padding_mode=padding_mode, align_corners=align)
        assert got.dtype is dtype
        assert st.equal(got.cpu(), want.to(dtype))


# -- dtypes torch's CUDA kernels take and its CPU kernels refuse ----------------------------------------------------
def test_bool_abs_trace_softsign_on_cuda():
    b = st.tensor([[True, False], [False, True]], device="cuda")
    assert st.abs(b).dtype is st.bool and st.abs(b).tolist() == b.tolist()
    assert b.clone().abs_().tolist() == b.tolist()
    t = st.trace(b)
    assert t.dtype is st.int64 and t.item() == 2
    np.testing.assert_allclose(F.softsign(b).cpu().numpy(), [[0.5, 0.0], [0.0, 0.5]])
    with pytest.raises(NotImplementedError, match="\"abs_cpu\" not implemented for 'Bool'"):
        st.abs(b.cpu())
    with pytest.raises(NotImplementedError, match="\"trace\" not implemented for 'Bool'"):
        st.trace(b.cpu())


@pytest.mark.parametrize("dtype", [st.int64, st.int32, st.uint8, st.int8])
def test_integer_histc_on_cuda(dtype):
    x = st.arange(10, dtype=dtype, device="cuda")
    h = st.histc(x, bins=3, min=0, max=9)  # integer bins: 0-2, 3-5, 6-9 (torch's CUDA kernel)
    assert h.dtype is dtype and h.tolist() == [3, 3, 4]
    assert st.histc(x, bins=4).tolist() == [3, 2, 2, 3]  # min == max: the data's range, (x * 4) // 9
    assert st.histc(x, bins=2, min=2.7, max=5.9).tolist() == [2, 2]  # bounds truncated to 2 and 5: 2, 3 | 4, 5
    assert st.histc(st.full((3,), 4, dtype=dtype, device="cuda"), bins=2).tolist() == [0, 3]  # [3, 5] around 4
    with pytest.raises(NotImplementedError, match="\"histogram_cpu\" not implemented for"):
        st.histc(x.cpu())
    with pytest.raises(NotImplementedError, match="\"histc\" not implemented for 'Bool'"):
        st.histc(x.bool())


def test_take_along_dim_wraps_indices_on_cuda():
    x = st.arange(10.0, device="cuda").view(2, 5)
    idx = st.tensor([[-6, 4], [12, -1]], device="cuda")
    assert st.take_along_dim(x, idx, 1).tolist() == [[4.0, 4.0], [7.0, 9.0]]


@pytest.mark.parametrize("dtype", HALF)
def test_native_layer_norm_keeps_float32_statistics_on_cuda(dtype):
    x = st.randn(2, 3, 4).to(dtype)
    out, mean, rstd = st.native_layer_norm(x.cuda(), [4], None, None, 1e-5)
    assert out.dtype is dtype and mean.dtype is st.float32 and rstd.dtype is st.float32  # torch's CUDA kernel
    cpu = st.native_layer_norm(x, [4], None, None, 1e-5)
    assert cpu[1].dtype is dtype and cpu[2].dtype is dtype  # torch's CPU kernel: the input's dtype
    np.testing.assert_allclose(mean.cpu().numpy(), cpu[1].float().numpy(), rtol=1e-2, atol=1e-2)


def test_integer_histc_bounds_are_int64_on_cuda():
    x = st.tensor([0, 3, 250], dtype=st.uint8, device="cuda")
    assert st.histc(x, bins=2, min=-10, max=0).tolist() == [0, 1]  # [-10, 0] in int64: only the 0, in the top bin
    assert st.histc(st.zeros(3, dtype=st.uint8, device="cuda"), bins=2).tolist() == [0, 3]  # [-1, 1]
