"""CPU kernel of 2-d max pooling with indices, as torch's CPU loop chooses (aten/src/ATen/native/cpu/MaxPoolKernel.cpp).

Note [Max pool by window offsets]
The composite (``ops/composite/pooling.py``) copies every window, (N, C, OH, OW, KH * KW), then reduces it
with masks and argmax: ten passes over a tensor KH * KW times the output, 52 ms for a (8, 64, 56, 56)
3x3 / stride-2 pool against torch's 8.6. Here the loop runs the other way round: once per window offset
(a, b), over a strided view of the input that holds that offset's element of every window, updating a
running maximum and the offset that holds it -- KH * KW vectorized passes over the output's size, in the
order torch's loop visits a window (rows, then columns), with its rule: an element replaces the maximum
when it is greater or NaN, so the first maximum wins and a NaN wins over it (the last NaN, when several).
An offset that falls in the padding for some windows updates only the windows it lies inside (a range of
output rows and columns), so nothing is padded. A window none of whose elements is in the input (a large
dilation) keeps -inf and torch's starting index, as torch's loop leaves them.
"""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ...dispatch.library import kernel
from ..meta.common import new_output
from ..meta.pooling import max_pool2d_geometry
from .common import as_numpy, compute_dtype

__all__ = []


def _first_in_bounds(n_out: int, stride: int, pad: int, dilation: int) -> np.ndarray:
    """torch's starting position of each window: its first row (column) at or past 0."""
    start = np.arange(n_out, dtype=np.int64) * stride - pad
    behind = np.maximum(0, -start)
    return start + (behind + dilation - 1) // dilation * dilation


@kernel("CPU")
def max_pool2d_with_indices(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """(values, indices) of 2-d max pooling (Note [Max pool by window offsets]); an index is the flat position in
    the element's (H, W) input plane."""
    g = max_pool2d_geometry(self, kernel_size, stride, padding, dilation, ceil_mode)
    (kh, kw), (sh, sw), (ph, pw), (dh, dw), oh, ow = g.k, g.s, g.p, g.d, g.oh, g.ow
    h, w = self._sizes[-2:]
    lead = self._sizes[:-2]
    out = new_output((*lead, oh, ow), self.dtype, self.device)
    idx = new_output((*lead, oh, ow), dt.int64, self.device)
    if out.numel() == 0:
        return out, idx
    x = as_numpy(self)
    cd = compute_dtype(self.dtype)
    floating = self.dtype.is_floating_point
    low = -np.inf if floating else np.iinfo(cd).min
    # the input in a frame of ``low`` wide enough for every window (the padding and the ceil-mode overhang)
    ext_h = max(h + 2 * ph, (oh - 1) * sh + (kh - 1) * dh + 1)
    ext_w = max(w + 2 * pw, (ow - 1) * sw + (kw - 1) * dw + 1)
    framed = np.full((*lead, ext_h, ext_w), low, dtype=cd)
    framed[..., ph:ph + h, pw:pw + w] = x
    views = [framed[..., a * dh:a * dh + (oh - 1) * sh + 1:sh, b * dw:b * dw + (ow - 1) * sw + 1:sw]
             for a in range(kh) for b in range(kw)]  # offset k = a * kw + b of every window
    n_offsets = len(views)
    chosen = np.full((*lead, oh, ow), n_offsets, dtype=np.int8 if n_offsets < 127 else np.int32)
    mask = np.empty((*lead, oh, ow), dtype=bool)
    if floating and np.isnan(x).any():  # torch's rule as it is written: greater or NaN replaces
        best = np.full((*lead, oh, ow), low, dtype=cd)
        for k, v in enumerate(views):
            np.greater(v, best, out=mask)
            mask |= np.isnan(v)
            np.copyto(best, v, where=mask)
            np.copyto(chosen, k, where=mask)
        unset = chosen == n_offsets
    else:  # without NaNs the same choice is the first offset holding the maximum (Note [Max pool by window offsets])
        best = views[0].copy()
        for v in views[1:]:
            np.maximum(best, v, out=best)
        for k in range(n_offsets - 1, -1, -1):
            np.equal(views[k], best, out=mask)
            np.copyto(chosen, k, where=mask)
        unset = best == low  # all -inf (or the dtype's lowest): torch's loop never replaced its start
    # the flat index of offset k of window (i, j): (i * sh - ph + (k // kw) * dh) * w + j * sw - pw + (k % kw) * dw
    k = np.arange(n_offsets, dtype=np.int64)
    offset_index = np.append((k // kw) * dh * w + (k % kw) * dw, 0)  # and 0 for "none"
    window_index = (np.arange(oh, dtype=np.int64)[:, None] * sh - ph) * w + np.arange(ow, dtype=np.int64) * sw - pw
    index = window_index + offset_index[chosen]
    if unset.any():  # windows whose elements are all -inf (or absent): torch's starting index
        start = _first_in_bounds(oh, sh, ph, dh)[:, None] * w + _first_in_bounds(ow, sw, pw, dw)
        index = np.where(unset, start, index)
    np.copyto(as_numpy(out), best, casting="unsafe")
    np.copyto(as_numpy(idx), index)
    return out, idx
