"""OpInfos: ``native_group_norm`` (F.group_norm's op) and ``native_group_norm_backward`` against NumPy, with and
without the affine parameters, one group to one group per channel, 2-d to 4-d inputs (Note [Group-norm node])."""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ...factories import from_numpy
from ..opinfo import FLOATING, OpInfo, SampleInput
from .helpers import err

__all__ = ["OPS"]

_EPS = 1e-5


def _stats(x, n, group):
    xg = x.astype(np.float64).reshape(n, group, -1)
    mean = xg.mean(2)
    return xg, mean, 1 / np.sqrt(xg.var(2) + _EPS)


def _group_norm_ref(x, weight, bias, n, c, hxw, group, eps):
    xg, mean, rstd = _stats(x, n, group)
    out = ((xg - mean[..., None]) * rstd[..., None]).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    if weight is not None:
        out = out * weight.astype(np.float64).reshape(shape)
    if bias is not None:
        out = out + bias.astype(np.float64).reshape(shape)
    return out, mean, rstd


_CASES = [((4, 6, 5, 5), 3, True, True), ((5, 4), 2, False, False), ((2, 6, 7), 6, True, False),
          ((3, 4, 2, 3), 1, False, True)]


def _samples(d, rng):
    # float32 parameters and statistics for a half input
    params = dt.float32 if d in (dt.float16, dt.bfloat16) else d

    def t(shape, dtype=d, scale=1.0, shift=0.0):
        return from_numpy((rng.standard_normal(shape) * scale + shift).astype(dtype.numpy_dtype))

    for shape, group, has_weight, has_bias in _CASES:
        n, c = shape[:2]
        yield SampleInput((t(shape, scale=2.0, shift=1.0), t((c,), params) if has_weight else None,
                           t((c,), params) if has_bias else None, n, c, int(np.prod(shape[2:])), group, _EPS),
                          name=f"{shape} groups={group}{' weight' if has_weight else ''}{' bias' if has_bias else ''}")


def _errors(rng):
    x = from_numpy(rng.standard_normal((2, 6, 4)).astype(np.float32))
    yield err((x, None, None, 2, 6, 4, 4, _EPS), RuntimeError, "Expected number of channels in input to be divisible "
              "by num_groups, but got input of shape [2, 6, 4] and num_groups=4")
    yield err((x, from_numpy(np.ones(5, np.float32)), None, 2, 6, 4, 3, _EPS), RuntimeError, "Expected weight to be a "
              "vector of size equal to the number of channels in input, but got weight of shape [5] and input of "
              "shape [2, 6, 4]")
    yield err((x, None, None, 2, 6, 5, 3, _EPS), RuntimeError, "Expected the input of size [2, 6, 4] to have "
              "N * C * HxW = 2 * 6 * 5 elements")


def _backward_ref(grad_out, x, mean, rstd, weight, n, c, hxw, group, output_mask):
    g = grad_out.astype(np.float64)
    xg, _, _ = _stats(x, n, group)  # the saved statistics are the input's (the samples make them so)
    mean, rstd = mean.astype(np.float64), rstd.astype(np.float64)
    xhat = ((xg - mean[..., None]) * rstd[..., None]).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    dims = (0, *range(2, x.ndim))
    gy = (g * weight.astype(np.float64).reshape(shape) if weight is not None else g).reshape(n, group, -1)
    xh = xhat.reshape(n, group, -1)
    gi = rstd[..., None] * (gy - gy.mean(2, keepdims=True) - xh * (gy * xh).mean(2, keepdims=True))
    empty = np.zeros(0)
    return (gi.reshape(x.shape) if output_mask[0] else empty, (g * xhat).sum(dims) if output_mask[1] else empty,
            g.sum(dims) if output_mask[2] else empty)


def _backward_samples(d, rng):
    params = dt.float32 if d in (dt.float16, dt.bfloat16) else d

    def t(shape, dtype=d, scale=1.0, shift=0.0):
        return from_numpy((rng.standard_normal(shape) * scale + shift).astype(dtype.numpy_dtype))

    masks = ([True, True, True], [True, False, False], [False, True, True], [True, True, False])
    for (shape, group, has_weight, _), mask in zip(_CASES, masks):
        n, c = shape[:2]
        x = t(shape, scale=2.0, shift=1.0)
        _, mean, rstd = _stats(x.numpy(), n, group)
        yield SampleInput((t(shape), x, from_numpy(mean.astype(params.numpy_dtype)),
                           from_numpy(rstd.astype(params.numpy_dtype)), t((c,), params) if has_weight else None, n, c,
                           int(np.prod(shape[2:])), group, mask), name=f"{shape} groups={group} {mask}")


OPS = [
    OpInfo("native_group_norm", _samples, ref=_group_norm_ref, dtypes=FLOATING, errors=_errors,
           tolerances={dt.float16: (2e-3, 4e-3), dt.bfloat16: (1.6e-2, 3e-2), dt.float32: (1e-5, 1e-5)}),
    OpInfo("native_group_norm_backward", _backward_samples, ref=_backward_ref, dtypes=FLOATING, exact_dtype=False,
           tolerances={dt.float16: (4e-3, 8e-3), dt.bfloat16: (3e-2, 6e-2), dt.float32: (2e-5, 2e-5)}),
]
