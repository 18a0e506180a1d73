"""Meta functions of ``im2col`` / ``col2im`` (``F.unfold`` / ``F.fold``, the convolution's columns): torch's checks
(aten/src/ATen/native/im2col_shape_check.h) and the geometry the CUDA kernels and the composites share."""

from __future__ import annotations

from typing import NamedTuple

from .pointwise import not_implemented

__all__ = ["ColumnsGeometry", "im2col_geometry", "col2im_geometry"]


class ColumnsGeometry(NamedTuple):
    """One column layout: (N, C * KH * KW, LH * LW) columns of an (N, C, H, W) image."""

    n: int
    c: int
    h: int
    w: int
    k: tuple
    d: tuple
    p: tuple
    s: tuple
    lh: int
    lw: int
    batched: bool

    @property
    def args(self) -> tuple:
        """The kernels' 16 integers: N, C, H, W, LH, LW, KH, KW, DH, DW, PH, PW, SH, SW and the contiguous columns'
        sample and row strides, C * KH * KW * LH * LW and LH * LW."""
        return (self.n, self.c, self.h, self.w, self.lh, self.lw, *self.k, *self.d, *self.p, *self.s,
                self.c * self.k[0] * self.k[1] * self.lh * self.lw, self.lh * self.lw)


def _blocks(size: int, k: int, d: int, p: int, s: int) -> int:
    return (size + 2 * p - d * (k - 1) - 1) // s + 1  # floor division, as torch's div_rtn


def _pairs(op: str, **values) -> tuple:
    """The ``int[2]`` arguments as pairs: an int is both, a sequence must hold two ints (torch's words)."""
    out = []
    for position, (name, v) in enumerate(values.items(), start=2):  # the tensor is argument 1
        if isinstance(v, int) and not isinstance(v, bool):
            out.append((v, v))
            continue
        v = tuple(v) if isinstance(v, (tuple, list)) else (v,)  # torch names a lone non-int as element 0
        for i, e in enumerate(v):
            if not isinstance(e, int) or isinstance(e, bool):
                raise TypeError(f"{op}(): argument '{name}' (position {position}) must be tuple of ints, but found "
                                f"element of type {type(e).__name__} at pos {i}")
        if len(v) != 2:
            raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(v)}")
        out.append(v)
    return tuple(out)


def _check_dtype(t, op: str) -> None:
    d = t.dtype
    if not (d.is_floating_point or d.is_complex or d.name == "bool"):  # torch's im2col / col2im dtypes
        raise not_implemented(f"{op}_out_{t.device.type}", d)


def im2col_geometry(self, kernel_size, dilation, padding, stride) -> ColumnsGeometry:
    """torch's checks of ``im2col`` (``F.unfold``) of an (N, C, H, W) or (C, H, W) input, and its geometry."""
    k, d, p, s = _pairs("im2col", kernel_size=kernel_size, dilation=dilation, padding=padding, stride=stride)
    if self.dim() not in (3, 4) or any(n == 0 for n in self._sizes[-3:]):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {list(self._sizes)}")
    if min(k) <= 0 or min(d) <= 0 or min(s) <= 0 or min(p) < 0:
        raise RuntimeError(f"unfold: kernel_size {k}, dilation {d} and stride {s} must be positive and padding {p} "
                           "non-negative")
    c, h, w = self._sizes[-3:]
    lh, lw = _blocks(h, k[0], d[0], p[0], s[0]), _blocks(w, k[1], d[1], p[1], s[1])
    if lh < 1 or lw < 1:
        raise RuntimeError(f"Given input with spatial size ({h}, {w}), kernel_size={k}, dilation={d}, padding={p}, "
                           f"calculated shape of the array of sliding blocks as ({lh}, {lw}), but its components "
                           "must be at least one.")
    _check_dtype(self, "im2col")
    batched = self.dim() == 4
    return ColumnsGeometry(self._sizes[0] if batched else 1, c, h, w, k, d, p, s, lh, lw, batched)


def col2im_geometry(self, output_size, kernel_size, dilation, padding, stride) -> ColumnsGeometry:
    """torch's checks of ``col2im`` (``F.fold``) of (N, C * KH * KW, L) or (C * KH * KW, L) columns into an image
    of ``output_size``, and its geometry."""
    o, k, d, p, s = _pairs("col2im", output_size=output_size, kernel_size=kernel_size, dilation=dilation,
                           padding=padding, stride=stride)
    if min(k) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: {k[0]} kernel_width: "
                           f"{k[1]}")
    if min(s) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {s[0]} stride_width: {s[1]}")
    if min(d) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: {d[0]} dilation_width: "
                           f"{d[1]}")
    if min(p) < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {p[0]} pad_width: {p[1]}")
    shape = self._sizes
    if not (len(shape) == 2 and min(shape) > 0 or len(shape) == 3 and min(shape[1:]) > 0):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {list(shape)}")
    planes, length = shape[-2:]
    if planes % (k[0] * k[1]):
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={planes} and kernel_size=({k[0]}, {k[1]}).")
    lh, lw = _blocks(o[0], k[0], d[0], p[0], s[0]), _blocks(o[1], k[1], d[1], p[1], s[1])
    given = (f"Given output_size=({o[0]}, {o[1]}), kernel_size=({k[0]}, {k[1]}), dilation=({d[0]}, {d[1]}), "
             f"padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), ")
    if length != lh * lw:
        raise RuntimeError(f"{given}expected size of input's dimension 2 to match the calculated number of sliding "
                           f"blocks {lh} * {lw} = {lh * lw}, but got input.size(2)={length}.")
    if lh < 1 or lw < 1:
        raise RuntimeError(f"{given}calculated shape of the array of sliding blocks as ({lh}, {lw}), which is too "
                           "small (non-positive)")
    if min(o) < 1:
        raise RuntimeError(f"Expected output spatial size to be positive, but got: output_size=({o[0]}, {o[1]}).")
    _check_dtype(self, "col2im")
    batched = len(shape) == 3
    return ColumnsGeometry(shape[0] if batched else 1, planes // (k[0] * k[1]), o[0], o[1], k, d, p, s, lh, lw,
                           batched)
