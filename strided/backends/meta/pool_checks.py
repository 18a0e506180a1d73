"""torch's argument checks of the max and average pools, in its order and words (ATen's Pool.h:
``pooling_output_shape``, ``pool2d_shape_check``, ``pool3d_shape_check``; MaxPooling.h: ``check_max_pool1d``;
TensorUtils' ``checkDimRange`` and Pooling.cpp's ``check1d``).

Note [Pool argument checks]
A pool's bad argument meets the first of torch's checks it fails, so the order is part of the words: the list
lengths of kernel_size / stride / padding / dilation, the input's rank, then each spatial dim's output size (which
refuses a zero stride, a negative padding, and a padding past half the dilated kernel), then the shape check (the
kernel, stride and dilation positive, no empty non-batch dim, the padding at most half the plain kernel, at least
one window). torch checks its 1-d pools differently by entry point: ``max_pool1d`` has its own checks and words,
``max_pool1d_with_indices`` and ``avg_pool1d`` check ranks and list lengths and then run the 2-d pool on a height
of one, whose words then name ``kH: 1``. C++ integer division truncates toward zero, so halves are ``_half``.
"""

from __future__ import annotations

__all__ = ["int_arguments", "sizes", "output_size", "pool2d_shape_check", "pool3d_shape_check", "check1d",
           "check_dim_range", "check_max_pool1d"]


def _half(n: int) -> int:
    """``n / 2`` as C++ divides integers (toward zero)."""
    return n // 2 if n >= 0 else -((-n) // 2)


def int_arguments(op: str, **values) -> None:
    """torch's binding check of a pool's size arguments: each an int or a list / tuple of ints (None: omitted)."""
    for name, value in values.items():
        if value is None or (isinstance(value, int) and not isinstance(value, bool)):
            continue
        if not (isinstance(value, (list, tuple)) and all(isinstance(e, int) and not isinstance(e, bool)
                                                         for e in value)):
            from ...dispatch.argument_checks import type_name

            raise TypeError(f"{op}(): argument '{name}' must be tuple of ints, not {type_name(value)}")


def sizes(value, n: int, message: str, omit_ok: bool = False) -> tuple:
    """``value`` (an int, or a list of 1 or ``n`` ints; empty when ``omit_ok``: ``()``) as ``n`` ints, else torch's
    RuntimeError ``message``."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,) * n
    value = tuple(value)
    if omit_ok and not value:
        return ()
    if len(value) == 1:
        return value * n
    if len(value) != n:
        raise RuntimeError(message)
    return value


def output_size(size: int, k: int, pad: int, stride: int, dilation: int, ceil_mode: bool) -> int:
    """torch's ``pooling_output_shape``: the windows along one dim, after its three checks."""
    if stride == 0:
        raise RuntimeError("stride should not be zero")
    if pad < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {pad}")
    if pad > _half((k - 1) * dilation + 1):
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pad}, kernel_size={k} "
                           f"and dilation={dilation}")
    span = size + 2 * pad - dilation * (k - 1) - 1
    out = (span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:  # the last window must start inside the input or its padding
        out -= 1
    return out


def pool2d_shape_check(input, k, s, p, d, oh: int, ow: int) -> None:
    """torch's ``pool2d_shape_check`` of a (C, H, W) or (N, C, H, W) input (``k`` .. ``d``: (H, W) pairs)."""
    if k[0] <= 0 or k[1] <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {k[0]} kW: {k[1]}")
    if s[0] <= 0 or s[1] <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {s[0]} dW: {s[1]}")
    if d[0] <= 0 or d[1] <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {d[0]} dilationW: {d[1]}")
    shape = input.shape
    if not ((input.dim() == 3 and 0 not in shape) or (input.dim() == 4 and 0 not in shape[1:])):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:"
                           f"{list(shape)}")
    if p[0] > _half(k[0]) or p[1] > _half(k[1]):
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got padW = {p[1]}, "
                           f"padH = {p[0]}, kW = {k[1]}, kH = {k[0]}")
    c, h, w = shape[-3:]
    if oh < 1 or ow < 1:
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{oh}x{ow}). Output size "
                           "is too small")


def pool3d_shape_check(input, k, s, p, d, outs, fn: str, check_input_size: bool = False) -> None:
    """torch's ``pool3d_shape_check`` of a (C, T, H, W) or (N, C, T, H, W) input (``k`` .. ``d``: (T, H, W));
    ``fn``: the kernel its words name; ``check_input_size``: the average pool's kernel-fits-input check."""
    if min(k) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kT: {k[0]} kH: {k[1]} kW: {k[2]}")
    if min(s) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dT: {s[0]} dH: {s[1]} dW: {s[2]}")
    if min(d) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationT: {d[0]} dilationH: {d[1]} "
                           f"dilationW: {d[2]}")
    shape = list(input.shape)
    for i, n in enumerate(shape):
        if n <= 0 and not (len(shape) == 5 and i == 0):
            raise RuntimeError(f"{fn}: Expected input's non-batch dimensions to have positive length, but input has a "
                               f"shape of {shape} and non-batch dimension {n} has length zero!")
    c, *spatial = shape[-4:]
    if check_input_size and any(n < kk for n, kk in zip(spatial, k)):
        raise RuntimeError(f"input image (T: {spatial[0]} H: {spatial[1]} W: {spatial[2]}) smaller than kernel size "
                           f"(kT: {k[0]} kH: {k[1]} kW: {k[2]})")
    if any(pp > _half(kk) for pp, kk in zip(p, k)):
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got kT: {k[0]} kW: "
                           f"{k[2]} kH: {k[1]} padT: {p[0]} padW: {p[2]} padH: {p[1]}")
    if min(outs) < 1:
        raise RuntimeError(f"Given input size: ({c}x{'x'.join(map(str, spatial))}). Calculated output size: "
                           f"({c}x{'x'.join(map(str, outs))}). Output size is too small")


def _one_int(value, message: str) -> int:
    """``value`` (an int or a list of one) as the int; ``message`` + " {length}" when it holds another count."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    value = tuple(value)
    if len(value) != 1:
        raise RuntimeError(message.format(len(value)))
    return value[0]


def check1d(op: str, name: str, value) -> int:
    """torch's ``check1d``: a 1-d pool's ``name`` is one int (or a list of one)."""
    return _one_int(value, f"{op}() argument '{name}' should contain one int (got {{}})")


def check_dim_range(op: str, input, low: int, high: int) -> None:
    """torch's ``checkDimRange`` of argument #1 'self': ``low <= dim < high``."""
    if not low <= input.dim() < high:
        raise RuntimeError(f"Expected {low} to {high - 1} dimensions, but got {input.dim()}-dimensional tensor for "
                           f"argument #1 'self' (while checking arguments for {op})")


def _size_one(value, what: str) -> int:
    return _one_int(value, f"max_pool1d() {what} but got size {{}}")


def check_max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode: bool) -> tuple:
    """torch's ``max_pool1d`` (without indices): its input check, then ``check_max_pool1d``; returns (k, s, p, d)."""
    shape = input.shape
    if not ((input.dim() == 2 and 0 not in shape) or (input.dim() == 3 and 0 not in shape[1:])):
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                           f"input, but got:{list(shape)}")
    k = _size_one(kernel_size, "kernel_size must be an int, list of ints or tuple of ints of size 1")
    no_stride = stride is None or (not isinstance(stride, int) and len(tuple(stride)) == 0)
    s = k if no_stride else _size_one(stride, "stride must be None, an int, list of ints, or tuple of ints of size 1")
    p = _size_one(padding, "padding must be an int, list of ints, or tuple of ints of size 1")
    d = _size_one(dilation, "dilation must be an int, list of ints or tuple of ints of size 1")
    if k <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {k}")
    if s <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {s}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p > _half(k):
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got padding={p} and "
                           f"kernel_size={k}")
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    ow = output_size(shape[-1], k, p, s, d, ceil_mode)
    if ow <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {ow}")
    return k, s, p, d
