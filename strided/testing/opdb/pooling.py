"""OpInfos: 2-d max pooling with indices and its backward (Note [The element a max pool chooses]) against NumPy
loops that scan each window as torch's kernels do; inputs of small integers, so windows hold ties."""

from __future__ import annotations

import math

import numpy as np

from ... import dtypes as dt
from ...factories import from_numpy
from ..opinfo import FLOATING, OpInfo, SampleInput
from .helpers import err

__all__ = ["OPS"]

# (input shape, kernel_size, stride, padding, dilation, ceil_mode)
_GEOMETRIES = [
    ((2, 3, 6, 7), [2, 2], [], [0, 0], [1, 1], False),
    ((2, 3, 6, 7), [3, 3], [2, 2], [1, 1], [1, 1], True),
    ((1, 2, 7, 9), [3, 2], [2, 1], [1, 0], [2, 2], False),
    ((3, 5, 5), [2, 3], [1, 2], [1, 1], [1, 1], True),  # unbatched
]


def _ints(shape, d, rng, nan=False):
    a = rng.integers(0, 3, shape).astype(np.float64)
    if nan:
        a.flat[:: max(1, a.size // 5)] = math.nan
    return from_numpy(a.astype(d.numpy_dtype))


def _two(v):
    v = [v] * 2 if isinstance(v, int) else list(v)
    return v * 2 if len(v) == 1 else v


def _ref(x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    k, p, d = _two(kernel_size), _two(padding), _two(dilation)
    s = _two(stride) if len(_two(stride) if not isinstance(stride, int) else [stride]) else k
    *lead, h, w = x.shape
    planes = x.reshape(-1, h, w)

    def size(n, kk, ss, pp, dd):
        span = n + 2 * pp - dd * (kk - 1) - 1
        out = (-(-span // ss) if ceil_mode else span // ss) + 1
        if ceil_mode and (out - 1) * ss >= n + pp:
            out -= 1
        return out

    oh, ow = size(h, k[0], s[0], p[0], d[0]), size(w, k[1], s[1], p[1], d[1])
    out = np.empty((planes.shape[0], oh, ow), x.dtype)
    idx = np.empty((planes.shape[0], oh, ow), np.int64)
    for c, plane in enumerate(planes):
        for i in range(oh):
            for j in range(ow):
                best, at = -math.inf, None
                for a in range(k[0]):
                    for b in range(k[1]):
                        r, q = i * s[0] - p[0] + a * d[0], j * s[1] - p[1] + b * d[1]
                        if 0 <= r < h and 0 <= q < w:
                            v = plane[r, q]
                            if at is None:
                                at = r * w + q
                            if v > best or math.isnan(v):
                                best, at = v, r * w + q
                out[c, i, j], idx[c, i, j] = best, at
    return out.reshape(*lead, oh, ow), idx.reshape(*lead, oh, ow)


def _samples(d, rng):
    # distinct values first: small enough for gradcheck, which a tie would send to one side
    for shape, k, s, p in (((1, 1, 4, 5), [2, 2], [], [0, 0]), ((1, 2, 3, 4), [2, 2], [1, 1], [1, 1])):
        a = rng.permutation(int(np.prod(shape))).reshape(shape) / 4.0 - 2.0
        yield SampleInput((from_numpy(a.astype(d.numpy_dtype)), k, s, p), name=f"distinct {shape} k{k} s{s} p{p}")
    for shape, k, s, p, dil, ceil in _GEOMETRIES:
        yield SampleInput((_ints(shape, d, rng), k, s, p, dil, ceil), name=f"{shape} k{k} s{s} p{p} d{dil}")
    x = _ints((2, 3, 8, 6), d, rng)
    yield SampleInput((x.transpose(2, 3), [3, 3], [1, 1], [1, 1]), name="noncontiguous")
    yield SampleInput((_ints((1, 2, 6, 6), d, rng, nan=True), [3, 3], [2, 2], [1, 1]), name="NaN: the last NaN wins")
    yield SampleInput((_ints((2, 2, 5, 5), d, rng), 2), name="kernel_size as one int, stride omitted")


def _bwd_samples(d, rng):
    for sample in _samples(d, rng):
        x, k, *rest = sample.args
        rest += [[], 0, 1, False][len(rest):]
        s, p, dil, ceil = rest
        _, idx = _ref(x.numpy().astype(np.float64), k, s, p, dil, ceil)
        grad = from_numpy(rng.standard_normal(idx.shape).astype(d.numpy_dtype))
        yield SampleInput((grad, x, k, s, p, dil, ceil, from_numpy(idx)), name=sample.name)


def _bwd_ref(grad, x, kernel_size, stride, padding, dilation, ceil_mode, indices):
    *lead, h, w = x.shape
    out = np.zeros((int(np.prod(lead)), h * w), np.float64)
    for plane, (g, i) in enumerate(zip(grad.reshape(len(out), -1), indices.reshape(len(out), -1))):
        np.add.at(out[plane], i, g)
    return out.reshape(x.shape)


def _errors(rng):
    x = _ints((1, 2, 5, 5), dt.float32, rng)
    yield err((x, [2, 2], [0, 1]), RuntimeError, "max_pool2d: kernel size and stride should be greater than zero, "
              "but got kH: 2 kW: 2 sH: 0 sW: 1")
    yield err((x, [2, 2], [], [2, 0]), RuntimeError, "pad should be smaller than or equal to half of kernel size, "
              "but got padW = 0, padH = 2, kW = 2, kH = 2")
    yield err((x, [2, 2, 2]), RuntimeError, "max_pool2d: kernel_size must either be a single int, or a tuple of two "
              "ints")
    yield err((_ints((2, 5, 5), dt.float32, rng)[0], [2, 2]), RuntimeError,
              "non-empty 3D or 4D (batch mode) tensor expected for input, but got: [5, 5]")
    yield err((x, [6, 6]), RuntimeError, "Given input size: (2x5x5). Calculated output size: (2x0x0). Output size is "
              "too small")


OPS = [
    OpInfo("max_pool2d_with_indices", _samples, ref=_ref, dtypes=FLOATING, errors=_errors),
    OpInfo("max_pool2d_with_indices_backward", _bwd_samples, ref=_bwd_ref, dtypes=FLOATING,
           tolerances={dt.float16: (2e-3, 2e-3), dt.bfloat16: (2e-2, 2e-2)}),
]
