"""CUDA clone (Note [CUDA clone] in strided/backends/cuda/kernels/ops.py): the composite's layout
rules (checked against the CPU backend, which runs the composite) in one copy."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]

LAYOUTS = {
    "contiguous": lambda t: t,
    "transposed (dense)": lambda t: t.transpose(0, 2),
    "permuted 4-d (dense)": lambda t: t.reshape(2, 3, 4, 5).permute(0, 2, 3, 1),
    "sliced (not dense)": lambda t: t[:, 1:, ::2],
    "expanded (stride 0)": lambda t: t[:1].expand(6, 4, 5),
    "size-1 dim with odd stride": lambda t: t[:, :1, :],
    "empty": lambda t: t[:0],
    "0-dim": lambda t: t[1, 2, 3],
}


@pytest.mark.parametrize("memory_format", [None, "preserve_format", "contiguous_format"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int64"])
def test_clone_matches_the_composite(layout, memory_format, dtype):
    base = np.arange(120).reshape(6, 4, 5)
    cpu = st.from_numpy(base).to(getattr(st, dtype))
    gpu = cpu.cuda()
    a, b = LAYOUTS[layout](cpu), LAYOUTS[layout](gpu)
    kw = {} if memory_format is None else {"memory_format": memory_format}
    ca, cb = a.clone(**kw), b.clone(**kw)
    assert cb.shape == ca.shape and cb.stride() == ca.stride() and cb.dtype is ca.dtype
    np.testing.assert_array_equal(cb.cpu().to(st.float32).numpy(), ca.to(st.float32).numpy())
    if cb.numel():
        assert cb.data_ptr() != b.data_ptr()


def test_clone_channels_last_and_autograd():
    x = st.randn(2, 3, 4, 5, device="cuda", requires_grad=True)
    y = x.clone(memory_format="channels_last")
    assert y.stride() == (60, 1, 15, 3)
    (y * st.arange(120.0, device="cuda").view(2, 3, 4, 5)).sum().backward()
    np.testing.assert_array_equal(x.grad.cpu().numpy(), np.arange(120.0).reshape(2, 3, 4, 5))
    z = x.detach().transpose(1, 3)
    w = z.clone()
    w.fill_(0)  # a real copy: the source is untouched
    assert float(z.abs().sum().item()) > 0
