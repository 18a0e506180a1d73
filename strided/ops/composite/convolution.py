"""The ``convolution`` op (torch's ``at::convolution``): one op, and so one autograd node
(``ConvolutionBackward0``), for the convolutions of ``nn.functional``.

Its kernel is CompositeExplicitAutograd: below autograd it computes with the ops it is made of, none of
them recorded, and derivatives.yaml gives its gradient (Note [Convolution backward]). 1-d and 2-d
convolutions are the columns-times-weight GEMM of ``nn/convolution.py``, 1-d and 2-d transposed ones the
weight-times-input GEMM and ``col2im`` of ``nn/convolution_transpose.py`` (a 1-d one over a height of one),
3-d ones those of ``nn/convolution3d.py`` and ``nn/convolution_transpose3d.py``. On CUDA every GEMM of the
op, forward and backward, runs in the precision ``strided.backends.cudnn.allow_tf32`` selects (Note
[Convolution precision]), and 1-d and 2-d convolutions of one group, plain or transposed, have a CUDA kernel of
their own (Note [Direct CUDA convolution]). A batch whose columns exceed the budget runs in slices (Note
[Convolution batch chunks]).
"""

from __future__ import annotations

from contextlib import nullcontext

from ... import dtypes as dt
from ...backends import cudnn
from ...backends.cuda.matmul import float32_matmuls
from ...dispatch.library import kernel
from .. import bound as ops
from .convolution_chunks import over_batch, samples_per_chunk

__all__ = []


def precision_scope(x):
    """The float32 GEMM precision of a convolution on ``x``'s device (Note [Convolution precision])."""
    return float32_matmuls(cudnn.allow_tf32) if x.device.type == "cuda" else nullcontext()


_POSITIONS = {"stride": 4, "padding": 5, "dilation": 6, "output_padding": 8}


def _expand(values, k: int, name: str) -> tuple:
    """A ``SymInt[]`` argument as ``k`` values (one value stands for all, as torch's ``expand_param_if_needed``)."""
    values = tuple(values) if isinstance(values, (list, tuple)) else (values,)
    for i, v in enumerate(values):
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"convolution(): argument '{name}' (position {_POSITIONS[name]}) must be tuple of ints, "
                            f"but found element of type {type(v).__name__} at pos {i}")
    if len(values) == 1:
        return values * k
    if len(values) != k:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {k} values to match the "
                           f"convolution dimensions, but got {name}={list(values)}")
    return values


def check_arguments(input, weight, bias, stride, padding, dilation, transposed, output_padding):
    """torch's checks of the op's arguments that come before its kernel's; (stride, padding, dilation, output_padding)
    expanded to one value per spatial dim (output_padding None where no kernel reads it)."""
    from ...nn.convolution import check_conv_dtypes

    if weight.dim() < 3:
        raise RuntimeError("weight should have at least three dimensions")
    k = weight.dim() - 2
    if k not in (1, 2, 3):
        raise RuntimeError(f"Expected 3D, 4D or 5D weight for convolution, but got weight of size "
                           f"{list(weight.shape)}")
    if input.dim() != weight.dim():
        raise RuntimeError(f"Expected {k + 2}-dimensional input for {k + 2}-dimensional weight {list(weight.shape)}, "
                           f"but got {input.dim()}-dimensional input of size {list(input.shape)} instead")
    s, p, d = _expand(stride, k, "stride"), _expand(padding, k, "padding"), _expand(dilation, k, "dilation")
    check_conv_dtypes(input, weight, bias)
    if bias is not None and not transposed and (bias.dim() != 1 or bias.shape[0] != weight.shape[0]):
        raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected bias to be 1-dimensional with "
                           f"{weight.shape[0]} elements, but got bias of size {list(bias.shape)} instead")
    q = _expand(output_padding, k, "output_padding") if transposed or k == 3 else None
    return s, p, d, q


@kernel("CompositeExplicitAutograd")
def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """``at::convolution``: batched ``input`` (N, C_in, *spatial) with ``weight`` (C_out, C_in/groups, *kernel), or a
    transposed convolution with (C_in, C_out/groups, *kernel); 1, 2 or 3 spatial dims."""
    s, p, d, q = check_arguments(input, weight, bias, stride, padding, dilation, transposed, output_padding)
    with precision_scope(input):
        return convolve_composite(input, weight, bias, s, p, d, transposed, q, groups)


def convolve_composite(input, weight, bias, s, p, d, transposed, q, groups):
    """The convolution by its GEMM kernels, over slices of the batch where its columns exceed the budget (Note
    [Convolution batch chunks])."""
    n = input.shape[0]
    step = samples_per_chunk(input, weight, s, p, d, transposed, groups)
    if step < n:
        return over_batch(step, n, lambda lo, count: _convolve(ops.narrow(input, 0, lo, count), weight, bias, s, p, d,
                                                               transposed, q, groups))
    return _convolve(input, weight, bias, s, p, d, transposed, q, groups)


def _convolve(input, weight, bias, s, p, d, transposed, q, groups):
    """The convolution of a whole (slice of a) batch by its GEMM kernel."""
    from ...nn.convolution import conv2d_gemm

    if transposed or weight.dim() == 5:
        return _by_function(input, weight, bias, s, p, d, transposed, q, groups)
    if weight.dim() == 3:
        out = conv2d_gemm(ops.unsqueeze(input, 2), ops.unsqueeze(weight, 2), bias, (1, s[0]), (0, p[0]), (1, d[0]),
                          groups)
        return ops.squeeze(out, [2])
    return conv2d_gemm(input, weight, bias, s, p, d, groups)


def _by_function(input, weight, bias, s, p, d, transposed, q, groups):
    """A transposed or 3-d convolution by its GEMM kernel (1-d ones over a height of one)."""
    from ...nn.convolution3d import conv3d_gemm
    from ...nn.convolution_transpose import conv_transpose2d_gemm
    from ...nn.convolution_transpose3d import conv_transpose3d_gemm

    k = weight.dim() - 2
    if not transposed:
        return conv3d_gemm(input, weight, bias, s, p, d, groups)
    if input.dtype in (dt.float16, dt.bfloat16) and input.device.type == "cpu":
        # Note [Half transposed convolutions on the CPU]: col2im adds up to KH * KW (* KD) window contributions per
        # output element; rounded to bfloat16 each and added in bfloat16 they drifted ~1 ulp (0.32 at 35 in a 3-d
        # one) where torch's CPU kernel, accumulating in float32, rounds once. The CPU's half GEMMs run in float32
        # anyway, so the whole transposed convolution does, and rounds at the end.
        f32 = [None if t is None else ops._to_copy(t, dtype=dt.float32) for t in (input, weight, bias)]
        return ops._to_copy(_by_function(*f32, s, p, d, transposed, q, groups), dtype=input.dtype)
    if k == 3:
        return conv_transpose3d_gemm(input, weight, bias, s, p, d, q, groups)
    if k == 1:
        out = conv_transpose2d_gemm(ops.unsqueeze(input, 2), ops.unsqueeze(weight, 2), bias, (1, s[0]), (0, p[0]),
                                    (1, d[0]), (0, q[0]), groups)
        return ops.squeeze(out, [2])
    return conv_transpose2d_gemm(input, weight, bias, s, p, d, q, groups)
