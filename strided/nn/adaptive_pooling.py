"""Adaptive average pooling of ``strided.nn.functional``: adaptive_avg_pool1d / 2d / 3d.

Note [Separable adaptive pooling]
torch's adaptive pooling averages, for output index i of a dim of size n pooled to m, the input
bin ``[floor(i * n / m), ceil((i + 1) * n / m))``. A mean over a box is the mean over each of its
dims in turn, so the 3-d form pools each dim with one matmul by an (n, m) matrix whose column i
holds 1 / len(bin i) on that bin: any output size in three GEMMs, differentiable as matmul. The
2-d form is one ``avg_pool2d`` when every dim divides evenly, else one ``narrow`` + ``mean`` per
output cell (its long-standing path, verified on CUDA; the matmul form would serve it too).
"""

from __future__ import annotations

import numpy as np

from ..ops import bound as ops
from ..tensor import Tensor
from .channels_last import keeps_channels_last

__all__ = ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d"]


def _sizes(input: Tensor, output_size, k: int, op: str) -> list:
    """torch's reading of ``output_size``: its Python ``_list_with_default`` (None keeps that input size), then the
    op's checks -- ``k`` sizes (one stands for all), none negative (0 gives an empty output)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if isinstance(output_size, int) and not isinstance(output_size, bool):
        sizes = [output_size]
    else:
        if not isinstance(output_size, (list, tuple)):
            raise TypeError(f"object of type '{type(output_size).__name__}' has no len()")
        if input.dim() <= len(output_size):
            raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
        first = input.dim() - len(output_size)
        sizes = [input.shape[first + i] if v is None else v for i, v in enumerate(output_size)]
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in sizes):
            raise TypeError(f"{op}(): argument 'output_size' must be tuple of ints, not {type(output_size).__name__}")
    if len(sizes) == 1:
        sizes = sizes * k
    if len(sizes) != k:
        raise RuntimeError(f"{op}: output_size must be {k}")
    if min(sizes) < 0:
        shown = ", ".join(map(str, sizes[:2])) + "".join(f",{v}" for v in sizes[2:])  # torch's spacing
        raise RuntimeError(f"{op}: elements of output_size must be greater than or equal to 0 but received {{{shown}}}")
    return sizes


def _check(input, k: int, op: str) -> None:
    """torch's checks of the input: no empty non-batch dim, the rank, a floating dtype."""
    ndim = input.dim()
    dims = (range(-k, 0) if ndim >= k else ()) if k == 2 else range(1 if ndim == k + 2 else 0, ndim)
    for i in dims:
        if ndim and input.shape[i] == 0:
            raise RuntimeError(f"{op}(): Expected input to have non-zero size for non-batch dimensions, but input has "
                               f"sizes {list(input.shape)} with dimension {i % ndim} being empty")
    if ndim not in (k + 1, k + 2):
        raise RuntimeError(f"{op}(): Expected {k + 1}D or {k + 2}D tensor, but got {list(input.shape)}")
    if not input.dtype.is_floating_point:
        from ..backends.meta.reductions import type_name

        # torch's AT_DISPATCH names: 1-d pools through the 2-d kernel; the 3-d CPU kernel says "_cpu"
        kernel = f"adaptive_avg_pool{max(k, 2)}d"
        if input.device.type == "cuda":
            kernel += "_cuda"
        elif k == 3:
            kernel += "_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{type_name(input.dtype)}'")


def _bin_means(x: Tensor, d: int, m: int) -> Tensor:
    """Dim ``d`` of ``x`` averaged into ``m`` adaptive bins (Note [Separable adaptive pooling])."""
    n = x._sizes[d]
    if m == n:
        return x
    w = np.zeros((n, m))
    for i in range(m):
        lo, hi = (i * n) // m, -((-(i + 1) * n) // m)
        w[lo:hi, i] = 1.0 / (hi - lo)
    from ..factories import tensor

    weights = tensor(w, dtype=x.dtype, device=x.device)
    return ops.movedim(ops.matmul(ops.movedim(x, d, -1), weights), -1, d)


def _pool(input: Tensor, sizes: list, k: int) -> Tensor:
    """The separable form (Note [Separable adaptive pooling]) over the last ``k`` dims."""
    out = input
    for j, m in enumerate(sizes):
        out = _bin_means(out, input.dim() - k + j, m)
    return out


@keeps_channels_last(rank=4)
def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Means over the (H, W) bins of torch's adaptive pooling (Note [Separable adaptive pooling])."""
    oh, ow = _sizes(input, output_size, 2, "adaptive_avg_pool2d")
    _check(input, 2, "adaptive_avg_pool2d")
    h, w = input.shape[-2], input.shape[-1]
    if not oh or not ow:  # an empty output
        return _pool(input, [oh, ow], 2)
    if h % oh == 0 and w % ow == 0:  # equal bins: one average pool
        from .pooling import avg_pool2d

        return avg_pool2d(input, (h // oh, w // ow))
    rows = []
    for i in range(oh):
        h0, h1 = (i * h) // oh, -((-(i + 1) * h) // oh)
        cols = []
        for j in range(ow):
            w0, w1 = (j * w) // ow, -((-(j + 1) * w) // ow)
            cell = ops.narrow(ops.narrow(input, -2, h0, h1 - h0), -1, w0, w1 - w0)
            cols.append(ops.mean(cell, [-2, -1]))
        rows.append(ops.stack(cols, -1))
    return ops.stack(rows, -2)


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """``adaptive_avg_pool2d`` over a height of one, after torch's 1-d checks."""
    from ..backends.meta.pool_checks import check1d, check_dim_range

    if not isinstance(input, Tensor):
        raise TypeError(f"adaptive_avg_pool1d(): argument 'input' must be Tensor, not {type(input).__name__}")
    check_dim_range("adaptive_avg_pool1d", input, 2, 4)
    size = check1d("adaptive_avg_pool1d", "output_size", output_size)
    return ops.squeeze(adaptive_avg_pool2d(ops.unsqueeze(input, -2), (1, size)), [-2])


def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """Means over the (D, H, W) bins of torch's adaptive pooling."""
    sizes = _sizes(input, output_size, 3, "adaptive_avg_pool3d")
    _check(input, 3, "adaptive_avg_pool3d")
    return _pool(input, sizes, 3)


from ..amp.composed_functions import CPU_FP32 as _CPU_FP32  # noqa: E402
from ..amp.composed_functions import wrap_policies as _wrap_policies  # noqa: E402

# torch's native kernels, on its CPU float32 autocast list (Note [Autocast around composed functions])
_wrap_policies(globals(), {name: _CPU_FP32 for name in ("adaptive_avg_pool3d",)})
