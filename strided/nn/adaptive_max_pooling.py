"""Adaptive max pooling of ``strided.nn.functional``: adaptive_max_pool1d / 2d / 3d and their
``_with_indices`` forms, composed of index_select, argmax and gather (so every backend runs them).

Note [Separable adaptive max pooling]
Output index i of a dim of size n pooled to m covers the input bin ``[floor(i * n / m),
ceil((i + 1) * n / m))`` (torch's bins, as in Note [Separable adaptive pooling]). A maximum over a
box is a maximum over each of its dims in turn, and so is torch's choice of index: its kernel
(ATen's AdaptiveMaxPoolKernel.cpp and AdaptiveMaxPooling2d.cu) scans a bin in row-major order and
takes a value when ``val > max || isnan(val)``, i.e. the first maximum, or the last NaN if the bin
holds one; pooling the last dim first, then the one before it, ... picks that same element. Per
dim, ``index_select`` gathers every bin's positions into an (m, L) grid, L the longest bin, padding
a short bin by repeating its last member: a repeat comes after the member, so it cannot be the
first maximum, and a repeated last NaN maps back to the member itself. The chosen positions
compose into the flat index into the input's spatial dims (torch's indices), and the values are
one ``gather`` of the input at those indices: differentiable through gather, whose backward
scatter-adds each output's gradient into its maximum, as torch's backward does. When a dim
divides evenly the grid is a reshape, no copy of positions needed.
"""

from __future__ import annotations

import math

from .. import dtypes as _dt
from ..autograd.grad_mode import no_grad
from ..ops import bound as ops
from ..tensor import Tensor
from .channels_last import keeps_channels_last
from .pooling import first_max_or_last_nan

__all__ = [
    "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices",
]


def _is_int(v) -> bool:
    return isinstance(v, int)  # torch takes a bool as an int here too


def _output_sizes(input: Tensor, output_size, k: int, op: str) -> list[int]:
    """``output_size`` as k ints, None entries replaced by the input's size (torch's _list_with_default)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if _is_int(output_size):
        return [int(output_size)] * k
    if not isinstance(output_size, (list, tuple)) or not all(e is None or _is_int(e) for e in output_size):
        raise TypeError(f"{op}(): argument 'output_size' must be int or tuple of ints, not {output_size!r}")
    if input.dim() <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    if len(output_size) != k:
        raise RuntimeError(f"{op}(): internal error: output_size.size() must be {k}")
    return [n if m is None else int(m) for n, m in zip(input.shape[-k:], output_size)]


def _check_input(input: Tensor, sizes: list[int], k: int, op: str, kernel: str) -> None:
    if input.dim() not in (k + 1, k + 2):
        raise RuntimeError(f"{op}(): Expected {k + 1}D or {k + 2}D tensor, but got: {list(input.shape)}")
    for i in range(1, input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError(f"{op}(): Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {list(input.shape)} with dimension {i} being empty")
    if not input.dtype.is_floating_point:  # torch's AT_DISPATCH names: the CPU's, or "<2d / 3d>_cuda"
        from ..backends.meta.reductions import type_name

        if input.device.type == "cuda":
            kernel = f"adaptive_max_pool{max(k, 2)}d_cuda"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{type_name(input.dtype)}'")
    if min(sizes) < 0:
        shape = [*input.shape[:-k], *sizes]
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(sizes)}: {shape}")


def _bins(n: int, m: int, device, trailing: int):
    """(positions, first, last, L): the (m * L,) input positions of the padded bin grid of a dim of size
    ``n`` pooled to ``m`` (None when it is a plain reshape), and each bin's first and last position shaped
    (m, 1, ..., 1) with ``trailing`` ones, ready to broadcast against a chosen offset."""
    from ..factories import tensor

    lo = [(i * n) // m for i in range(m)]
    hi = [-((-(i + 1) * n) // m) for i in range(m)]
    even = m > 0 and n % m == 0
    width = n // m if even else max([h - a for a, h in zip(lo, hi)], default=1)
    positions = None
    if not even:
        grid = [min(a + j, h - 1) for a, h in zip(lo, hi) for j in range(width)]
        positions = tensor(grid, dtype=_dt.int64, device=device)
    shape = (m,) + (1,) * trailing
    first = ops.reshape(tensor(lo, dtype=_dt.int64, device=device), shape)
    last = ops.reshape(tensor([h - 1 for h in hi], dtype=_dt.int64, device=device), shape)
    return positions, first, last, width


def _pool_dim(values: Tensor, flat: Tensor | None, d: int, m: int, stride: int):
    """Pool dim ``d`` of ``values`` into ``m`` bins; ``flat`` (same shape) holds each value's flat index
    within the dims after ``d`` (None: none pooled yet), ``stride`` their input volume. Returns the pooled
    values and their flat indices from dim ``d`` on."""
    n = values.shape[d]
    trailing = values.dim() - d - 1
    positions, first, last, width = _bins(n, m, values.device, trailing)
    split = (*values.shape[:d], m, width, *values.shape[d + 1:])

    def grid(t: Tensor) -> Tensor:
        return ops.reshape(t if positions is None else ops.index_select(t, d, positions), split)

    vg = grid(values)
    choice = first_max_or_last_nan(vg, d + 1)
    pooled = ops.squeeze(ops.gather(vg, d + 1, choice), [d + 1])
    offset = ops.squeeze(choice, [d + 1])
    position = ops.minimum(ops.add(first, offset), last)  # a padded repeat is its bin's last member
    index = ops.mul(position, stride)
    if flat is not None:
        index = ops.add(index, ops.squeeze(ops.gather(grid(flat), d + 1, choice), [d + 1]))
    return pooled, index


def _adaptive_max(input: Tensor, sizes: list[int], k: int):
    spatial = list(input.shape[-k:])
    lead = list(input.shape[:-k])
    with no_grad():
        values, flat, stride = input.detach(), None, 1
        for j in reversed(range(k)):
            d = input.dim() - k + j
            values, flat = _pool_dim(values, flat, d, sizes[j], stride)
            stride *= spatial[j]
    flat_in = ops.reshape(input, (*lead, math.prod(spatial)))
    out = ops.gather(flat_in, len(lead), ops.reshape(flat, (*lead, math.prod(sizes))))
    return ops.reshape(out, (*lead, *sizes)), flat


@keeps_channels_last(rank=4)
def adaptive_max_pool2d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    """(values, indices): maxima over torch's adaptive bins of the (H, W) plane and each one's flat index
    in that plane (Note [Separable adaptive max pooling])."""
    sizes = _output_sizes(input, output_size, 2, "adaptive_max_pool2d")
    _check_input(input, sizes, 2, "adaptive_max_pool2d", "adaptive_max_pool2d")
    return _adaptive_max(input, sizes, 2)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    """(values, indices) over torch's adaptive bins of the (D, H, W) volume."""
    sizes = _output_sizes(input, output_size, 3, "adaptive_max_pool3d")
    _check_input(input, sizes, 3, "adaptive_max_pool3d", "adaptive_max_pool3d_cpu")
    return _adaptive_max(input, sizes, 3)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    """(values, indices) over torch's adaptive bins of the length."""
    op = "adaptive_max_pool1d"
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if isinstance(output_size, (list, tuple)):
        if not all(_is_int(e) for e in output_size):
            raise TypeError(f"{op}(): argument 'output_size' must be tuple of ints, not {output_size!r}")
        if len(output_size) != 1:
            raise RuntimeError(f"{op}() argument 'output_size' should contain one int (got {len(output_size)})")
        output_size = output_size[0]
    if not _is_int(output_size):
        raise TypeError(f"{op}(): argument 'output_size' must be tuple of ints, not {type(output_size).__name__}")
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for argument #1 "
                           f"'self' (while checking arguments for {op})")
    _check_input(input, [int(output_size)], 1, op, "adaptive_max_pool2d")
    return _adaptive_max(input, [int(output_size)], 1)


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    """Maxima over torch's adaptive bins of the length; with ``return_indices`` also their indices."""
    out = adaptive_max_pool1d_with_indices(input, output_size)
    return out if return_indices else out[0]


@keeps_channels_last(rank=4)
def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    """Maxima over torch's adaptive bins of the (H, W) plane (None in ``output_size``: that input size);
    with ``return_indices`` also each one's flat index in the plane."""
    out = adaptive_max_pool2d_with_indices(input, output_size)
    return out if return_indices else out[0]


def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False):
    """Maxima over torch's adaptive bins of the (D, H, W) volume; with ``return_indices`` also their indices."""
    out = adaptive_max_pool3d_with_indices(input, output_size)
    return out if return_indices else out[0]


from ..amp.composed_functions import CPU_FP32 as _CPU_FP32  # noqa: E402
from ..amp.composed_functions import wrap_policies as _wrap_policies  # noqa: E402

# torch's native kernels, on its CPU float32 autocast list (Note [Autocast around composed functions])
_wrap_policies(globals(), {name: _CPU_FP32 for name in ("adaptive_max_pool3d", "adaptive_max_pool3d_with_indices")})
