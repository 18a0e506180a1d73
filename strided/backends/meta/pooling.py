"""Meta functions of 2-d max and average pooling (``max_pool2d_with_indices``, ``avg_pool2d`` and their backwards):
the argument checks and output geometry torch's kernels make (aten/src/ATen/native/Pool.h: ``pooling_output_shape``,
``pool2d_shape_check``), shared by the CUDA kernels and the composites."""

from __future__ import annotations

from typing import NamedTuple

from ... import dtypes as _dt
from .pointwise import not_implemented
from .pool_checks import output_size, pool2d_shape_check

__all__ = ["MaxPool2dGeometry", "max_pool2d_geometry", "AvgPool2dGeometry", "avg_pool2d_geometry", "pooled_size",
           "check_max_pool_dtype"]


def pooled_size(size: int, k: int, s: int, p_total: int, d: int, ceil_mode: bool = False, p_front: int = 0) -> int:
    """Windows along one dim (torch's ``pooling_output_shape``; convolutions use it without ``ceil_mode``)."""
    span = size + p_total - d * (k - 1) - 1
    if ceil_mode:
        out = -(-span // s) + 1
        if (out - 1) * s >= size + p_front:  # the last window must start inside the input or its left padding
            out -= 1
        return out
    return span // s + 1


def check_max_pool_dtype(input, cpu: str, cuda: str) -> None:
    """torch's max pools: every real dtype but bool on the CPU, the floating dtypes on CUDA (torch 2.11); any other
    raises its AT_DISPATCH error (``cpu`` / ``cuda``: the kernel names it prints)."""
    d = input.dtype
    if input.device.type == "cuda":
        if not d.is_floating_point:
            raise not_implemented(cuda, d)
    elif d is _dt.bool or d.is_complex:
        raise not_implemented(cpu, d)


class MaxPool2dGeometry(NamedTuple):
    """Window geometry of one max pool: normalized arguments, output size, and the kernels' 13 integers."""

    k: tuple
    s: tuple
    p: tuple
    d: tuple
    oh: int
    ow: int
    args: tuple  # planes, H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw


def _two(v, name: str, allow_empty: bool = False, op: str = "max_pool2d") -> tuple:
    if isinstance(v, int) and not isinstance(v, bool):
        return v, v
    v = tuple(v)
    if allow_empty and not v:
        return ()
    if len(v) == 1:
        return v[0], v[0]
    if len(v) != 2:
        form = "either be omitted, a single int" if allow_empty else "either be a single int"
        if name == "dilation":
            form = "be either a single int"  # torch's words differ for this one
        raise RuntimeError(f"{op}: {name} must {form}, or a tuple of two ints")
    return v[0], v[1]


def max_pool2d_geometry(self, kernel_size, stride, padding, dilation, ceil_mode, grad_output=None,
                        indices=None) -> MaxPool2dGeometry:
    """torch's checks of a (C, H, W) or (N, C, H, W) max pool (TORCH_META_FUNC(max_pool2d_with_indices), in its
    order: Note [Pool argument checks]) and its geometry; with ``grad_output`` and ``indices`` (the backward) also
    their shapes and dtypes."""
    k = _two(kernel_size, "kernel_size")
    s = _two(stride, "stride", allow_empty=True) or k
    p, d = _two(padding, "padding"), _two(dilation, "dilation")
    if self.dim() not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    c, h, w = self._sizes[-3:]
    oh = output_size(h, k[0], p[0], s[0], d[0], ceil_mode)
    ow = output_size(w, k[1], p[1], s[1], d[1], ceil_mode)
    pool2d_shape_check(self, k, s, p, d, oh, ow)
    check_max_pool_dtype(self, "max_pool2d", "max_pool2d_with_indices_out_cuda_frame")
    out_shape = (*self._sizes[:-2], oh, ow)
    for name, t in (("grad_output", grad_output), ("indices", indices)):
        if t is not None and t._sizes != out_shape:
            raise RuntimeError(f"max_pool2d_with_indices_backward: expected {name} of size {list(out_shape)}, got "
                               f"{list(t._sizes)}")
    if grad_output is not None and grad_output.dtype is not self.dtype:
        raise RuntimeError(f"expected scalar type {self.dtype.name} for grad_output, got {grad_output.dtype.name}")
    if indices is not None and indices.dtype is not _dt.int64:
        raise RuntimeError("max_pool2d_with_indices_backward: expected indices of dtype int64, got "
                           f"{indices.dtype.name}")
    planes = c * (self._sizes[0] if self.dim() == 4 else 1)
    return MaxPool2dGeometry(k, s, p, d, oh, ow, (planes, h, w, oh, ow, *k, *s, *p, *d))


class AvgPool2dGeometry(NamedTuple):
    """Window geometry of one average pool: normalized arguments, output size, and the kernels' 13 integers."""

    k: tuple
    s: tuple
    p: tuple
    oh: int
    ow: int
    args: tuple  # planes, H, W, OH, OW, kh, kw, sh, sw, ph, pw, count_include_pad, divisor_override (0: none)


def avg_pool2d_geometry(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
                        grad_output=None) -> AvgPool2dGeometry:
    """torch's checks of a (C, H, W) or (N, C, H, W) average pool (TORCH_META_FUNC(avg_pool2d), in its order) and
    its geometry; with ``grad_output`` (the backward) also its shape and dtype."""
    from .common import wrap_dim

    k = _two(kernel_size, "kernel_size", op="avg_pool2d")
    s = _two(stride, "stride", allow_empty=True, op="avg_pool2d") or k
    p = _two(padding, "padding", op="avg_pool2d")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if self.dim() == 0:
        raise IndexError("Dimension specified as -3 but tensor has no dimensions")
    wrap_dim(-3, self.dim())  # torch reads size(-3) first: its IndexError for fewer dims
    h, w = self._sizes[-2:]
    oh, ow = (_avg_pooled_size(n, kk, ss, pp, ceil_mode) for n, kk, ss, pp in zip((h, w), k, s, p))
    if min(k) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {k[0]} kW: {k[1]}")
    if min(s) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {s[0]} dW: {s[1]}")
    if self.dim() not in (3, 4) or any(n == 0 for n in self._sizes[-3:]):  # a batch of none is fine
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:"
                           f"{list(self._sizes)}")
    if p[0] > k[0] // 2 or p[1] > k[1] // 2:
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got padW = {p[1]}, "
                           f"padH = {p[0]}, kW = {k[1]}, kH = {k[0]}")
    c = self._sizes[-3]
    if oh < 1 or ow < 1:
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{oh}x{ow}). Output size "
                           "is too small")
    if not (self.dtype.is_floating_point or (self.dtype is _dt.int64 and self.device.type != "cuda")):
        raise not_implemented("avg_pool2d_out_cuda_frame" if self.device.type == "cuda" else "avg_pool2d",
                              self.dtype)
    if grad_output is not None:
        n = self.dim()
        for dim, size in ((n - 3, c), (n - 2, oh), (n - 1, ow)):
            if grad_output.dim() != n or grad_output._sizes[dim] != size:
                got = grad_output._sizes[dim] if -grad_output.dim() <= dim < grad_output.dim() else "?"
                raise RuntimeError(f"Expected a tensor of dimension {n} and tensor.size[{dim}] == {size} but got: "
                                   f"dimension {grad_output.dim()} and tensor.size[{dim}] = {got}")
        if grad_output.dtype is not self.dtype:
            raise RuntimeError(f"expected dtype {_c_name(self.dtype)} for `gradOutput` but got dtype "
                               f"{_c_name(grad_output.dtype)}")
    planes = c * (self._sizes[0] if self.dim() == 4 else 1)
    divisor = 0 if divisor_override is None else int(divisor_override)
    return AvgPool2dGeometry(k, s, p, oh, ow, (planes, h, w, oh, ow, *k, *s, *p, int(bool(count_include_pad)),
                                               divisor))


def _avg_pooled_size(size: int, k: int, s: int, p: int, ceil_mode: bool) -> int:
    """torch's ``pooling_output_shape`` with its own checks of stride and padding (the first an average pool makes)."""
    return output_size(size, k, p, s, 1, ceil_mode)


def _c_name(d) -> str:
    """torch's C++ name of a dtype in its TORCH_CHECK words (float, double, c10::Half, c10::BFloat16)."""
    return {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "int64": "long int"}.get(d.name, d.name)
