"""Max and average pooling of ``strided.nn.functional`` over (H, W) and L: max_pool1d / max_pool2d (the
``max_pool2d_with_indices`` op: CPU and CUDA kernels, a composite elsewhere), avg_pool1d / avg_pool2d, composed of
existing operators over the window view of ``convolution.py`` (Note [Convolution as a GEMM]); adaptive average
pooling is re-exported from ``adaptive_pooling``.

Note [The element a max pool chooses]
A window's maximum is one element of the input, and torch's kernels (ATen's MaxPoolKernel.cpp, DilatedMaxPool2d.cu)
pick it by scanning the window in row-major order and taking a value when ``val > max || isnan(val)``: the first
maximum, or the last NaN if the window holds one. That element is the returned index, and the only one the
window's gradient reaches (``max_pool2d_with_indices_backward`` scatters by the index), so a tie sends the whole
gradient to one element. ``amax`` computes the same values, but its backward shares the gradient among ties (torch's
``amax`` does too); so whenever the index matters -- ``return_indices``, or a gradient to come -- the value is one
``gather`` of the chosen element, whose backward is torch's scatter. (The pools of other ranks and the adaptive and
fractional ones take ``amax`` for inference; 2-d max pooling always runs ``max_pool2d_with_indices``, whose CPU and
CUDA kernels choose as torch's do.)
"""

from __future__ import annotations

import math

from .. import dtypes as _dt
from ..autograd.grad_mode import is_grad_enabled
from ..backends.meta.pointwise import not_implemented, scalar_type_name
from ..backends.meta.pool_checks import check1d, check_dim_range, check_max_pool1d, int_arguments
from ..backends.meta.pooling import check_max_pool_dtype
from ..ops import bound as ops
from ..tensor import Tensor
from .channels_last import keeps_channels_last
from .convolution import _check_tensors

__all__ = [
    "max_pool1d",
    "max_pool2d",
    "avg_pool1d",
    "avg_pool2d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
]


def needs_grad(t: Tensor) -> bool:
    """Whether a result computed from ``t`` now will be differentiated."""
    return t.requires_grad and is_grad_enabled()


def first_max_or_last_nan(values: Tensor, axis: int) -> Tensor:
    """Along dim ``axis``, the position of the last NaN if any, else of the first maximum (Note [The element a max
    pool chooses]); keeps ``axis`` as size one."""
    if not values.dtype.is_floating_point:
        return ops.argmax(values, axis, keepdim=True)
    nan = ops.isnan(values)
    first = ops.argmax(ops.masked_fill(values, nan, -math.inf), axis, keepdim=True)
    shape = [1] * values.dim()
    shape[axis] = values.shape[axis]
    j = ops.reshape(ops.arange(0, values.shape[axis], device=values.device), tuple(shape))
    last_nan = ops.amax(ops.where(nan, j, -1), [axis], True)
    return ops.where(ops.ge(last_nan, 0), last_nan, first)


def window_max(flat: Tensor, want_index: bool) -> tuple[Tensor, Tensor | None]:
    """(maxima, chosen positions) along the last dim of ``flat`` (one window per row); the positions (and a value
    whose gradient reaches only them) when ``want_index``, else None (Note [The element a max pool chooses])."""
    if not want_index:
        return ops.amax(flat, [-1]), None
    choice = first_max_or_last_nan(flat.detach(), -1)  # an index: no graph
    return ops.squeeze(ops.gather(flat, -1, choice), [-1]), ops.squeeze(choice, [-1])


def _no_stride(stride):
    """``stride`` as the ops take it: None (the kernel size) is an empty list."""
    return [] if stride is None else stride


@keeps_channels_last(rank=4)
def max_pool2d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    """Window maxima (NaN propagates); with ``return_indices`` also each maximum's flat index in its
    (H, W) input plane."""
    _check_tensors("max_pool2d", input=input)
    int_arguments("max_pool2d_with_indices" if return_indices else "max_pool2d", kernel_size=kernel_size,
                  stride=stride, padding=padding, dilation=dilation)
    cl = input.dim() == 4 and not input.is_contiguous() and input.is_contiguous(memory_format="channels_last")
    if cl or input.dtype.is_complex:  # the CPU kernels' names (a complex input never reaches the Meta function)
        check_max_pool_dtype(input, "max_pool2d_channels_last" if cl else "max_pool2d",
                             "max_pool2d_with_indices_out_cuda_frame")
    # Note [Pool argument checks]: the op's Meta function; Note [The element a max pool chooses]
    out, idx = ops.max_pool2d_with_indices(input, kernel_size, _no_stride(stride), padding, dilation, ceil_mode)
    return (out, idx) if return_indices else out


def _lowest(d):
    from ..type_info import iinfo

    return iinfo(d).min


def check_avg_pool_dtype(input: Tensor, cpu: str, cuda: str, cpu_half: bool = True) -> None:
    """torch's average pools take the floating dtypes, and int64 on the CPU (the mean truncated toward zero);
    any other dtype raises its AT_DISPATCH error (``cpu`` / ``cuda``: the kernel names it prints). ``cpu_half``:
    whether the CPU kernel takes float16 / bfloat16 (torch's 3-d one does not)."""
    d = input.dtype
    cuda_input = input.device.type == "cuda"
    if not cpu_half and not cuda_input and d in (_dt.float16, _dt.bfloat16):
        raise NotImplementedError(f'"{cpu}" not implemented for \'{scalar_type_name(d)}\'')
    if not (d.is_floating_point or (d is _dt.int64 and not cuda_input)):
        raise NotImplementedError(f'"{cuda if input.device.type == "cuda" else cpu}" not implemented for '
                                  f"'{scalar_type_name(d)}'")


def _mean(total: Tensor, divisor) -> Tensor:
    """The window sums over their counts: true division, or truncating for int64 (torch's CPU kernel)."""
    if total.dtype is _dt.int64:
        return ops.div(total, divisor, rounding_mode="trunc")
    return ops.div(total, divisor)


@keeps_channels_last(rank=4)
def avg_pool2d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """Window means over a zero-padded input; the divisor follows torch's rules for padding and ceil-mode
    overhang (``count_include_pad`` counts padding, never the overhang past it)."""
    _check_tensors("avg_pool2d", input=input)
    int_arguments("avg_pool2d", kernel_size=kernel_size, stride=stride, padding=padding)
    # before the dispatcher: a complex input gets torch's "avg_pool2d" words, not the complex refusal's
    if input.dtype.is_complex:
        check_avg_pool_dtype(input, "avg_pool2d", "avg_pool2d_out_cuda_frame")
    # Note [Pool argument checks]: the op's Meta function
    return ops.avg_pool2d(input, kernel_size, _no_stride(stride), padding, ceil_mode, count_include_pad,
                          divisor_override)


def window_counts(size: int, k: int, s: int, p: int, out: int, count_include_pad: bool) -> list[int]:
    """Along one dim, the count torch's average pooling divides each window by (ATen's AvgPool: the
    window clipped to the padded input, then to the input itself unless ``count_include_pad``)."""
    counts = []
    for i in range(out):
        start = i * s - p
        end = min(start + k, size + p)
        pool = end - start
        start, end = max(start, 0), min(end, size)
        counts.append(pool if count_include_pad else end - start)
    return counts


def max_pool1d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    """``max_pool2d`` over a height of one, after the checks of torch's entry point (Note [Pool argument checks]):
    ``max_pool1d``'s own without indices, ``max_pool1d_with_indices``'s with them."""
    _check_tensors("max_pool1d", input=input)
    int_arguments("max_pool1d_with_indices" if return_indices else "max_pool1d", kernel_size=kernel_size,
                  stride=stride, padding=padding, dilation=dilation)
    if return_indices:
        check_dim_range("max_pool1d", input, 2, 4)
        k = check1d("max_pool1d", "kernel_size", kernel_size)
        s = k if stride is None or (not isinstance(stride, int) and len(tuple(stride)) == 0) else check1d(
            "max_pool1d", "stride", stride)
        p, d = check1d("max_pool1d", "padding", padding), check1d("max_pool1d", "dilation", dilation)
    else:
        k, s, p, d = check_max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)
        if not (input.dtype.is_floating_point or input.device.type == "cuda"):  # torch's CPU max_pool1d_impl
            raise not_implemented("max_pool1d_impl", input.dtype)
    r = max_pool2d(ops.unsqueeze(input, -2), (1, k), (1, s), (0, p), (1, d), ceil_mode, return_indices)
    if return_indices:
        return ops.squeeze(r[0], [-2]), ops.squeeze(r[1], [-2])
    return ops.squeeze(r, [-2])


def avg_pool1d(
    input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True
) -> Tensor:
    """``avg_pool2d`` over a height of one, after torch's ``avg_pool1d`` checks (Note [Pool argument checks])."""
    _check_tensors("avg_pool1d", input=input)
    int_arguments("avg_pool1d", kernel_size=kernel_size, stride=stride, padding=padding)
    check_dim_range("avg_pool1d", input, 2, 4)
    k = check1d("avg_pool1d", "kernel_size", kernel_size)
    s = k if stride is None or (not isinstance(stride, int) and len(tuple(stride)) == 0) else check1d(
        "avg_pool1d", "stride", stride)
    p = check1d("avg_pool1d", "padding", padding)
    out = avg_pool2d(ops.unsqueeze(input, -2), (1, k), (1, s), (0, p), ceil_mode, count_include_pad)
    return ops.squeeze(out, [-2])


from .adaptive_pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d  # noqa: E402
