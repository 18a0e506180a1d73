"""Fractional max pooling of ``strided.nn.functional`` (Graham, 2014): fractional_max_pool2d / 3d and their
``_with_indices`` forms, composed of index arithmetic, gather and argmax (so every backend runs them).

Note [Fractional max pooling windows]
Each (batch, channel) plane pools every spatial dim of size n with a window of k elements into m outputs;
output i's window starts at torch's pseudo-random position (ATen's FractionalMaxPooling.h,
``generate_intervals``)::

    alpha = (n - k) / (m - 1)
    start_i = int((i + u) * alpha) - int(u * alpha)     for i < m - 1
    start_{m-1} = n - k

with ``u`` the plane's sample of that dim from ``_random_samples`` ((N, C, 2): column 0 is the width's,
column 1 the height's; (N, C, 3): time, height, width in that order, as torch's kernels read them). torch
computes ``alpha`` and the products in the input's scalar type, so the starts are computed here with tensor
ops in the input's dtype too (a float32 product can truncate to another integer than its float64 value):
the samples never leave the device. The starts plus ``arange(k)`` give each dim's window positions, and
broadcasting them into flat offsets gives each output's (prod(k),) window of flat positions in the plane,
in row-major window order: the order torch's kernel scans. One ``gather`` fetches the window values and
the chosen element follows torch's kernel rule ``val > max || isnan(val)`` from ``max = -inf``: the first
maximum, or the last NaN (an all ``-inf`` window picks its first element, which is also its first
maximum), picked by the helper adaptive max pooling uses (Note [Separable adaptive max pooling]). The
chosen flat positions are torch's int64 indices, and the values are one differentiable ``gather`` of the
input at them, whose backward scatter-adds each output's gradient into its chosen element as torch's
backward does (overlapping windows that chose the same element add up).
"""

from __future__ import annotations

import math

from .. import dtypes as _dt
from ..autograd.grad_mode import no_grad
from ..ops import bound as ops
from ..tensor import Tensor
from .pooling import first_max_or_last_nan

__all__ = [
    "fractional_max_pool2d", "fractional_max_pool3d",
    "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices",
]

_NAMES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _int_tuple(v, k: int, arg: str, position: int, op: str) -> tuple:
    """``kernel_size`` / ``output_size`` as a tuple of ints (k of them when given as one int), with the
    argument parser's TypeErrors; the length is checked by ``_check_length``."""
    if _is_int(v):
        return (v,) * k
    if not isinstance(v, (list, tuple)):
        raise TypeError(f"{op}(): argument '{arg}' (position {position}) must be tuple of ints, "
                        f"not {type(v).__name__}")
    for i, e in enumerate(v):
        if not _is_int(e):
            raise TypeError(f"{op}(): argument '{arg}' (position {position}) must be tuple of ints, but found "
                            f"element of type {type(e).__name__} at pos {i}")
    return tuple(v)


def _check_length(v: tuple, k: int, arg: str, op: str) -> None:
    if len(v) != k:
        ints = "Ints" if k == 2 else "three Ints"
        raise RuntimeError(f"{op}: {arg} must either be a single Int or tuple of {ints}")


def _sizes_from_ratio(input: Tensor, output_ratio, k: int, op: str) -> list[int]:
    """torch's Python: ``int(input size * ratio)`` per dim (``_pair`` / ``_triple`` of the ratio)."""
    if isinstance(output_ratio, (list, tuple)):
        if k == 2 and len(output_ratio) > 2:
            raise ValueError(f"{op} requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = tuple(output_ratio)
    else:
        ratio = (output_ratio,) * k
    if len(ratio) < k:
        raise IndexError("tuple index out of range")
    return [int(input.shape[j - k] * ratio[j]) for j in range(k)]


def _samples(input: Tensor, k: int) -> Tensor:
    """torch's draw: uniform [0, 1) of shape (N, C, k) in the input's dtype on its device."""
    if not input.dtype.is_floating_point:
        from ..backends.meta.reductions import type_name

        raise NotImplementedError(f"\"check_uniform_bounds\" not implemented for '{type_name(input.dtype)}'")
    n_batch = 1 if input.dim() == k + 1 else input.size(0)
    return ops.rand((n_batch, input.size(-k - 1), k), dtype=input.dtype, device=input.device)


def _check(input: Tensor, kernel: tuple, sizes: tuple, samples: Tensor, k: int, op: str) -> None:
    """torch's checks of fractional_max_pool2d / 3d (meta function, kernel template and
    ``fractional_max_pool_check_shape``), in its order."""
    if min(kernel) <= 0:
        raise RuntimeError(f"{op}(): kernel size should be greater than zero, but got {'x'.join(map(str, kernel))}")
    where = op if k == 2 else f"{op}_out"
    shape = list(input.shape)
    if input.dim() not in (k + 1, k + 2):
        raise RuntimeError(f"{where}(): Expected {k + 1}D or {k + 2}D tensor, but got: {shape}")
    for i in range(1, input.dim()):
        if shape[i] == 0:
            raise RuntimeError(f"{where}(): Expected input to have non-zero size for non-batch dimensions, but "
                               f"got{shape} with dimension {i} being empty.")
    spatial = shape[-k:]
    # 2d checks height then width with <=; 3d time, width, height with < (torch's kernels)
    order = (0, 1) if k == 2 else (0, 2, 1)
    for j in order:
        fits = sizes[j] + kernel[j] - 1 <= spatial[j] if k == 2 else sizes[j] + kernel[j] - 1 < spatial[j]
        if not fits:
            name = _NAMES[k][j]
            raise RuntimeError(f"{where}(): pool {name} {kernel[j]} too large relative to input {name} {spatial[j]}")
    out_shape = [*shape[:-k], *sizes]
    negative = [s for s in sizes if s < 0]
    if negative:
        raise RuntimeError(f"Trying to create tensor with negative dimension {negative[0]}: {out_shape}")
    if samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.dim() != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.dim()}")
    batch, channels = (1, shape[0]) if input.dim() == k + 1 else (shape[0], shape[1])
    if samples.shape[0] < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != channels:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != k:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {k}; got {samples.shape[2]}.")
    if not input.dtype.is_floating_point:
        from ..backends.meta.reductions import type_name

        raise NotImplementedError(f"\"{op}_out_frame\" not implemented for '{type_name(input.dtype)}'")


def _starts(u: Tensor, n: int, m: int, k: int) -> Tensor:
    """(N, C, m) int64 window starts of a dim of size ``n`` pooled to ``m`` by windows of ``k``, from the
    (N, C) samples ``u`` (Note [Fractional max pooling windows])."""
    last = ops.full((*u.shape, min(m, 1)), n - k, dtype=_dt.int64, device=u.device)
    if m <= 1:
        return last
    dtype, device = u.dtype, u.device
    alpha = ops.div(ops.full((), n - k, dtype=dtype, device=device), ops.full((), m - 1, dtype=dtype, device=device))
    u = ops.unsqueeze(u, -1)
    i = ops.arange(0, m - 1, dtype=dtype, device=device)
    starts = ops.sub(ops.mul(ops.add(i, u), alpha).to(_dt.int64), ops.mul(u, alpha).to(_dt.int64))
    return ops.cat([starts, last], -1)


def _fractional_max(input: Tensor, kernel: tuple, sizes: tuple, samples: Tensor, k: int):
    unbatched = input.dim() == k + 1
    x = ops.unsqueeze(input, 0) if unbatched else input
    n, c = x.shape[0], x.shape[1]
    spatial = list(x.shape[2:])
    # torch's sample columns: 2d (width, height), 3d (time, height, width)
    columns = (1, 0) if k == 2 else (0, 1, 2)
    with no_grad():
        u = ops.narrow(samples.detach(), 0, 0, n)
        flat, stride = None, 1
        for j in reversed(range(k)):
            starts = _starts(ops.select(u, 2, columns[j]), spatial[j], sizes[j], kernel[j])
            offsets = ops.arange(0, kernel[j], dtype=_dt.int64, device=x.device)
            pos = ops.mul(ops.add(ops.unsqueeze(starts, -1), offsets), stride)  # (N, C, m_j, k_j)
            shape = [n, c] + [1] * (2 * k)
            shape[2 + j], shape[2 + k + j] = sizes[j], kernel[j]
            pos = ops.reshape(pos, tuple(shape))
            flat = pos if flat is None else ops.add(pos, flat)
            stride *= spatial[j]
        windows = ops.reshape(flat, (n, c, math.prod(sizes), math.prod(kernel)))
        plane = ops.reshape(x.detach(), (n, c, math.prod(spatial)))
        values = ops.gather(plane, 2, ops.reshape(windows, (n, c, math.prod(sizes) * math.prod(kernel))))
        values = ops.reshape(values, tuple(windows.shape))
        choice = first_max_or_last_nan(values, 3)
        indices = ops.squeeze(ops.gather(windows, 3, choice), [3])
    out = ops.gather(ops.reshape(x, (n, c, math.prod(spatial))), 2, indices)
    out = ops.reshape(out, (n, c, *sizes))
    indices = ops.reshape(indices, (n, c, *sizes))
    if unbatched:
        return ops.squeeze(out, [0]), ops.squeeze(indices, [0])
    return out, indices


def _with_indices(input, kernel_size, output_size, output_ratio, _random_samples, k: int):
    op = f"fractional_max_pool{k}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{op} requires specifying either an output_size or an output_ratio")
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if output_size is None:
        output_size = _sizes_from_ratio(input, output_ratio, k, op)
    if _random_samples is None:
        _random_samples = _samples(input, k)
    kernel = _int_tuple(kernel_size, k, "kernel_size", 2, op)
    sizes = _int_tuple(output_size, k, "output_size", 3, op)
    _check_length(kernel, k, "kernel_size", op)
    _check_length(sizes, k, "output_size", op)
    _check(input, kernel, sizes, _random_samples, k, op)
    return _fractional_max(input, kernel, sizes, _random_samples, k)


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                                       return_indices: bool = False, _random_samples: Tensor | None = None):
    """(values, indices): maxima over pseudo-randomly placed ``kernel_size`` windows of the (H, W) plane, to
    ``output_size`` or ``int(input size * output_ratio)``, and each one's flat int64 index in the plane
    (Note [Fractional max pooling windows]). ``_random_samples`` (N, C, 2) in [0, 1) places the windows;
    drawn with strided's generator when not given."""
    return _with_indices(input, kernel_size, output_size, output_ratio, _random_samples, 2)


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                                       return_indices: bool = False, _random_samples: Tensor | None = None):
    """(values, indices) of fractional max pooling over the (T, H, W) volume; ``_random_samples`` is
    (N, C, 3)."""
    return _with_indices(input, kernel_size, output_size, output_ratio, _random_samples, 3)


def fractional_max_pool2d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples: Tensor | None = None):
    """Fractional max pooling of the (H, W) plane; with ``return_indices`` also the flat indices."""
    out = fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio, False, _random_samples)
    return out if return_indices else out[0]


def fractional_max_pool3d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples: Tensor | None = None):
    """Fractional max pooling of the (T, H, W) volume; with ``return_indices`` also the flat indices."""
    out = fractional_max_pool3d_with_indices(input, kernel_size, output_size, output_ratio, False, _random_samples)
    return out if return_indices else out[0]


from ..amp.composed_functions import CPU_FP32 as _CPU_FP32  # noqa: E402
from ..amp.composed_functions import wrap_policies as _wrap_policies  # noqa: E402

# torch's native kernels, on its CPU float32 autocast list (Note [Autocast around composed functions])
_wrap_policies(globals(), {name: _CPU_FP32 for name in (
    "fractional_max_pool2d", "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d_with_indices")})
