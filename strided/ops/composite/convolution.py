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

# Note [Convolution argument checks]
# A bad convolution meets the first of torch's checks it fails, so their order is part of the words: the weight's
# rank, the groups, each of stride / padding / dilation one value or one per spatial dim, then check_shape_forward's:
# the signs of padding, stride and dilation, the input's rank against the weight's, the output channels against
# the groups, the input channels (not for a transposed convolution, whose checks are its own), the bias, and the
# dilated kernel against the padded input; the dtypes last. The nn.functional forms (nn/convolution_forms.py) only
# add torch's batchify check and the padding strings before calling the op.


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


def check_arguments(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups=1):
    """torch's checks of the op's arguments (``_convolution`` and its ``check_shape_forward``, in their order: Note
    [Convolution argument checks]); (stride, padding, dilation, output_padding) expanded to one value per spatial dim
    (output_padding None where no kernel reads it)."""
    from ...nn.convolution import check_conv_dtypes

    if weight.dim() < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    k = weight.dim() - 2
    s, p, d = _expand(stride, k, "stride"), _expand(padding, k, "padding"), _expand(dilation, k, "dilation")
    q = _expand(output_padding, k, "output_padding") if transposed or k == 3 else None
    if k not in (1, 2, 3):
        raise RuntimeError(f"Expected 3D, 4D or 5D weight for convolution, but got weight of size "
                           f"{list(weight.shape)}")
    if min(p) < 0:
        raise RuntimeError("negative padding is not supported")
    if transposed and min(q) < 0:
        raise RuntimeError("negative output_padding is not supported")
    if min(s) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(d) < 0:
        raise RuntimeError("dilation should be greater than zero")
    if min(d) == 0 and not transposed:  # torch's backends differ here; a transposed one's own check names the dims
        raise RuntimeError("non-positive dilation is not supported")
    w = list(weight.shape)
    if input.dim() != weight.dim():
        raise RuntimeError(f"Expected {k + 2}-dimensional input for {k + 2}-dimensional weight {w}, but got "
                           f"{input.dim()}-dimensional input of size {list(input.shape)} instead")
    if w[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got "
                           f"weight of size {w} instead")
    if w[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{w}] instead")
    if not transposed:
        if input.shape[1] != w[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {w}, expected input{list(input.shape)} to have "
                               f"{w[1] * groups} channels, but got {input.shape[1]} channels instead")
        if bias is not None and (bias.dim() != 1 or bias.shape[0] != w[0]):
            raise RuntimeError(f"Given weight of size {w}, expected bias to be 1-dimensional with {w[0]} elements, but "
                               f"got bias of size {list(bias.shape)} instead")
        padded = [n + 2 * pp for n, pp in zip(input.shape[2:], p)]
        spans = [dd * (kk - 1) + 1 for dd, kk in zip(d, w[2:])]
        if any(a < b for a, b in zip(padded, spans)):
            raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                               f"size: ({' x '.join(map(str, spans))}). Kernel size can't be greater than actual "
                               "input size")
    check_conv_dtypes(input, weight, bias)
    return s, p, d, q


@kernel("CompositeExplicitAutograd")
def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """``at::convolution``: batched ``input`` (N, C_in, *spatial) with ``weight`` (C_out, C_in/groups, *kernel), or a
    transposed convolution with (C_in, C_out/groups, *kernel); 1, 2 or 3 spatial dims."""
    s, p, d, q = check_arguments(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
    with precision_scope(input):
        return convolve_composite(input, weight, bias, s, p, d, transposed, q, groups)


def convolve_composite(input, weight, bias, s, p, d, transposed, q, groups):
    """The convolution by its GEMM kernels, over slices of the batch where its columns exceed the budget (Note
    [Convolution batch chunks])."""
    if input.device.type == "cpu" and not transposed and input.dtype.category < dt.FLOATING:
        _refuse_cpu_dtype(input.dtype, d, len(s))
    n = input.shape[0]
    step = samples_per_chunk(input, weight, s, p, d, transposed, groups)
    if step < n:
        return over_batch(step, n, lambda lo, count: _convolve(ops.narrow(input, 0, lo, count), weight, bias, s, p, d,
                                                               transposed, q, groups))
    return _convolve(input, weight, bias, s, p, d, transposed, q, groups)


def _refuse_cpu_dtype(dtype, d, k: int) -> None:
    """torch's CPU convolution kernels: the plain ones take every integer dtype but bool, the dilated ones int64 only
    (transposed ones: ``nn/convolution_transpose.refuse_integer_input``); the refusing kernel's name, as torch's."""
    from ...backends.meta.pointwise import scalar_type_name

    if max(d) > 1 and dtype is not dt.int64:
        kernel = "slow_conv_dilated<>"
    elif dtype is dt.bool:
        kernel = "compute_columns3d" if k == 3 else "slow_conv2d_cpu"
    else:
        return
    raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_type_name(dtype)}'")


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
    if input.dtype in (dt.float16, dt.bfloat16):
        # Note [Half transposed convolutions]: col2im adds up to KH * KW (* KD) window contributions per output
        # element; rounded to bfloat16 each and added in bfloat16 they drifted ~1 ulp (0.32 at 35 in a 3-d one on
        # the CPU; 1.4 at 3.6 on CUDA, where the sums cancel) where torch's kernels (CPU, cuDNN), accumulating in
        # float32, round once. The CPU's half GEMMs run in float32 anyway, so the whole transposed convolution
        # does, and rounds at the end; on CUDA these are the composite's cases (grouped, 3-d, channels-last: the
        # direct kernel keeps half GEMMs with float32 columns, Note [Half columns]).
        f32 = [None if t is None else ops._to_copy(t, dtype=dt.float32) for t in (input, weight, bias)]
        return ops._to_copy(_by_function(*f32, s, p, d, transposed, q, groups), dtype=input.dtype)
    if k == 3:
        return conv_transpose3d_gemm(input, weight, bias, s, p, d, q, groups)
    if k == 1:
        out = conv_transpose2d_gemm(ops.unsqueeze(input, 2), ops.unsqueeze(weight, 2), bias, (1, s[0]), (0, p[0]),
                                    (1, d[0]), (0, q[0]), groups, (list(input.shape), list(weight.shape)))
        return ops.squeeze(out, [2])
    return conv_transpose2d_gemm(input, weight, bias, s, p, d, q, groups)
