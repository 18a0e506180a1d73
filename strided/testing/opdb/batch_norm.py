"""OpInfos: ``native_batch_norm`` (F.batch_norm's op) and ``native_batch_norm_backward`` against NumPy, in training
(batch statistics) and evaluation (running statistics), with and without the affine parameters, for 2-d to 4-d
inputs."""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ...factories import from_numpy
from ..opinfo import FLOATING, ErrorInput, OpInfo, SampleInput
from .helpers import err

__all__ = ["OPS"]


def _batch_norm_ref(x, weight, bias, running_mean, running_var, training, momentum, eps):
    x = x.astype(np.float64)
    dims = (0, *range(2, x.ndim))
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    if training:
        mean, var = x.mean(dims), x.var(dims)
    else:
        mean, var = running_mean.astype(np.float64), running_var.astype(np.float64)
    invstd = 1 / np.sqrt(var + eps)
    out = (x - mean.reshape(shape)) * invstd.reshape(shape)
    if weight is not None:
        out = out * weight.astype(np.float64).reshape(shape)
    if bias is not None:
        out = out + bias.astype(np.float64).reshape(shape)
    return out, mean, invstd


def _samples(d, rng):
    def t(shape, scale=1.0, shift=0.0, dtype=d):
        return from_numpy((rng.standard_normal(shape) * scale + shift).astype(dtype.numpy_dtype))

    # the statistics in float32 for a half input (torch's mixed batch norm): float32 parameters then
    params = dt.float32 if d in (dt.float16, dt.bfloat16) else d
    for shape, training, affine in (((4, 3, 5, 5), True, True), ((6, 3), True, False), ((2, 3, 4), False, True),
                                    ((3, 2, 2, 3), False, False)):
        c = shape[1]
        weight, bias = (t((c,), dtype=params), t((c,), dtype=params)) if affine else (None, None)
        running_var = from_numpy((rng.random(c) + 0.5).astype(params.numpy_dtype))
        yield SampleInput((t(shape, 2.0, 1.0), weight, bias, t((c,), dtype=params), running_var, training, 0.1, 1e-5),
                          name=f"{shape} {'training' if training else 'evaluation'}{' affine' if affine else ''}")


def _errors(rng):
    x = from_numpy(rng.standard_normal((2, 3, 4)).astype(np.float32))
    stats = from_numpy(np.zeros(3, np.float32))
    yield err((x, None, None, None, stats, False, 0.1, 1e-5), RuntimeError,
              "running_mean must be defined in evaluation mode")
    yield err((x, None, None, stats, None, False, 0.1, 1e-5), RuntimeError,
              "running_var must be defined in evaluation mode")
    four = from_numpy(np.ones(4, np.float32))
    yield err((x, four, None, None, None, True, 0.1, 1e-5), RuntimeError, "weight should contain 3 elements not 4")
    yield err((x, None, None, four, stats, False, 0.1, 1e-5), RuntimeError,
              "running_mean should contain 3 elements not 4")
    yield err((x[0, 0], None, None, None, None, True, 0.1, 1e-5), IndexError,
              "Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    # torch names its kernel: the CPU one, or the CUDA statistics kernel
    yield ErrorInput(SampleInput((from_numpy(np.ones((2, 3, 4), np.int64)), None, None, None, None, True, 0.1, 1e-5)),
                     NotImplementedError, "\"batch_norm(_stats_cuda)?\" not implemented for 'Long'")


def _backward_ref(grad_out, x, weight, running_mean, running_var, save_mean, save_invstd, train, eps, output_mask):
    g, x = grad_out.astype(np.float64), x.astype(np.float64)
    dims = (0, *range(2, x.ndim))
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    if train:
        mean, invstd = save_mean.astype(np.float64), save_invstd.astype(np.float64)
    else:
        mean, invstd = running_mean.astype(np.float64), 1 / np.sqrt(running_var.astype(np.float64) + eps)
    xhat = (x - mean.reshape(shape)) * invstd.reshape(shape)
    scale = invstd * (weight.astype(np.float64) if weight is not None else 1)
    count = x.size // x.shape[1]
    sg, sgx = g.sum(dims), (g * xhat).sum(dims)
    if train:
        gi = scale.reshape(shape) * (g - (sg / count).reshape(shape) - xhat * (sgx / count).reshape(shape))
    else:
        gi = scale.reshape(shape) * g
    empty = np.zeros(0)
    return (gi if output_mask[0] else empty, sgx if output_mask[1] else empty, sg if output_mask[2] else empty)


def _backward_samples(d, rng):
    params = dt.float32 if d in (dt.float16, dt.bfloat16) else d

    def t(shape, dtype=d, scale=1.0, shift=0.0):
        return from_numpy((rng.standard_normal(shape) * scale + shift).astype(dtype.numpy_dtype))

    for shape, train, affine, mask in (((4, 3, 5, 5), True, True, [True, True, True]),
                                       ((6, 3), True, False, [True, False, False]),
                                       ((2, 3, 4), False, True, [True, True, False]),
                                       ((3, 2, 7), True, True, [False, True, True])):
        c = shape[1]
        x = t(shape, scale=2.0, shift=1.0)
        xs = x.numpy().astype(np.float64)
        dims = (0, *range(2, len(shape)))
        save_mean = from_numpy(xs.mean(dims).astype(params.numpy_dtype))
        save_invstd = from_numpy((1 / np.sqrt(xs.var(dims) + 1e-5)).astype(params.numpy_dtype))
        running_var = from_numpy((rng.random(c) + 0.5).astype(params.numpy_dtype))
        yield SampleInput((t(shape), x, t((c,), params) if affine else None, t((c,), params), running_var, save_mean,
                           save_invstd, train, 1e-5, mask),
                          name=f"{shape} {'training' if train else 'evaluation'}{' affine' if affine else ''} {mask}")


def _backward_errors(rng):
    x = from_numpy(rng.standard_normal((2, 3, 4)).astype(np.float32))
    stats = from_numpy(np.ones(3, np.float32))
    yield err((x[0], x, None, None, None, stats, stats, True, 1e-5, [True, True, True]), RuntimeError,
              "native_batch_norm_backward: grad_out of size [3, 4] does not match input of size [2, 3, 4]")


OPS = [
    OpInfo("native_batch_norm", _samples, ref=_batch_norm_ref, dtypes=FLOATING,
           tolerances={dt.float16: (2e-3, 4e-3), dt.bfloat16: (1.6e-2, 3e-2), dt.float32: (1e-5, 1e-5)},
           errors=_errors),
    OpInfo("native_batch_norm_backward", _backward_samples, ref=_backward_ref, dtypes=FLOATING, exact_dtype=False,
           errors=_backward_errors,
           tolerances={dt.float16: (4e-3, 8e-3), dt.bfloat16: (3e-2, 6e-2), dt.float32: (1e-5, 1e-5)}),
]
