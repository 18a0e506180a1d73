"""A convolution's peak memory on CUDA is bounded by its column budget, not by the whole batch's columns (Note
[Convolution batch chunks]): a (16, 64, 64, 64) 3x3 layer's forward and backward peak 144 MiB of columns above
its tensors as one batch, one sample's 9 MiB in slices -- measured with the allocator's own peak counter."""

from __future__ import annotations

import pytest

import strided as st
import strided.cuda as cuda
import strided.ops.composite.convolution_chunks as chunks
from strided.nn import functional as F

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]

MIB = 1 << 20


def _step_peak(x, w) -> int:
    """Bytes above what was allocated before, at the peak of one forward and backward."""
    cuda.synchronize()
    cuda.reset_peak_memory_stats()
    base = cuda.memory_allocated()
    out = F.conv2d(x, w, padding=1)
    out.backward(st.ones_like(out))
    del out
    x.grad = w.grad = None
    cuda.synchronize()
    return cuda.max_memory_allocated() - base


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_slices_bound_the_peak(monkeypatch, dtype):
    dt = getattr(st, dtype)
    x = st.randn(16, 64, 64, 64, device="cuda", dtype=dt).requires_grad_()
    w = st.randn(64, 64, 3, 3, device="cuda", dtype=dt).requires_grad_()
    size = x.numel() * x.element_size()  # 16 MiB float32: columns are 9x that
    monkeypatch.setattr(chunks, "COLUMN_BUDGET", 1 << 50)
    _step_peak(x, w)  # the first GEMMs allocate the cuBLASLt workspace, kept afterwards
    whole = _step_peak(x, w)
    monkeypatch.setattr(chunks, "COLUMN_BUDGET", 8 * MIB)
    sliced = _step_peak(x, w)
    assert whole >= 9 * size  # the whole batch's columns
    # output, upstream gradient, input gradient, one sample's columns (9 / 16 of the input) and its products
    assert sliced <= 3 * size + 2 * 9 * size // 16 + 4 * MIB, (sliced / MIB, whole / MIB)
