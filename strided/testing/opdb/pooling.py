"""OpInfos: 2-d max pooling with indices and its backward (Note [The element a max pool chooses]) against NumPy
loops that scan each window as torch's kernels do, inputs of small integers, so windows hold ties; 2-d average
pooling and its backward against NumPy loops with torch's divisors."""

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
    yield err((x, [2, 2], [0, 1]), RuntimeError, "stride should not be zero")
    yield err((x, [2, 2], [-1, 1]), RuntimeError, "stride should be greater than zero, but got dH: -1 dW: 1")
    yield err((x, [2, 2], [], [2, 0]), RuntimeError, "pad should be at most half of effective kernel size, but got "
              "pad=2, kernel_size=2 and dilation=1")
    yield err((x, [3, 3], [], [0, 2], [2, 2]), RuntimeError, "pad should be smaller than or equal to half of kernel "
              "size, but got padW = 2, padH = 0, kW = 3, kH = 3")
    yield err((x, [2, 2, 2]), RuntimeError, "max_pool2d: kernel_size must either be a single int, or a tuple of two "
              "ints")
    yield err((_ints((2, 5, 5), dt.float32, rng)[0], [2, 2]), RuntimeError,
              "non-empty 3D or 4D (batch mode) tensor expected for input")
    yield err((x, [6, 6]), RuntimeError, "Given input size: (2x5x5). Calculated output size: (2x0x0). Output size is "
              "too small")


# (input shape, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
_AVG_GEOMETRIES = [
    ((2, 3, 6, 7), [2, 2], [], [0, 0], False, True, None),
    ((2, 3, 7, 9), [3, 3], [2, 2], [1, 1], True, False, None),  # ceil-mode overhang, padding not counted
    ((2, 3, 7, 9), [3, 3], [2, 2], [1, 1], True, True, None),  # padding counted, the overhang never
    ((1, 2, 7, 9), [3, 2], [2, 1], [1, 0], False, True, 5),
    ((3, 5, 5), [2, 3], [1, 2], [1, 1], True, False, None),  # unbatched
    ((0, 2, 4, 4), [2, 2], [], [0, 0], False, True, None),  # a batch of none
]


def _avg_ref(x, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None):
    out, _ = _avg_windows(x.shape, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    planes = x.reshape(-1, *x.shape[-2:]).astype(np.float64)
    res = np.zeros((len(planes), len(out), len(out[0])))
    for c, plane in enumerate(planes):
        for i, row in enumerate(out):
            for j, (r0, r1, c0, c1, n) in enumerate(row):
                res[c, i, j] = plane[r0:r1, c0:c1].sum() / n
    return res.reshape(*x.shape[:-2], len(out), len(out[0]))


def _avg_windows(shape, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    """Per output position, the window clipped to the input and its divisor (torch's AveragePool2d rules)."""
    k, p = _two(kernel_size), _two(padding)
    s = _two(stride) if len(_two(stride) if not isinstance(stride, int) else [stride]) else k
    h, w = shape[-2:]

    def size(n, kk, ss, pp):
        span = n + 2 * pp - kk
        out = (-(-span // ss) if ceil_mode else span // ss) + 1
        return out - 1 if ceil_mode and (out - 1) * ss >= n + pp else out

    def bounds(i, n, kk, ss, pp):
        start = i * ss - pp
        end = min(start + kk, n + pp)
        return start, end, max(start, 0), min(end, n)

    rows = []
    for i in range(size(h, k[0], s[0], p[0])):
        row = []
        for j in range(size(w, k[1], s[1], p[1])):
            a0, a1, r0, r1 = bounds(i, h, k[0], s[0], p[0])
            b0, b1, c0, c1 = bounds(j, w, k[1], s[1], p[1])
            n = divisor_override or ((a1 - a0) * (b1 - b0) if count_include_pad else (r1 - r0) * (c1 - c0))
            row.append((r0, r1, c0, c1, n))
        rows.append(row)
    return rows, k


def _avg_samples(d, rng):
    for shape, k, s, p, ceil, include, divisor in _AVG_GEOMETRIES:
        x = from_numpy(rng.standard_normal(shape).astype(d.numpy_dtype))
        yield SampleInput((x, k, s, p, ceil, include, divisor), name=f"{shape} k{k} s{s} p{p} ceil {ceil} "
                                                                    f"include_pad {include} divisor {divisor}")
    x = from_numpy(rng.standard_normal((2, 3, 8, 6)).astype(d.numpy_dtype))
    yield SampleInput((x.transpose(2, 3), [3, 3], [1, 1], [1, 1]), name="noncontiguous")
    yield SampleInput((from_numpy(rng.standard_normal((1, 2, 5, 5)).astype(d.numpy_dtype)), 2),
                      name="kernel_size as one int, stride omitted")


def _avg_bwd_samples(d, rng):
    for sample in _avg_samples(d, rng):
        x, k, *rest = sample.args
        rest += [[], 0, False, True, None][len(rest):]
        out = _avg_ref(x.numpy(), k, *rest)
        grad = from_numpy(rng.standard_normal(out.shape).astype(d.numpy_dtype))
        yield SampleInput((grad, x, k, *rest), name=sample.name)


def _avg_bwd_ref(grad, x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    windows, _ = _avg_windows(x.shape, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    planes = grad.reshape(-1, len(windows), len(windows[0])).astype(np.float64)
    out = np.zeros((len(planes), *x.shape[-2:]))
    for c, g in enumerate(planes):
        for i, row in enumerate(windows):
            for j, (r0, r1, c0, c1, n) in enumerate(row):
                out[c, r0:r1, c0:c1] += g[i, j] / n
    return out.reshape(x.shape)


def _avg_errors(rng):
    x = from_numpy(rng.standard_normal((1, 2, 5, 5)).astype(np.float32))
    yield err((x, [2, 2], [0, 1]), RuntimeError, "stride should not be zero")
    yield err((x, [2, 2], [], [2, 0]), RuntimeError, "pad should be at most half of effective kernel size, but got "
              "pad=2, kernel_size=2 and dilation=1")
    yield err((x, [2, 2], [], [-1, 0]), RuntimeError, "pad must be non-negative, but got pad: -1")
    yield err((x, [2, 2], [-1, 1]), RuntimeError, "stride should be greater than zero, but got dH: -1 dW: 1")
    yield err((x, [2, 2, 2]), RuntimeError, "avg_pool2d: kernel_size must either be a single int, or a tuple of two "
              "ints")
    yield err((x, [2, 2], [1, 2, 3]), RuntimeError, "avg_pool2d: stride must either be omitted, a single int, or a "
              "tuple of two ints")
    yield err((x, [2, 2], [], [0, 0], False, True, 0), RuntimeError, "divisor must be not zero")
    yield err((x, [6, 6]), RuntimeError, "Given input size: (2x5x5). Calculated output size: (2x0x0). Output size is "
              "too small")
    yield err((from_numpy(np.zeros((1, 0, 5, 5), np.float32)), [2, 2]), RuntimeError,
              "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:[1, 0, 5, 5]")


OPS = [
    OpInfo("max_pool2d_with_indices", _samples, ref=_ref, dtypes=FLOATING, errors=_errors),
    OpInfo("max_pool2d_with_indices_backward", _bwd_samples, ref=_bwd_ref, dtypes=FLOATING,
           tolerances={dt.float16: (2e-3, 2e-3), dt.bfloat16: (2e-2, 2e-2)}),
    OpInfo("avg_pool2d", _avg_samples, ref=_avg_ref, dtypes=FLOATING, errors=_avg_errors,
           tolerances={dt.float16: (2e-3, 2e-3), dt.bfloat16: (2e-2, 2e-2)}),
    OpInfo("avg_pool2d_backward", _avg_bwd_samples, ref=_avg_bwd_ref, dtypes=FLOATING,
           tolerances={dt.float16: (2e-3, 2e-3), dt.bfloat16: (2e-2, 2e-2)}),
]
