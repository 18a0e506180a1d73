"""OpInfos: the FFT ops ``_fft_r2c``, ``_fft_c2r``, ``_fft_c2c`` (Note [FFT ops]) against ``numpy.fft`` in float64.

The samples cover one and several dims, negative dims, every normalization mode, non-contiguous, transposed
and batched inputs, odd and even lengths and a zero-size batch. The front-ends of ``strided.fft`` and the
gradients are compared with torch.fft in tests/backend/test_fft.py.
"""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ..opinfo import COMPLEX, OpInfo, SampleInput, make_arg
from .helpers import err
from .pointwise_samples import out_variant

_REAL = (dt.float32, dt.float64)
_FORWARD_NORM = {0: "backward", 1: "ortho", 2: "forward"}
_INVERSE_NORM = {0: "forward", 1: "ortho", 2: "backward"}


def _layouts(d, rng):
    """(tensor, dims, name) triples shared by the three ops."""
    yield make_arg((8,), d, rng=rng), [0], "1-d even"
    yield make_arg((3, 7), d, rng=rng), [1], "batched odd"
    yield make_arg((3, 7), d, rng=rng, noncontiguous=True), [-1], "noncontiguous"
    yield make_arg((6, 4), d, rng=rng).t(), [0], "transposed"
    yield make_arg((2, 4, 5), d, rng=rng), [0, 2], "two dims"
    yield make_arg((2, 3, 4), d, rng=rng), [-3, -2, -1], "all dims"
    yield make_arg((0, 6), d, rng=rng), [1], "zero-size batch"


def _r2c_samples(d, rng):
    for i, (x, dims, name) in enumerate(_layouts(d, rng)):
        yield SampleInput((x, dims, i % 3, True), name=f"{name} onesided")
        yield SampleInput((x, dims, (i + 1) % 3, False), name=f"{name} full")


def _r2c_ref(a, dim, normalization, onesided):
    transform = np.fft.rfftn if onesided else np.fft.fftn
    return transform(a, axes=dim, norm=_FORWARD_NORM[normalization])


def _c2r_samples(d, rng):
    for i, (x, dims, name) in enumerate(_layouts(d, rng)):
        n = 2 * (x.shape[dims[-1]] - 1) + i % 2  # even and odd output lengths
        yield SampleInput((_narrow(x, dims[-1], n // 2 + 1), dims, i % 3, n), name=name)
    yield SampleInput((make_arg((4, 9), d, rng=rng), [1], 0, 9), name="full-length input")


def _narrow(x, dim, n):
    if x.shape[dim] >= n:
        return x.narrow(dim, 0, n)
    from ...ops import bound as ops

    pad = list(x.shape)
    pad[dim] = n - x.shape[dim]
    return ops.cat([x, x.new_zeros(pad)], dim)


def _c2r_ref(a, dim, normalization, last_dim_size):
    s = [a.shape[d] for d in dim[:-1]] + [last_dim_size]
    return np.fft.irfftn(a, s=s, axes=dim, norm=_INVERSE_NORM[normalization])


def _c2c_samples(d, rng):
    for i, (x, dims, name) in enumerate(_layouts(d, rng)):
        yield SampleInput((x, dims, i % 3, i % 2 == 0), name=name)
    yield SampleInput((make_arg((3, 4), d, rng=rng), [], 1, True), name="no dims (a copy)")


def _c2c_ref(a, dim, normalization, forward):
    if not dim:
        return a.copy()
    if forward:
        return np.fft.fftn(a, axes=dim, norm=_FORWARD_NORM[normalization])
    return np.fft.ifftn(a, axes=dim, norm=_INVERSE_NORM[normalization])


def _r2c_errors(rng):
    f = make_arg((3, 4), dt.float32, rng=rng)
    yield err((make_arg((3, 4), dt.int64, rng=rng), [1], 0, True), TypeError,
              "Only supports floating-point dtypes, but found: Long")
    yield err((make_arg((3, 4), dt.complex64, rng=rng), [1], 0, True), TypeError,
              "Only supports floating-point dtypes, but found: ComplexFloat")
    yield err((make_arg((3, 4), dt.float16, rng=rng), [1], 0, True), NotImplementedError, "Unsupported dtype Half")
    yield err((f, [], 0, True), RuntimeError, "_fft_r2c must transform at least one axis")
    yield err((f, [1, -1], 0, True), RuntimeError, "FFT dims must be unique")
    yield err((f, [2], 0, True), IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)")
    yield err((make_arg((3, 0), dt.float32, rng=rng), [1], 0, True), RuntimeError,
              "Invalid number of data points (0) specified")


def _c2r_errors(rng):
    z = make_arg((3, 5), dt.complex64, rng=rng)
    yield err((make_arg((3, 5), dt.float32, rng=rng), [1], 0, 8), RuntimeError,
              "Only supports complex dtypes, but found: Float")
    yield err((z, [], 0, 8), RuntimeError, "_fft_c2r must transform at least one axis")
    yield err((z, [1], 0, 0), RuntimeError, "Invalid number of data points (0) specified")
    yield err((z, [1], 0, 20), RuntimeError, "_fft_c2r expects 11 (or 20) entries in dim 1 for last_dim_size=20, "
                                             "but got 5")


def _c2c_errors(rng):
    z = make_arg((3, 5), dt.complex64, rng=rng)
    yield err((make_arg((3, 5), dt.float64, rng=rng), [1], 0, True), RuntimeError,
              "Only supports complex dtypes, but found: Double")
    yield err((z, [0, 0], 0, True), RuntimeError, "FFT dims must be unique")


_TOL = {dt.float32: (1e-5, 1e-4), dt.complex64: (1e-5, 1e-4)}  # sums of up to 24 terms in single precision
_r2c = OpInfo("_fft_r2c", _r2c_samples, ref=_r2c_ref, dtypes=_REAL, errors=_r2c_errors, tolerances=_TOL)
_c2r = OpInfo("_fft_c2r", _c2r_samples, ref=_c2r_ref, dtypes=COMPLEX, errors=_c2r_errors, tolerances=_TOL)
_c2c = OpInfo("_fft_c2c", _c2c_samples, ref=_c2c_ref, dtypes=COMPLEX, errors=_c2c_errors, tolerances=_TOL)

OPS = [
    _r2c,
    out_variant(_r2c, "_fft_r2c.out"),
    _c2r,
    out_variant(_c2r, "_fft_c2r.out"),
    _c2c,
    out_variant(_c2c, "_fft_c2c.out"),
]
