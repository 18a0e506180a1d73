"""OpInfo: the ``convolution`` op (``at::convolution``) against a NumPy sum over kernel offsets, for 1-, 2- and 3-d,
grouped, strided, dilated, padded, transposed (with output padding) and channels-last samples."""

from __future__ import annotations

import itertools

import numpy as np

from ... import dtypes as dt
from ...factories import from_numpy
from ...memory_formats import channels_last
from ..opinfo import FLOATING, OpInfo, SampleInput
from .helpers import err

__all__ = ["OPS"]


def _full(v, k):
    return list(v) * k if len(v) == 1 else list(v)


def _convolution_ref(x, w, b, stride, padding, dilation, transposed, output_padding, groups):
    x, w = x.astype(np.complex128 if np.iscomplexobj(x) else np.float64), w.astype(np.float64)
    k = w.ndim - 2
    s, p, d, q = (_full(v, k) for v in (stride, padding, dilation, output_padding))
    n, sp = x.shape[0], x.shape[2:]
    ks = w.shape[2:]
    if not transposed:
        oc, cg = w.shape[:2]
        xp = np.pad(x, [(0, 0), (0, 0)] + [(pi, pi) for pi in p])
        osz = [(sp[i] + 2 * p[i] - d[i] * (ks[i] - 1) - 1) // s[i] + 1 for i in range(k)]
        out = np.zeros((n, oc, *osz), dtype=x.dtype)
        og = oc // groups
        for off in itertools.product(*(range(kk) for kk in ks)):
            window = xp[(slice(None), slice(None)) + tuple(
                slice(off[i] * d[i], off[i] * d[i] + (osz[i] - 1) * s[i] + 1, s[i]) for i in range(k))]
            for g in range(groups):
                part = window[:, g * cg:(g + 1) * cg]  # (N, cg, *osz)
                wk = w[(slice(g * og, (g + 1) * og), slice(None)) + off]  # (og, cg)
                out[:, g * og:(g + 1) * og] += np.einsum("nc...,oc->no...", part, wk)
    else:
        cin, og = w.shape[:2]
        cg = cin // groups
        oc = og * groups
        full = [(sp[i] - 1) * s[i] + d[i] * (ks[i] - 1) + 1 for i in range(k)]
        osz = [full[i] - 2 * p[i] + q[i] for i in range(k)]
        buf = np.zeros((n, oc, *[max(full[i], p[i] + osz[i]) for i in range(k)]), dtype=x.dtype)
        for off in itertools.product(*(range(kk) for kk in ks)):
            region = (slice(None), slice(None)) + tuple(
                slice(off[i] * d[i], off[i] * d[i] + (sp[i] - 1) * s[i] + 1, s[i]) for i in range(k))
            for g in range(groups):
                wk = w[(slice(g * cg, (g + 1) * cg), slice(None)) + off]  # (cg, og)
                contrib = np.einsum("nc...,co->no...", x[:, g * cg:(g + 1) * cg], wk)
                buf[(region[0], slice(g * og, (g + 1) * og)) + region[2:]] += contrib
        out = buf[(slice(None), slice(None)) + tuple(slice(p[i], p[i] + osz[i]) for i in range(k))]
    if b is not None:
        out = out + b.astype(np.float64).reshape((1, -1) + (1,) * k)
    return out


# (input shape, weight shape, bias, stride, padding, dilation, transposed, output_padding, groups)
_CASES = [
    ((2, 4, 5, 6), (6, 2, 3, 3), True, [1, 2], [1, 0], [1, 1], False, [0], 2),
    ((2, 3, 7), (4, 3, 3), False, [2], [1], [2], False, [0], 1),
    ((1, 3, 4, 4), (5, 3, 1, 1), True, [1], [0], [1], False, [0], 1),
    ((2, 3, 6, 5), (4, 3, 2, 3), True, [2, 1], [1, 1], [2, 1], False, [0, 0], 1),
    ((1, 4, 3, 3), (4, 3, 3, 3), True, [2], [1], [1], True, [1], 1),
    ((1, 2, 3, 4, 3), (3, 2, 2, 2, 2), False, [1], [0], [1], False, [0], 1),
    ((2, 3, 5), (3, 2, 3), True, [2], [0], [1], True, [1], 1),
    ((1, 2, 4, 4), (2, 3, 3, 3), False, [1], [1], [2], True, [1], 1),  # output padding = stride: no col2im
]


def _samples(d, rng):
    def t(shape):
        return from_numpy(rng.standard_normal(shape).astype(d.numpy_dtype))

    for xs, ws, bias, s, p, dil, tr, q, g in _CASES:
        oc = ws[1] * g if tr else ws[0]
        yield SampleInput((t(xs), t(ws), t((oc,)) if bias else None, s, p, dil, tr, q, g),
                          name=f"{xs} w{ws} s{s} p{p} d{dil}{' transposed' if tr else ''} g{g}")
    x = t((2, 3, 5, 5)).contiguous(memory_format=channels_last)
    yield SampleInput((x, t((4, 3, 3, 3)), t((4,)), [1], [1], [1], False, [0], 1), name="channels_last input")


def _errors(rng):
    x = from_numpy(rng.standard_normal((1, 3, 5, 5)).astype(np.float32))
    w = from_numpy(rng.standard_normal((4, 3, 3, 3)).astype(np.float32))
    yield err((x[0], w, None, [1], [0], [1], False, [0], 1), RuntimeError, "Expected 4-dimensional input for "
              "4-dimensional weight [4, 3, 3, 3], but got 3-dimensional input of size [3, 5, 5] instead")
    yield err((x, w, None, [1, 1, 1], [0], [1], False, [0], 1), RuntimeError, "expected stride to be a single "
              "integer value or a list of 2 values to match the convolution dimensions, but got stride=[1, 1, 1]")
    yield err((x, w[:, :2], None, [1], [0], [1], False, [0], 1), RuntimeError, "Given groups=1, weight of size "
              "[4, 2, 3, 3], expected input[1, 3, 5, 5] to have 2 channels, but got 3 channels instead")
    yield err((x, w, None, [1.5], [0], [1], False, [0], 1), TypeError, "convolution(): argument 'stride' (position 4) "
              "must be tuple of ints, but found element of type float at pos 0")
    yield err((x, w[0, 0], None, [1], [0], [1], False, [0], 1), RuntimeError,
              "weight should have at least three dimensions")
    yield err((x, w.double(), None, [1], [0], [1], False, [0], 1), RuntimeError,
              "expected scalar type Float but found Double")
    yield err((x, w, from_numpy(np.zeros(3, np.float32)), [1], [0], [1], False, [0], 1), RuntimeError,
              "Given weight of size [4, 3, 3, 3], expected bias to be 1-dimensional with 4 elements, but got bias of "
              "size [3] instead")
    yield err((x, w, None, [0], [0], [1], False, [0], 1), RuntimeError, "non-positive stride is not supported")


OPS = [
    # sums of up to C * K products: the half types round each GEMM's result once, the reference not at all
    OpInfo("convolution", _samples, ref=_convolution_ref, dtypes=FLOATING, errors=_errors,
           tolerances={dt.float16: (2e-2, 2e-2), dt.bfloat16: (5e-2, 5e-2), dt.float32: (1e-4, 1e-4)},
           cuda_tolerances={dt.float32: (1e-2, 1e-2)}),  # TF32 by default (Note [Convolution precision])
]
