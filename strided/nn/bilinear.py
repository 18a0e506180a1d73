"""``F.bilinear``: ``y[..., o] = sum_ij x1[..., i] W[o, i, j] x2[..., j] + b[o]``, composed of one matmul, a
broadcast multiply and a sum (torch lowers it to ``_trilinear``, the same contraction)."""

from __future__ import annotations

from ..ops import bound as ops
from ..tensor import Tensor
from .convolution import _check_tensors

__all__ = ["bilinear"]


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """(*, in1) and (*, in2) inputs, weight (out, in1, in2), bias (out,) -> (*, out)."""
    _check_tensors("bilinear", input1=input1, input2=input2, weight=weight, bias=bias)
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    for i in range(input1.dim() - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got {input1.shape[i]} "
                               f"and {input2.shape[i]}")
    if weight.dim() != 3:
        raise RuntimeError(f"bilinear(): expected a 3-D weight (out_features, in1_features, in2_features), but got "
                           f"weight of size {list(weight.shape)}")
    out, in1, in2 = weight.shape
    if input1.shape[-1] != in1:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but "
                           f"expected {in1}")
    if input2.shape[-1] != in2:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but "
                           f"expected {in2}")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != out):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[0] if bias.dim() else list(bias.shape)} but expected {out}")
    lead = tuple(input1.shape[:-1])
    x1 = ops.reshape(input1, (-1, in1))
    x2 = ops.reshape(input2, (-1, 1, in2))
    # (B, in1) @ (in1, out * in2): x1's contraction first, then x2's as a broadcast multiply and sum
    t = ops.reshape(ops.matmul(x1, ops.reshape(ops.permute(weight, (1, 0, 2)), (in1, out * in2))), (-1, out, in2))
    prod = t * x2
    y = ops.sum(prod, [-1], dtype=prod.dtype)  # integers stay in their dtype, as torch's bmm keeps them
    if bias is not None:
        y = y + bias
    return ops.reshape(y, (*lead, out))


from ..amp.composed_functions import wrap_policies as _wrap_policies  # noqa: E402

# torch's bilinear: on its CUDA promote list; on the CPU its native _trilinear is on no list
# (Note [Autocast around composed functions])
_wrap_policies(globals(), {"bilinear": {"cpu": "native", "cuda": "promote"}})
