"""CUDA kernel for joining: cat (``cat.cu``).  It calls the Meta function for validation and its
output, exactly like the CPU kernel in ``backends/cpu/joining.py``, whose results and errors it
matches.
"""

from __future__ import annotations

from ....dispatch.library import kernel
from ....tensor import Tensor
from ...meta.joining import cat_output
from . import copy_kernel
from .index_launch import run, stream

__all__ = []

CAT_FMT = "<Qqq8qq8q32Q32q32q33q256q"
_CAT_MAX = 32
_CAT_BLOCK = 1024
_CAT_SMALL = 1 << 20  # larger inputs take the coalesced copy kernel, one launch each


@kernel("CUDA")
def cat(tensors, dim=0):
    """Small same-dtype inputs go 32 to a launch (``cat.cu``); others one copy kernel each."""
    out, d, kept = cat_output(tensors, dim)
    if not out.numel():
        return out
    s, step = stream(out), out._strides[d] * out.dtype.itemsize
    grouped, start = [], 0
    for t in kept:
        n = t._sizes[d]
        if n and t.numel():
            if t.dtype is out.dtype and len(out._sizes) <= 8 and t.numel() < _CAT_SMALL:
                grouped.append((t, start))
            else:
                copy_kernel(out.device.index, out.dtype, t.dtype, out.data_ptr() + start * step, t.data_ptr(),
                            t._sizes, out._strides, t._strides, s)
        start += n
    for i in range(0, len(grouped), _CAT_MAX):
        _cat_group(out, d, grouped[i:i + _CAT_MAX])
    return out


def _cat_group(out: Tensor, d: int, group) -> None:
    nd = len(out._sizes)
    pad = [0] * (8 - nd)
    blocks, srcs, starts, lens, strides = [0], [], [], [], []
    for t, start in group:
        blocks.append(blocks[-1] + -(-t.numel() // _CAT_BLOCK))
        srcs.append(t.data_ptr())
        starts.append(start)
        lens.append(t._sizes[d])
        strides += list(t._strides) + pad
    extra = _CAT_MAX - len(group)
    run("cat.cu", out.dtype, "cat_copy", CAT_FMT, out.device.index, 1, out.data_ptr(), nd, d, *out._strides, *pad,
        len(group), *out._sizes, *pad, *srcs, *[0] * extra, *starts, *[0] * extra, *lens, *[0] * extra,
        *blocks, *[blocks[-1]] * extra, *strides, *[0] * (8 * extra), grid=blocks[-1], block=256)
