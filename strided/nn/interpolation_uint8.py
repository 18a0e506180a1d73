"""uint8 ``bilinear`` / ``bicubic`` interpolation on the CPU, as torch computes it (Note [uint8 resampling]).

Note [uint8 resampling]
torch's CPU resamples uint8 images in fixed point, as Pillow-SIMD does (aten UpSampleKernel.cpp, "Weights
computation for uint8_t and multiplication trick"; UpSampleKernelAVXAntialias.h), not through a float
computation rounded at the end -- the two differ by one level for bilinear and by tens for bicubic, whose
clamped intermediate image matters. strided reproduces it step by step:

* per resampled dim, float64 weights per output position: with ``antialias`` the widened, normalized filter of
  Note [Antialiased resampling] (taps ``[xmin, xmin + xsize)``); without it the 2 (bilinear) or 4 (bicubic, Keys'
  a = -0.75) taps around ``guard_index_and_lambda``'s source index, the weights of taps outside the input added
  onto the border taps (``_compute_indices_min_size_weights``);
* the weights scaled by ``2 ** precision`` -- the largest precision (< 22) keeping twice the largest weight below
  ``2 ** 15`` -- and rounded half away from zero to int16;
* each output ``clamp((sum(w * x) + 2 ** (precision - 1)) >> precision, 0, 255)``, computed exactly here as an
  int64 matmul with the (out, in) weight matrix;
* the width first, then the height, the intermediate image stored as uint8; a dim whose size does not change is
  not resampled.

torch's CUDA has no uint8 kernel for these modes: ``interpolate`` refuses it there before reaching this module.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes as _dt
from ..factories import tensor as _tensor
from ..ops import bound as ops
from ..tensor import Tensor

__all__ = ["resample_uint8"]


def _triangle(x: float) -> float:
    x = abs(x)
    return 1.0 - x if x < 1.0 else 0.0


def _cubic_filter(a: float):
    def f(x: float) -> float:
        x = abs(x)
        if x < 1.0:
            return ((a + 2) * x - (a + 3)) * x * x + 1
        if x < 2.0:
            return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return 0.0

    return f


def _scale(n_in: int, n_out: int, align_corners: bool, factor) -> float:
    """aten's ``area_pixel_compute_scale`` in double."""
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return 1.0 / factor if factor is not None and factor > 0 else n_in / n_out


def _float32_floor(v: float) -> int:
    """``floorf(v)`` of a double argument: C converts it to float first."""
    return math.floor(float(np.float32(v)))


def _weights(n_in: int, n_out: int, factor, mode: str, align_corners: bool, antialias: bool):
    """Per output position: (xmin, float64 weights of the taps from xmin), and the running maximum weight."""
    interp = 2 if mode == "bilinear" else 4
    fn = _triangle if mode == "bilinear" else _cubic_filter(-0.5 if antialias else -0.75)
    scale = _scale(n_in, n_out, align_corners, factor)
    rows, wt_max = [], 0.0
    if antialias:
        support = interp * 0.5 * scale if scale >= 1.0 else interp * 0.5
        size = math.ceil(support) * 2 + 1
        invscale = 1.0 / scale if scale >= 1.0 else 1.0
        for i in range(n_out):
            center = scale * (i + 0.5)
            xmin = max(int(center - support + 0.5), 0)
            xsize = min(max(min(int(center + support + 0.5), n_in) - xmin, 0), size)
            w = [fn((j + xmin - center + 0.5) * invscale) for j in range(xsize)]
            total = sum(w)
            if total != 0.0:
                w = [v / total for v in w]
                wt_max = max([wt_max, *w])
            rows.append((xmin, w))
        return rows, wt_max
    support = interp // 2
    for i in range(n_out):
        if align_corners:
            real = scale * i
        else:
            real = scale * (i + 0.5) - 0.5
            if interp == 2 and real < 0:
                real = 0.0
        index = min(_float32_floor(real), n_in - 1)
        lam = min(max(real - index, 0.0), 1.0)
        lo = index - support + 1
        xmin = max(lo, 0)
        xsize = min(max(min(index + support + 1, n_in) - xmin, 0), interp)
        w = [0.0] * interp
        k = 0
        for j in range(interp):
            v = fn(float(j + 1 - support) - lam)
            if lo + j <= 0:
                k = 0
            elif lo + j >= n_in - 1:
                k = xsize - 1
            w[k] += v
            wt_max = max(wt_max, w[k])
            k += 1
        rows.append((xmin, w[:xsize]))
    return rows, wt_max


def _int16_matrix(rows, wt_max: float, n_in: int) -> tuple[np.ndarray, int]:
    """The (out, in) matrix of int16-rounded weights and their precision (torch's int16 conversion)."""
    precision = 0
    while precision < 22 and int(0.5 + wt_max * (1 << (precision + 1))) < (1 << 15):
        precision += 1
    m = np.zeros((len(rows), n_in), dtype=np.int64)
    for i, (xmin, w) in enumerate(rows):
        for j, v in enumerate(w):
            v *= 1 << precision
            m[i, xmin + j] = int(v - 0.5) if v < 0 else int(v + 0.5)
    return m, precision


def _pass(x: Tensor, d: int, n_in: int, n_out: int, factor, mode: str, align_corners: bool,
          antialias: bool) -> Tensor:
    rows, wt_max = _weights(n_in, n_out, factor, mode, align_corners, antialias)
    m, precision = _int16_matrix(rows, wt_max, n_in)
    weights = _tensor(m.T.copy(), device=x.device)  # (in, out)
    acc = ops.movedim(ops.matmul(ops.movedim(x.to(_dt.int64), d, -1), weights), -1, d)
    acc = ops.floor_divide(ops.add(acc, 1 << (precision - 1)), 1 << precision)
    return ops.clamp(acc, 0, 255).to(_dt.uint8)


def resample_uint8(input: Tensor, in_sizes, out_sizes, scales, mode: str, align_corners: bool,
                   antialias: bool) -> Tensor:
    """``interpolate`` of a 4-d uint8 ``input`` in ``mode`` bilinear or bicubic (Note [uint8 resampling])."""
    out = input
    for d in (1, 0):  # the width, then the height
        if in_sizes[d] != out_sizes[d]:
            out = _pass(out, 2 + d, in_sizes[d], out_sizes[d], scales[d], mode, align_corners, antialias)
    return out if out is not input else ops.clone(input)
