"""OpInfos: ``im2col`` and ``col2im`` (F.unfold / F.fold, the convolution's columns) against NumPy loops over every
block and kernel offset; geometries with padding, dilation, stride, an unbatched input and a batch of none."""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ...factories import from_numpy
from ..opinfo import FLOATING, OpInfo, SampleInput
from .helpers import err

__all__ = ["OPS"]

# (image shape, kernel_size, dilation, padding, stride)
_GEOMETRIES = [
    ((2, 3, 6, 7), [3, 3], [1, 1], [1, 1], [1, 1]),
    ((2, 3, 7, 9), [2, 3], [2, 1], [1, 0], [2, 3]),
    ((1, 2, 5, 5), [1, 1], [1, 1], [0, 0], [2, 2]),
    ((3, 6, 5), [3, 2], [1, 2], [1, 1], [1, 2]),  # unbatched
    ((0, 2, 4, 4), [2, 2], [1, 1], [0, 0], [1, 1]),  # a batch of none
]


def _blocks(h, w, k, d, p, s):
    return ((h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1, (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1)


def _positions(h, w, k, d, p, s):
    """(row, column, y, x) of every in-image column entry: row = (c-less) kernel offset, column = block."""
    lh, lw = _blocks(h, w, k, d, p, s)
    for a in range(k[0]):
        for b in range(k[1]):
            for i in range(lh):
                for j in range(lw):
                    y, x = i * s[0] - p[0] + a * d[0], j * s[1] - p[1] + b * d[1]
                    if 0 <= y < h and 0 <= x < w:
                        yield a * k[1] + b, i * lw + j, y, x


def _im2col_ref(x, kernel_size, dilation, padding, stride):
    *lead, c, h, w = x.shape
    lh, lw = _blocks(h, w, kernel_size, dilation, padding, stride)
    kk = kernel_size[0] * kernel_size[1]
    img = x.reshape(-1, c, h, w).astype(np.float64)
    out = np.zeros((len(img), c, kk, lh * lw))
    for row, col, y, xx in _positions(h, w, kernel_size, dilation, padding, stride):
        out[:, :, row, col] = img[:, :, y, xx]
    return out.reshape(*lead, c * kk, lh * lw)


def _col2im_ref(cols, output_size, kernel_size, dilation, padding, stride):
    *lead, rows, length = cols.shape
    h, w = output_size
    kk = kernel_size[0] * kernel_size[1]
    c = rows // kk
    src = cols.reshape(-1, c, kk, length).astype(np.float64)
    out = np.zeros((len(src), c, h, w))
    for row, col, y, x in _positions(h, w, kernel_size, dilation, padding, stride):
        out[:, :, y, x] += src[:, :, row, col]
    return out.reshape(*lead, c, h, w)


def _im2col_samples(d, rng):
    for shape, k, dil, p, s in _GEOMETRIES:
        x = from_numpy(rng.standard_normal(shape).astype(d.numpy_dtype))
        yield SampleInput((x, k, dil, p, s), name=f"{shape} k{k} d{dil} p{p} s{s}")
    x = from_numpy(rng.standard_normal((2, 3, 8, 6)).astype(d.numpy_dtype))
    yield SampleInput((x.transpose(2, 3), [3, 3], [1, 1], [1, 1], [1, 1]), name="noncontiguous")


def _col2im_samples(d, rng):
    for shape, k, dil, p, s in _GEOMETRIES:
        *lead, c, h, w = shape
        lh, lw = _blocks(h, w, k, dil, p, s)
        cols = from_numpy(rng.standard_normal((*lead, c * k[0] * k[1], lh * lw)).astype(d.numpy_dtype))
        yield SampleInput((cols, [h, w], k, dil, p, s), name=f"{shape} k{k} d{dil} p{p} s{s}")
    cols = from_numpy(rng.standard_normal((2, 48, 12)).astype(d.numpy_dtype))
    yield SampleInput((cols.transpose(1, 2).contiguous().transpose(1, 2), [4, 5], [2, 2], [1, 1], [0, 0], [1, 1]),
                      name="noncontiguous")


def _im2col_errors(rng):
    x = from_numpy(rng.standard_normal((1, 2, 5, 5)).astype(np.float32))
    yield err((x, [0, 2], [1, 1], [0, 0], [1, 1]), RuntimeError, "unfold: kernel_size (0, 2), dilation (1, 1) and "
              "stride (1, 1) must be positive and padding (0, 0) non-negative")
    yield err((x, [6, 6], [1, 1], [0, 0], [1, 1]), RuntimeError, "Given input with spatial size (5, 5), "
              "kernel_size=(6, 6), dilation=(1, 1), padding=(0, 0), calculated shape of the array of sliding blocks "
              "as (0, 0), but its components must be at least one.")
    yield err((x[0, 0], [2, 2], [1, 1], [0, 0], [1, 1]), RuntimeError, "Expected 3D or 4D (batch mode) tensor with "
              "possibly 0 batch size and other non-zero dimensions for input, but got: [5, 5]")
    yield err((x, [3, 3, 3], [1, 1], [0, 0], [1, 1]), RuntimeError, "It is expected kernel_size equals to 2, but got "
              "size 3")
    yield err((x, [3, 3], [1], [0, 0], [1, 1]), RuntimeError, "It is expected dilation equals to 2, but got size 1")
    yield err((x, [3.0, 3], [1, 1], [0, 0], [1, 1]), TypeError, "im2col(): argument 'kernel_size' (position 2) must "
              "be tuple of ints, but found element of type float at pos 0")


def _col2im_errors(rng):
    cols = from_numpy(rng.standard_normal((1, 8, 16)).astype(np.float32))
    yield err((cols, [5, 5], [3, 3], [1, 1], [0, 0], [1, 1]), RuntimeError, "Expected size of input's dimension 1 to "
              "be divisible by the product of kernel_size, but got input.size(1)=8 and kernel_size=(3, 3).")
    yield err((cols, [6, 6], [2, 2], [1, 1], [0, 0], [1, 1]), RuntimeError, "Given output_size=(6, 6), "
              "kernel_size=(2, 2), dilation=(1, 1), padding=(0, 0), stride=(1, 1), expected size of input's dimension "
              "2 to match the calculated number of sliding blocks 5 * 5 = 25, but got input.size(2)=16.")
    yield err((cols, [5, 5], [2, 2], [1, 1], [0, 0], [0, 1]), RuntimeError, "stride should be greater than zero, "
              "but got stride_height: 0 stride_width: 1")
    yield err((cols, [5, 5, 5], [2, 2], [1, 1], [0, 0], [1, 1]), RuntimeError, "It is expected output_size equals "
              "to 2, but got size 3")


OPS = [
    OpInfo("im2col", _im2col_samples, ref=_im2col_ref, dtypes=FLOATING, errors=_im2col_errors),  # copies: exact
    # col2im adds up to KH * KW entries; the composite adds them in the storage dtype
    OpInfo("col2im", _col2im_samples, ref=_col2im_ref, dtypes=FLOATING, errors=_col2im_errors,
           tolerances={dt.float16: (2e-2, 2e-2), dt.bfloat16: (5e-2, 5e-2)}),
]
