"""Convolutions over slices of the batch (Note [Convolution batch chunks]): with a column budget small enough to
take one or two samples per slice, every kind of convolution -- 1-3 d, transposed, grouped, strided, dilated,
channels-last, half precision -- gives the values and gradients of the whole-batch path and of torch, runs the
slices (counted), keeps the output's layout, and a double backward still differentiates."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.ops.composite.convolution as conv_op
import strided.ops.composite.convolution_chunks as chunks
from strided.autograd import gradgradcheck
from strided.nn import functional as F
from strided.testing import available_devices

DEVICES = [d for d in available_devices() if d != "meta"]
RNG = np.random.default_rng(29)

# (name, function, shapes of input / weight / bias)
CASES = [
    ("conv2d", lambda F, x, w, b: F.conv2d(x, w, b, padding=1), [(5, 4, 7, 9), (6, 4, 3, 3), (6,)]),
    ("conv2d-groups-stride", lambda F, x, w, b: F.conv2d(x, w, b, padding=1, groups=2, stride=2),
     [(5, 4, 7, 9), (6, 2, 3, 3), (6,)]),
    ("conv2d-dilation-asym", lambda F, x, w, b: F.conv2d(x, w, b, padding=(2, 0), dilation=(2, 1)),
     [(3, 4, 9, 8), (5, 4, 3, 2), (5,)]),
    ("conv1d", lambda F, x, w, b: F.conv1d(x, w, b, padding=1, dilation=2), [(5, 4, 17), (6, 4, 3), (6,)]),
    ("conv3d", lambda F, x, w, b: F.conv3d(x, w, b, padding=1), [(3, 2, 4, 5, 6), (4, 2, 3, 3, 3), (4,)]),
    ("conv_transpose2d", lambda F, x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1),
     [(5, 4, 6, 7), (4, 3, 4, 4), (3,)]),
    ("conv_transpose2d-output-padding", lambda F, x, w, b: F.conv_transpose2d(x, w, b, stride=2, output_padding=2,
                                                                              dilation=3),
     [(3, 4, 5, 6), (4, 3, 3, 3), (3,)]),
    ("conv_transpose1d", lambda F, x, w, b: F.conv_transpose1d(x, w, b, stride=2), [(3, 4, 5), (4, 2, 3), (2,)]),
    ("conv_transpose3d", lambda F, x, w, b: F.conv_transpose3d(x, w, b, stride=2),
     [(3, 4, 3, 4, 5), (4, 2, 2, 2, 2), (2,)]),
]


@pytest.fixture(autouse=True)
def full_float32():
    """float32 convolutions without TF32 on CUDA, so that two GEMM algorithms agree to rounding."""
    with st.backends.cudnn.flags(enabled=True, allow_tf32=False):
        yield


@pytest.fixture
def slices(monkeypatch):
    """A budget of one byte (one sample per slice) and a list of the (step, n) of every sliced call."""
    calls = []
    real = chunks.over_batch

    def counted(step, n, run):
        calls.append((step, n))
        return real(step, n, run)

    monkeypatch.setattr(chunks, "over_batch", counted)
    monkeypatch.setattr(conv_op, "over_batch", counted)
    monkeypatch.setattr(chunks, "COLUMN_BUDGET", 1)
    if "cuda" in DEVICES:  # the CUDA kernel's own slices (Note [Direct CUDA convolution])
        from strided.backends.cuda.kernels import convolution_ops as direct

        real_step = direct._step

        def counted_step(g, itemsize):
            step = real_step(g, itemsize)
            if step < g.n:
                calls.append((step, g.n))
            return step

        monkeypatch.setattr(direct, "_step", counted_step)
    return calls


def _run(fn, arrays, device, dtype, channels_last=False, upstream=None):
    ins = [st.tensor(a, dtype=dtype, device=device) for a in arrays]
    if channels_last:
        ins[0] = ins[0].contiguous(memory_format=st.channels_last)
    ins = [t.requires_grad_() for t in ins]
    out = fn(F, *ins)
    out.backward(st.tensor(upstream, dtype=dtype, device=device))
    return out, [out.detach().float().cpu().numpy()] + [t.grad.float().cpu().numpy() for t in ins]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,fn,shapes", CASES, ids=[c[0] for c in CASES])
def test_slices_give_the_whole_batch_result(slices, monkeypatch, device, name, fn, shapes):
    arrays = [RNG.standard_normal(s) for s in shapes]
    whole_out, whole = None, None
    with monkeypatch.context() as m:
        m.setattr(chunks, "COLUMN_BUDGET", 1 << 50)
        probe = fn(F, *[st.tensor(a) for a in arrays])
        upstream = RNG.standard_normal(tuple(probe.shape))
        whole_out, whole = _run(fn, arrays, device, st.float64, upstream=upstream)
    assert not slices
    sliced_out, sliced = _run(fn, arrays, device, st.float64, upstream=upstream)
    n = shapes[0][0]
    assert slices == [(1, n), (1, n)]  # the forward and the backward, one sample per slice
    assert sliced_out.stride() == whole_out.stride()
    for a, b in zip(sliced, whole):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_sliced_convolutions_match_torch(slices, nn_oracle, device):
    for _name, fn, shapes in CASES:
        nn_oracle(fn, [RNG.standard_normal(s) for s in shapes], device, "float32", grad=(0, 1, 2))
    assert len(slices) == 2 * len(CASES)


@pytest.mark.parametrize("device", DEVICES)
def test_channels_last_and_bfloat16_slices(slices, monkeypatch, device):
    fn, shapes = CASES[0][1], CASES[0][2]
    arrays = [RNG.standard_normal(s) for s in shapes]
    upstream = RNG.standard_normal((5, 6, 7, 9))
    out, sliced = _run(fn, arrays, device, st.float32, channels_last=True, upstream=upstream)
    assert out.is_contiguous(memory_format=st.channels_last)
    monkeypatch.setattr(chunks, "COLUMN_BUDGET", 1 << 50)
    _, whole = _run(fn, arrays, device, st.float32, channels_last=True, upstream=upstream)
    for a, b in zip(sliced, whole):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    monkeypatch.setattr(chunks, "COLUMN_BUDGET", 1)
    _, half = _run(fn, arrays, device, st.bfloat16, upstream=upstream)
    for a, b in zip(half, whole):  # the weight's gradient is summed over slices in float32
        np.testing.assert_allclose(a, b, rtol=0.05, atol=0.1 * np.abs(b).max())


def test_budget_sets_the_slice(monkeypatch):
    x, w = st.zeros(10, 4, 8, 8), st.zeros(6, 4, 3, 3)
    per_sample = 4 * 9 * 64 * 4  # C * K rows by L positions of float32
    args = ((1, 1), (1, 1), (1, 1), False, 1)
    monkeypatch.setattr(chunks, "COLUMN_BUDGET", 10 * per_sample)
    assert chunks.samples_per_chunk(x, w, *args) == 10  # the whole batch fits
    monkeypatch.setattr(chunks, "COLUMN_BUDGET", 3 * per_sample + 1)
    assert chunks.samples_per_chunk(x, w, *args) == 3
    monkeypatch.setattr(chunks, "COLUMN_BUDGET", 1)
    assert chunks.samples_per_chunk(x, w, *args) == 1  # a sample is never split
    assert chunks.samples_per_chunk(x, st.zeros(6, 4, 1, 1), (1, 1), (0, 0), (1, 1), False, 1) == 10  # no columns
    assert chunks.samples_per_chunk(st.zeros(10, 4, 8, 8, device="meta"), w, *args) == 10


def test_bad_arguments_still_raise_torchs_errors(slices):
    x, w = st.randn(4, 4, 8, 8), st.randn(6, 4, 3, 3)
    with pytest.raises(RuntimeError, match="non-positive stride is not supported"):
        F.conv2d(x, w, stride=0)
    with pytest.raises(RuntimeError, match="Kernel size can't be greater than actual input size"):
        F.conv2d(st.randn(4, 4, 2, 2), w)
    with pytest.raises(RuntimeError, match="expected input"):
        F.conv2d(x, st.randn(6, 3, 3, 3))


def test_double_backward_through_sliced_convolutions(slices):
    x = st.randn(3, 2, 5, 5, dtype=st.float64, requires_grad=True)
    w = st.randn(3, 2, 3, 3, dtype=st.float64, requires_grad=True)
    wt = st.randn(2, 3, 3, 3, dtype=st.float64, requires_grad=True)
    assert gradgradcheck(lambda x, w: F.conv2d(x, w, padding=1), (x, w))
    assert gradgradcheck(lambda x, w: F.conv_transpose2d(x, w, stride=2), (x, wt))
    assert slices  # the forwards ran in slices


def test_budget_from_the_environment(monkeypatch):
    monkeypatch.delenv("STRIDED_CONV_COLUMN_BUDGET_MB", raising=False)
    assert chunks.budget_from_env() == chunks.DEFAULT_BUDGET_MB << 20
    monkeypatch.setenv("STRIDED_CONV_COLUMN_BUDGET_MB", "48")
    assert chunks.budget_from_env() == 48 << 20
    for bad in ("0", "-3", "lots", "1.5"):
        monkeypatch.setenv("STRIDED_CONV_COLUMN_BUDGET_MB", bad)
        with pytest.warns(UserWarning, match=f"invalid STRIDED_CONV_COLUMN_BUDGET_MB='{bad}'"):
            assert chunks.budget_from_env() == chunks.DEFAULT_BUDGET_MB << 20
