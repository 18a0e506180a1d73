"""CUDA kernel for joining: cat (``cat.cu``).  It calls the Meta function for validation and its
output, exactly like the CPU kernel in ``backends/cpu/joining.py``, whose results and errors it
matches.
"""

from __future__ import annotations

from ....dispatch.library import kernel
from ....tensor import Tensor, make_tensor
from ... import allocate
from ...meta.joining import cat_output
from ..launch import get_kernel
from . import copy_kernel, source
from .index_launch import stream

__all__ = []

CAT_FMT = "<Qqq8qq8q32Q32q32q33q256q"
_CAT_MAX = 32
_CAT_BLOCK = 1024
_CAT_SMALL = 1 << 20  # larger inputs take the coalesced copy kernel, one launch each


# Note [cat plan memo]
# A model concatenates the same layouts every step (split's backward: three gradients of one
# shape). Everything but the data pointers -- the Meta function's checks and output, which inputs
# share one launch, the kernel's ~3 KiB argument struct -- depends only on the inputs' metadata, so
# a one-launch cat keeps it, keyed by dim and each input's (sizes, strides, dtype, device). A
# repeat call allocates the output, writes the addresses into a copy of the arguments and
# launches. A key is stored only after the Meta function accepted it (errors are raised fresh).
# Bounded: cleared past 1024 keys.
_CAT_PLANS: dict = {}


@kernel("CUDA")
def cat(tensors, dim=0):
    """Small same-dtype inputs go 32 to a launch (``cat.cu``); others one copy kernel each."""
    if not isinstance(tensors, (list, tuple)):
        tensors = tuple(tensors)
    try:
        key = (dim, *[(t._sizes, t._strides, t.dtype, t.device) for t in tensors]) if dim.__class__ is int else None
    except AttributeError:  # not a Tensor: the Meta function raises
        key = None
    plan = _CAT_PLANS.get(key) if key is not None else None
    if plan is not None:
        sizes, strides, dtype, device, nbytes, kern, grid, values, srcs = plan
        out = make_tensor(allocate(nbytes, device), 0, sizes, strides, dtype)
        values = list(values)
        values[0] = out._storage._data_ptr
        for j, t in zip(srcs, tensors):
            values[j] = t.data_ptr()
        kern(grid, 256, stream(out), *values)
        return out
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
        kern, grid, values = _cat_group(out, d, grouped[i:i + _CAT_MAX])
        if key is not None and len(grouped) == len(tensors) <= _CAT_MAX:  # one launch covers every input
            if len(_CAT_PLANS) > 1024:
                _CAT_PLANS.clear()
            _CAT_PLANS[key] = (out._sizes, out._strides, out.dtype, out.device, out._storage.nbytes(), kern, grid,
                               tuple(values), tuple(range(_SRCS, _SRCS + len(grouped))))
    return out


_SRCS = 20  # index of the first source address in cat_copy's arguments (CAT_FMT: Q q q 8q q 8q 32Q ...)


def _cat_group(out: Tensor, d: int, group) -> tuple:
    """Launch ``cat_copy`` for up to 32 inputs; returns (kernel, grid, argument values)."""
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
    values = [out.data_ptr(), nd, d, *out._strides, *pad, len(group), *out._sizes, *pad, *srcs, *[0] * extra, *starts,
              *[0] * extra, *lens, *[0] * extra, *blocks, *[blocks[-1]] * extra, *strides, *[0] * (8 * extra)]
    kern = get_kernel(source("cat.cu", out.dtype.name), "cat_copy", CAT_FMT, out.device.index)
    kern(blocks[-1], 256, stream(out), *values)
    return kern, blocks[-1], values
