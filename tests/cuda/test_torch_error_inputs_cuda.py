"""The refusals found with torch's OpInfo ``error_inputs`` and ``out=`` samples (tests/backend/
test_torch_error_inputs.py) hold on CUDA: the pool checks run before the CUDA kernels of max_pool2d / avg_pool2d
and in the 3-d pools, the convolution op's checks before its CUDA kernel, the out= dtype rules for every device;
and the good calls next to them still compute what the CPU computes."""

from __future__ import annotations

import re

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda
import strided.nn.functional as F

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]

D = "cuda"


def _ones(*shape, **kw):
    return st.ones(*shape, device=D, **kw)


REFUSALS = [
    (lambda: st.mm(_ones(2, 3), _ones(3, 2), out=st.empty(2, 2, dtype=st.float64, device=D)),
     "Expected out tensor to have dtype float, but got double instead"),
    (lambda: st.abs(_ones(2, 3), out=st.empty(2, 3, dtype=st.float64, device=D)),
     "Found dtype Double but expected Float"),
    (lambda: st.index_select(_ones(3, 6), 1, st.tensor([0, 1], device=D), out=st.empty(1, 6, device=D).expand(2, 6)),
     "unsupported operation: more than one element of the written-to tensor refers to a single memory location"),
    (lambda: F.max_pool2d(_ones(2, 3, 8, 8), 3, padding=2, dilation=2), "pad should be smaller than or equal to half "
     "of kernel size, but got padW = 2, padH = 2, kW = 3, kH = 3"),
    (lambda: F.max_pool2d(_ones(2, 3, 8, 8), 2, stride=-1),
     "stride should be greater than zero, but got dH: -1 dW: -1"),
    (lambda: F.avg_pool2d(_ones(2, 3, 8, 8), -1), "kernel size should be greater than zero, but got kH: -1 kW: -1"),
    (lambda: F.max_pool1d(_ones(2, 3, 8), (2, 2)), "max_pool1d() kernel_size must be an int, list of ints or tuple of "
     "ints of size 1 but got size 2"),
    (lambda: F.max_pool3d(_ones(2, 0, 8, 8, 8), 1), "max_pool3d_with_indices_out_cuda_template(): Expected input's "
     "non-batch dimensions to have positive length, but input has a shape of [2, 0, 8, 8, 8] and non-batch dimension "
     "0 has length zero!"),
    (lambda: F.avg_pool3d(_ones(2, 3, 8, 8, 8), (9, 2, 2)), "input image (T: 8 H: 8 W: 8) smaller than kernel size "
     "(kT: 9 kH: 2 kW: 2)"),
    (lambda: F.conv2d(_ones(2, 4, 6, 6), _ones(0, 4, 3, 3)), "Given groups=1, expected weight to be at least 1 at "
     "dimension 0, but got weight of size [0, 4, 3, 3] instead"),
    (lambda: F.conv1d(_ones(2, 4, 6), _ones(4, 4, 3), stride=(1, 1)), "expected stride to be a single integer value or "
     "a list of 1 values to match the convolution dimensions, but got stride=[1, 1]"),
    (lambda: F.conv2d(_ones(2, 4, 6, 6), _ones(4, 4, 3, 3), groups=3), "Given groups=3, expected weight to be "
     "divisible by 3 at dimension 0, but got weight of size [[4, 4, 3, 3]] instead"),
    (lambda: F.adaptive_avg_pool3d(_ones(1, 0, 3, 3, 3), 2), "adaptive_avg_pool3d(): Expected input to have non-zero "
     "size for non-batch dimensions, but input has sizes [1, 0, 3, 3, 3] with dimension 1 being empty"),
]


@pytest.mark.parametrize("call,message", REFUSALS, ids=[m[:50] for _, m in REFUSALS])
def test_refusals_on_cuda(call, message):
    with pytest.raises(RuntimeError, match="^" + re.escape(message)):
        call()


def test_the_good_calls_still_compute_what_the_cpu_computes():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 9, 8)).astype(np.float32)
    w = rng.standard_normal((4, 3, 4, 4)).astype(np.float32)
    tf32 = st.backends.cudnn.allow_tf32
    st.backends.cudnn.allow_tf32 = False  # full float32 convolutions, as the CPU's
    try:
        for fn in (lambda t, u: F.conv2d(t, u, padding="same"), lambda t, u: F.conv2d(t, u, stride=2, padding=1),
                   lambda t, u: F.max_pool2d(t, 3, 2, 1), lambda t, u: F.avg_pool2d(t, 2, ceil_mode=True),
                   lambda t, u: F.adaptive_avg_pool2d(t, (0, 3)),
                   lambda t, u: F.max_pool1d(t[0], 2, return_indices=True)[1]):
            got = fn(st.tensor(x, device=D), st.tensor(w, device=D)).cpu().numpy()
            want = fn(st.tensor(x), st.tensor(w)).numpy()
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    finally:
        st.backends.cudnn.allow_tf32 = tf32
    a = st.tensor(rng.standard_normal((3, 5)).astype(np.float32), device=D)
    out = st.empty(3, 5, dtype=st.float64, device=D)
    st.exp(a, out=out)  # a TensorIterator op casts into out
    np.testing.assert_allclose(out.cpu().numpy(), np.exp(a.cpu().numpy().astype(np.float64)), rtol=1e-6)
    pieces = [st.empty(5, device=D) for _ in range(3)]
    assert st.unbind_copy(a, 0, out=pieces) is None
    np.testing.assert_array_equal(pieces[2].cpu().numpy(), a[2].cpu().numpy())
