"""CPU kernel for ``cat``: one strided copy per input into its slab of the output."""

from __future__ import annotations

import numpy as np

from ...dispatch.library import kernel
from ..meta.joining import cat_output
from .common import as_numpy

__all__ = []


@kernel("CPU")
def cat(tensors, dim=0):
    out, d, kept = cat_output(tensors, dim)
    dst = as_numpy(out)
    if dst.size:
        lead = (slice(None),) * d
        start = 0
        for t in kept:
            n = t._sizes[d]
            if n:
                np.copyto(dst[lead + (slice(start, start + n),)], as_numpy(t), casting="unsafe")
            start += n
    return out
