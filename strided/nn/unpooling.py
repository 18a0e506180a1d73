"""Max unpooling of ``strided.nn.functional``: max_unpool1d / 2d / 3d, the partial inverses of max pooling.

Note [Unpooling as a scatter]
``max_unpool`` puts each input value at its index (a flat index into the output's spatial dims, as
max pooling returns) of a zero output: one ``scatter`` into zeros of shape (*, prod(output_size)),
differentiable w.r.t. the input (scatter's backward gathers the gradient at the indices, as torch's
max_unpool backward does). The output size follows torch's ``_unpool_output_size``. An index outside
the output volume: on CPU the indices are read first and torch's error is raised ("Found an invalid
max index"); on CUDA reading them would synchronize, so the scatter kernel's own bounds check reports
it (Note [Deferred index errors]): scatter's message with the bad value, raised at the next
synchronizing call, nothing written outside the output. Meta tensors hold no indices to check.
1-d unpooling is 2-d unpooling over a width of one, as torch's (so its messages name max_unpooling2d).
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes as _dt
from ..ops import bound as ops
from ..tensor import Tensor
from .channels_last import keeps_channels_last

__all__ = ["max_unpool1d", "max_unpool2d", "max_unpool3d"]


def _tuple(v, k: int, name: str, op: str) -> tuple[int, ...]:
    """torch's _single/_pair/_triple: an int repeated k times; a sequence must have k ints."""
    if isinstance(v, int):
        return (v,) * k
    if not isinstance(v, (list, tuple)) or not all(isinstance(e, int) for e in v):
        raise TypeError(f"{op}(): argument '{name}' must be int or tuple of ints, not {v!r}")
    if len(v) != k:
        raise RuntimeError(f"{op}(): expected {name} to be a single integer value or a list of {k} values, "
                           f"but got {tuple(v)}")
    return tuple(v)


def _dims_error(input: Tensor, k: int, name: str) -> RuntimeError:
    return RuntimeError(f"Input to {name} should be a {k + 1}d or {k + 2}d Tensor, but got a tensor with "
                        f"{input.dim()} dimensions.")


def _unpool_output_size(input: Tensor, kernel_size, stride, padding, output_size, name: str) -> list[int]:
    """torch's ``_unpool_output_size``: the default size, or ``output_size`` checked against it."""
    k = len(kernel_size)
    if input.dim() < k:
        raise _dims_error(input, max(k, 2), name)
    default = [(input.shape[-k + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d] for d in range(k)]
    if output_size is None:
        ret = default
    else:
        if not isinstance(output_size, (list, tuple)) or not all(isinstance(e, int) for e in output_size):
            raise TypeError(f"max_unpool{k}d(): argument 'output_size' must be a sequence of ints, not "
                            f"{output_size!r}")
        if len(output_size) == k + 2:
            output_size = output_size[2:]
        if len(output_size) != k:
            raise ValueError(f"output_size should be a sequence containing {k} or {k + 2} elements, but it has a "
                             f"length of '{len(output_size)}'")
        for d in range(k):
            lo, hi = default[d] - stride[d], default[d] + stride[d]
            if not lo < output_size[d] < hi:
                raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {lo} and {hi})')
        ret = list(output_size)
    for d in range(k):
        if ret[d] < 0:
            raise ValueError("max_unpooling: output_size must contain non-negative spatial dimensions, but got "
                             f"output_size[{d}]={ret[d]}")
    return ret


def _unpool(input: Tensor, indices: Tensor, size: list[int], kernel: str, name: str, stride=None) -> Tensor:
    """Scatter ``input`` into zeros of spatial size ``size`` at ``indices`` (Note [Unpooling as a scatter])."""
    k = len(size)
    if indices.dtype is not _dt.int64:
        from ..backends.meta.reductions import type_name

        got = f" but got: {type_name(indices.dtype)}" if k == 2 else ""
        raise RuntimeError(f"elements in indices should be type int64{got}")
    if input.dim() not in (k + 1, k + 2):
        raise _dims_error(input, k, name)
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(input.shape)}) "
                           f"but got indices tensor with shape: {list(indices.shape)}")
    for i in range(1, input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError(f"{name}_forward_out_cpu(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but got {list(input.shape)} with dimension {i} being empty.")
    if stride is not None and min(stride) <= 0:
        raise RuntimeError(f"strides should be greater than zero, but got stride: {list(stride)}")
    if not input.dtype.is_floating_point:
        from ..backends.meta.reductions import type_name

        raise NotImplementedError(f"\"{kernel}\" not implemented for '{type_name(input.dtype)}'")
    lead = tuple(input.shape[:-k])
    volume = math.prod(size)
    out = ops.zeros((*lead, volume), dtype=input.dtype, device=input.device)
    if out.numel() == 0:  # torch writes nothing and checks nothing here
        return ops.reshape(out, (*lead, *size))
    if indices.device.type == "cpu":
        _check_indices(indices, volume, size)
    flat = (*lead, math.prod(input.shape[-k:]))
    out = ops.scatter(out, len(lead), ops.reshape(indices, flat), ops.reshape(input, flat))
    return ops.reshape(out, (*lead, *size))


def _check_indices(indices: Tensor, volume: int, size: list[int]) -> None:
    """torch's CPU error for the first index outside the output volume."""
    idx = indices.numpy().reshape(-1)
    bad = (idx < 0) | (idx >= volume)
    if bad.any():
        value = int(idx[int(np.argmax(bad))])
        raise RuntimeError(f"Found an invalid max index: {value} (output volumes are of size "
                           f"{'x'.join(map(str, size))})")


def _check_tensors(op: str, input, indices) -> None:
    for name, value in (("input", input), ("indices", indices)):
        if not isinstance(value, Tensor):
            raise TypeError(f"{op}(): argument '{name}' must be Tensor, not {type(value).__name__}")


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """Partial inverse of ``max_pool1d``: ``input`` at ``indices`` of a zero (N, C, L_out) or (C, L_out)."""
    op = "max_unpool1d"
    _check_tensors(op, input, indices)
    k = _tuple(kernel_size, 1, "kernel_size", op)
    s = k if stride is None else _tuple(stride, 1, "stride", op)
    size = _unpool_output_size(input, k, s, _tuple(padding, 1, "padding", op), output_size, "max_unpooling2d")
    out = _unpool(ops.unsqueeze(input, -1), ops.unsqueeze(indices, -1), [*size, 1], "max_unpool2d",
                  "max_unpooling2d")
    return ops.squeeze(out, [-1])


@keeps_channels_last(rank=4)
def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """Partial inverse of ``max_pool2d``: ``input`` at ``indices`` (flat in each output plane) of a zero
    (N, C, H_out, W_out) or (C, H_out, W_out)."""
    op = "max_unpool2d"
    _check_tensors(op, input, indices)
    k = _tuple(kernel_size, 2, "kernel_size", op)
    s = k if stride is None else _tuple(stride, 2, "stride", op)
    size = _unpool_output_size(input, k, s, _tuple(padding, 2, "padding", op), output_size, "max_unpooling2d")
    return _unpool(input, indices, size, "max_unpool2d", "max_unpooling2d")


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """Partial inverse of ``max_pool3d``: ``input`` at ``indices`` (flat in each output volume) of a zero
    (N, C, D_out, H_out, W_out) or (C, D_out, H_out, W_out)."""
    op = "max_unpool3d"
    _check_tensors(op, input, indices)
    k = _tuple(kernel_size, 3, "kernel_size", op)
    s = k if stride is None else _tuple(stride, 3, "stride", op)
    size = _unpool_output_size(input, k, s, _tuple(padding, 3, "padding", op), output_size, "max_unpooling3d")
    return _unpool(input, indices, size, "max_unpool3d", "max_unpooling3d", stride=s)


from ..amp.composed_functions import CPU_FP32 as _CPU_FP32  # noqa: E402
from ..amp.composed_functions import wrap_policies as _wrap_policies  # noqa: E402

# torch's native kernels, on its CPU float32 autocast list (Note [Autocast around composed functions])
_wrap_policies(globals(), {name: _CPU_FP32 for name in ("max_unpool2d", "max_unpool3d")})
