"""``F.grid_sample`` and ``F.affine_grid`` (spatial transformers), composed of elementwise ops and ``gather``.

Note [Grid sampling as gathers]
Each output point has normalized source coordinates in [-1, 1] (x for width, then y, then z). They are
unnormalized to input pixels (torch's rule for ``align_corners``), then put through the padding mode:
"border" clips them to the input, "reflection" reflects them about its edges, then clips ("zeros" leaves
them). Bilinear (trilinear for 5-D input) sampling gathers the 2^k neighbouring input values with one
``gather`` each over the flattened spatial dims and weights them by the distances to the point; a neighbour
outside the input contributes 0 (its weight is masked). Nearest rounds half to even, as torch's nearbyint;
bicubic (4-D only) gathers a 4 x 4 neighbourhood with the cubic convolution weights (A = -0.75), padding each
tap's integer coordinates by the padding mode. Gradients follow torch's kernels: to the input through
``gather`` (a scatter-add), to the grid through the weights (which depend on the coordinates linearly or
cubically) times the unnormalize, clip (1 strictly inside, else 0) and reflect (+-1) factors, written with
``where`` so that the factor at a clip bound is torch's 0.

Note [Grid sampling in float32]
For float16 / bfloat16 the coordinates, weights and sums are float32 and the result is rounded once, as torch's
CUDA kernel computes (``opmath_t``). torch's CPU kernel computes in the half type itself: a bf16 coordinate near
20 is off by up to 0.06, nearest picks another pixel and bilinear results were off by 0.47 against the float64
result; strided takes the float32 computation on both devices.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np

from .. import dtypes as _dt
from ..backends.meta.reductions import type_name
from ..factories import tensor as _tensor
from ..ops import bound as ops
from ..tensor import Tensor

__all__ = ["grid_sample", "affine_grid"]

_MODES = ("bilinear", "nearest", "bicubic")
_PADDING = ("zeros", "border", "reflection")
_CUBIC_A = -0.75
_DEFAULT_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                    "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                    "grid_sample for details.")


def _clip(c: Tensor, size: int) -> Tensor:
    """``c`` clipped to [0, size - 1]; the gradient is 1 strictly inside and 0 at and beyond the bounds."""
    return ops.where(ops.le(c, 0), 0.0, ops.where(ops.ge(c, size - 1), float(size - 1), c))


def _reflect(c: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """torch's ``reflect_coordinates``: ``c`` reflected into [twice_low / 2, twice_high / 2]."""
    if twice_low == twice_high:
        return c * 0.0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    t = c - low
    t = ops.where(ops.lt(t, 0), -t, t)
    extra = ops.fmod(t, span)
    flips = ops.floor(t / span).detach()
    even = ops.eq(ops.fmod(flips, 2.0), 0)
    return ops.where(even, extra + low, (span - extra) + low)


def _pad_coordinate(c: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    if padding_mode == "border":
        return _clip(c, size)
    if padding_mode == "reflection":
        c = _reflect(c, 0, 2 * (size - 1)) if align_corners else _reflect(c, -1, 2 * size - 1)
        return _clip(c, size)
    return c


def _source_coordinates(grid: Tensor, sizes, padding_mode: str, align_corners: bool, pad: bool) -> list:
    """Per input spatial dim (D, H, W order), the unnormalized (and, if ``pad``, padded) coordinates."""
    k = len(sizes)
    coords = []
    for j, size in enumerate(sizes):
        g = ops.select(grid, -1, k - 1 - j)  # the grid's last dim lists x (width) first
        c = (g + 1) / 2 * (size - 1) if align_corners else ((g + 1) * size - 1) / 2
        coords.append(_pad_coordinate(c, size, padding_mode, align_corners) if pad else c)
    return coords


class _Sampler:
    """Gathers of ``input`` (N, C, *sizes) at integer coordinates, zero outside (Note [Grid sampling as
    gathers])."""

    def __init__(self, input: Tensor, out_points: int) -> None:
        self.n, self.c = input.shape[0], input.shape[1]
        self.sizes = tuple(input.shape[2:])
        self.flat = ops.reshape(input, (self.n, self.c, -1))
        self.points = out_points

    def at(self, indices: list, weight: Tensor | None, padding_mode: str = "zeros",
           align_corners: bool = False) -> Tensor:
        """Input values at integer coordinates ``indices`` (float tensors, one per dim) times ``weight``."""
        inside = None
        flat = None
        stride = 1
        for i, size in reversed(list(zip(indices, self.sizes))):
            if padding_mode != "zeros":  # bicubic taps: pad the integer coordinate itself
                i = _pad_coordinate(i, size, padding_mode, align_corners).detach()
            ok = ops.logical_and(ops.ge(i, 0), ops.le(i, size - 1))
            inside = ok if inside is None else ops.logical_and(inside, ok)
            term = ops.clamp(i, 0, size - 1).to(_dt.int64) * stride
            flat = term if flat is None else flat + term
            stride *= size
        index = ops.expand(ops.reshape(flat, (self.n, 1, self.points)), (self.n, self.c, self.points))
        values = ops.gather(self.flat, 2, index)
        mask = inside.to(values.dtype) if weight is None else ops.where(inside, weight, 0.0)
        return values * ops.reshape(mask, (self.n, 1, self.points))


def _cubic_weights(t: Tensor) -> list:
    a = _CUBIC_A

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _check(input: Tensor, grid: Tensor, mode: str) -> None:
    for name, value in (("input", input), ("grid", grid)):
        if not isinstance(value, Tensor):
            raise TypeError(f"grid_sample(): argument '{name}' must be Tensor, not {type(value).__name__}")
    if input.device != grid.device:
        raise RuntimeError(f"grid_sampler(): expected input and grid to be on same device, but input is on "
                           f"{input.device} and grid is on {grid.device}")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"expected scalar type {type_name(input.dtype)} but found {type_name(grid.dtype)}")
    nd = input.dim()
    if nd == 5 and mode == "bicubic":
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if nd not in (4, 5) or grid.dim() != nd:
        want = nd if nd in (4, 5) else 4
        raise RuntimeError(f"grid_sampler(): expected {want}D input and grid with same number of dimensions, but got "
                           f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if grid.shape[-1] != nd - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {nd - 2} in last dimension, but got grid "
                           f"with sizes {list(grid.shape)}")
    for i in range(2, nd):
        if input.shape[i] == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                               f"sizes {list(input.shape)} with dimension {i} being empty")
    if not input.dtype.is_floating_point:
        cuda = input.device.type == "cuda"
        kernel = f"grid_sampler_{nd - 2}d_cuda" if cuda else f"grid_sampler_{nd - 2}d_cpu_kernel_impl"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{type_name(input.dtype)}'")


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:
    """Sample (N, C, H, W) ``input`` at the normalized (x, y) points of an (N, H_out, W_out, 2) ``grid``
    (5-D input: (x, y, z) points of an (N, D_out, H_out, W_out, 3) grid) -> (N, C, *grid.shape[1:-1])."""
    if mode not in _MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but "
                         f"got: '{mode}'")
    if padding_mode not in _PADDING:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_DEFAULT_WARNING, stacklevel=2)
        align_corners = False
    _check(input, grid, mode)
    out_shape = tuple(grid.shape[1:-1])
    points = int(np.prod(out_shape))
    grid = ops.reshape(grid, (grid.shape[0], points, grid.shape[-1]))
    if input.dtype in (_dt.float16, _dt.bfloat16):  # Note [Grid sampling in float32]
        grid = grid.to(_dt.float32)
    sampler = _Sampler(input, points)
    coords = _source_coordinates(grid, sampler.sizes, padding_mode, align_corners, pad=mode != "bicubic")
    if mode == "nearest":
        # the weight is 1 with a zero gradient: the grid's gradient is zeros, as torch's (not None)
        out = sampler.at([ops.round(c).detach() for c in coords], coords[0] * 0.0 + 1.0)
    elif mode == "bilinear":
        base = [ops.floor(c).detach() for c in coords]
        out = None
        for corner in itertools.product((0, 1), repeat=len(coords)):
            weight = None
            for c, b, bit in zip(coords, base, corner):
                w = (c - b) if bit else (b + 1.0 - c)
                weight = w if weight is None else weight * w
            term = sampler.at([b + bit if bit else b for b, bit in zip(base, corner)], weight)
            out = term if out is None else out + term
    else:
        (cy, cx), (by, bx) = coords, [ops.floor(c).detach() for c in coords]
        wy, wx = _cubic_weights(cy - by), _cubic_weights(cx - bx)
        out = None
        for i, j in itertools.product(range(4), range(4)):
            term = sampler.at([by + (i - 1), bx + (j - 1)], wy[i] * wx[j], padding_mode, align_corners)
            out = term if out is None else out + term
    return ops.reshape(out.to(input.dtype), (input.shape[0], input.shape[1], *out_shape))


def _linspace_from_neg_one(steps: int, align_corners: bool) -> np.ndarray:
    if steps <= 1:
        return np.zeros(1)
    r = np.linspace(-1.0, 1.0, steps)
    return r if align_corners else r * (steps - 1) / steps


def affine_grid(theta: Tensor, size, align_corners: bool | None = None) -> Tensor:
    """The (N, H, W, 2) (or (N, D, H, W, 3)) sampling grid of a batch of affine maps ``theta`` (N, 2, 3)
    (or (N, 3, 4)) for an output of ``size`` (N, C, H, W) (or (N, C, D, H, W)): base grid @ theta^T."""
    if align_corners is None:
        warnings.warn(_DEFAULT_WARNING, stacklevel=2)
        align_corners = False
    if not isinstance(theta, Tensor):
        raise TypeError(f"affine_grid(): argument 'theta' must be Tensor, not {type(theta).__name__}")
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = [int(s) for s in size]
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. Got "
                             f"{theta.shape}.")
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. Got "
                             f"{theta.shape}.")
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation "
                      "of affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    axes = [_linspace_from_neg_one(s, align_corners) for s in reversed(spatial)]  # x, y[, z]
    mesh = np.meshgrid(*axes[::-1], indexing="ij")[::-1]  # each (D,) H, W; listed x first
    base = np.stack([*mesh, np.ones_like(mesh[0])], -1).reshape(-1, len(spatial) + 1)
    base_t = _tensor(base, dtype=theta.dtype, device=theta.device)
    grid = ops.matmul(base_t, ops.transpose(theta, 1, 2))  # (N, points, k)
    return ops.reshape(grid, (size[0], *spatial, len(spatial)))


from ..amp.composed_functions import wrap_policies as _wrap_policies  # noqa: E402

# torch's grid_sampler: on its CPU float32 and CUDA promote lists (Note [Autocast around composed functions])
_wrap_policies(globals(), {"grid_sample": {"cpu": "fp32", "cuda": "promote"}})
