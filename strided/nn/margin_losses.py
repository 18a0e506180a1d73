"""Margin and embedding losses of ``strided.nn.functional``, composed of existing operators.

Each follows torch.nn.functional's signature and defaults (legacy ``size_average``/``reduce``
included), its checks and messages, and is differentiable through the operators it calls.

Note [Composed margin losses]
* torch's hinges pass no gradient at the kink (the native multi-margin kernels test ``z > 0``;
  ``clamp_min`` has the minimum-norm subgradient, 0 at the bound, since pytorch#184572 - torch 2.14,
  the oracle; it was 1 before), so every hinge here is ``relu(z)`` or ``where(z > 0, z, 0)``, never
  strided's ``clamp_min(z, 0)``, whose gradient at ``z = 0`` is still 1.
* ``multi_margin_loss`` gathers ``x[y]`` per sample and masks the target's own column out;
  ``multilabel_margin_loss`` builds the (N, targets, classes) table of ``1 - x[y_j] + x[d]``: the
  targets that count are those before the first negative one (``cumprod`` of ``target >= 0``), the
  classes that count are those no counted target names. No host read, no loop over the data.
* Class indices out of range are reported as ``nll_loss`` does: on the CPU torch's error (the check
  is a host read, free there); elsewhere no device sync, the sample's loss is ``nan``.
* ``cosine_embedding_loss`` adds torch's ``EPSILON``, the float literal 1e-12, also for double inputs.
"""

from __future__ import annotations

from ..autograd.grad_mode import is_grad_enabled
from ..backends.meta.common import broadcast_shapes
from ..backends.meta.reductions import type_name
from ..dispatch.argument_checks import check_args
from ..ops import bound as ops
from ..tensor import Tensor
from ._reduction import apply_reduction, get_enum, legacy_get_string
from .activations import logsigmoid
from .losses import pairwise_distance

__all__ = [
    "hinge_embedding_loss",
    "cosine_embedding_loss",
    "soft_margin_loss",
    "multilabel_soft_margin_loss",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
]

# torch's EPSILON of cosine_embedding_loss (Loss.cpp) is the float literal 1e-12f, also for double inputs.
_COSINE_EPSILON = 9.999999960041972e-13


def _code(size_average, reduce, reduction: str) -> int:
    return get_enum(legacy_get_string(size_average, reduce, reduction))


def hinge_embedding_loss(
    input: Tensor, target: Tensor, margin: float = 1.0, size_average=None, reduce=None, reduction: str = "mean"
) -> Tensor:
    """``x`` where ``target`` is 1, ``max(0, margin - x)`` where it is -1 (both terms elsewhere).

    Integer inputs are computed in their own dtype, as torch (Note [Integer hinge])."""
    code = _code(size_average, reduce, reduction)
    d = input.dtype
    if d.is_floating_point:
        hinge = ops.where(ops.ne(target, 1), ops.relu(margin - input), 0.0)
        return apply_reduction(hinge + ops.where(ops.ne(target, -1), input, 0.0), code)
    if d.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")
    if d.name == "bool":
        raise NotImplementedError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
                                  "or `logical_xor()` operator instead.")
    # Note [Integer hinge]: torch's ``margin - self`` is ATen's Scalar - Tensor operator,
    # ``empty_like(self).fill_(margin).sub_(self)``: the margin truncated into the input's dtype (out of
    # range raises), the difference in that dtype (uint8 wraps), then ``clamp_min_(0)``; "sum" promotes
    # to int64 and "mean" refuses integers, all as torch.
    zeros = ops.zeros_like(input)
    hinge = ops.where(ops.ne(target, 1), ops.clamp_min(ops.full_like(input, margin) - input, 0), zeros)
    return apply_reduction(hinge + ops.where(ops.ne(target, -1), input, zeros), code)


def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """``1 - cos(x1, x2)`` where ``target`` is 1, ``max(0, cos(x1, x2) - margin)`` where it is -1;
    the inputs are (N, D) with a (N,) target, or (D,) with a 0-d one."""
    check_args("cosine_embedding_loss", ("input1", 1, input1, "Tensor"),
               ("input2", 2, input2, "Tensor"),
               ("target", 3, target, "Tensor"))
    code = _code(size_average, reduce, reduction)
    dim = target.dim()
    if dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.dim() != dim + 1 or input2.dim() != dim + 1:
        raise RuntimeError(
            f"{dim}D target tensor expects {dim + 1}D input tensors, but found inputs with sizes "
            f"{list(input1.shape)} and {list(input2.shape)}."
        )
    prod_sum = (input1 * input2).sum(dim)
    mag_square1 = (input1 * input1).sum(dim) + _COSINE_EPSILON
    mag_square2 = (input2 * input2).sum(dim) + _COSINE_EPSILON
    cos = prod_sum / ops.sqrt(mag_square1 * mag_square2)
    pos = ops.where(ops.eq(target, 1), 1 - cos, 0.0)
    return apply_reduction(pos + ops.where(ops.eq(target, -1), ops.relu(cos - margin), 0.0), code)


def soft_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """``log(1 + exp(-target * x))`` (torch's form: it overflows to ``inf`` where torch's does)."""
    check_args("soft_margin_loss", ("input", 1, input, "Tensor"), ("target", 2, target, "Tensor"))
    code = _code(size_average, reduce, reduction)
    if input.dtype.name == "bool":  # torch negates the input first
        raise NotImplementedError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
                                  "to invert a mask, use the `~` or `logical_not()` operator instead.")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):  # torch's exp_ into an integer output
        raise RuntimeError(f"result type Float can't be cast to the desired output type {type_name(input.dtype)}")
    if input.dtype.is_complex and is_grad_enabled() and (input.requires_grad or target.requires_grad):
        raise RuntimeError("soft_margin_loss does not support automatic differentiation for outputs with complex "
                           "dtype.")
    shape = broadcast_shapes(tuple(input.shape), tuple(target.shape))
    if shape != tuple(input.shape):
        raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the broadcast shape {list(shape)}")
    # torch computes into an output of the input's dtype
    target = target if target.dtype is input.dtype else target.to(input.dtype)
    return apply_reduction(ops.log(ops.exp(-input * target) + 1), code)


def multilabel_soft_margin_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """Binary cross entropy of the logits ``input`` against 0/1 ``target``, averaged over the classes
    (the last dim); ``weight`` rescales each class."""
    if size_average is not None or reduce is not None:
        reduction = legacy_get_string(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(class_dim) / input.size(class_dim)
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(reduction + " is not valid")


def _frames(input: Tensor) -> tuple:
    """(samples, classes) of a multi-margin input: (N, C), (C,) or a 0-d one, as torch checks them."""
    n = input.dim()
    if not ((n == 2 and input.size(1) != 0) or (n == 1 and input.size(0) != 0) or n == 0):
        raise RuntimeError(
            f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: {list(input.shape)}"
        )
    if n <= 1:
        return 1, 1 if n == 0 else input.size(0)
    return input.size(0), input.size(1)


def _check_dtypes(input: Tensor, target: Tensor, kernel: str) -> None:
    """torch's dtype dispatch of the multi-class margin losses: floating input (float and double only on the CPU,
    whose kernels have no half-precision instantiation), int64 targets."""
    d = input.dtype
    if not d.is_floating_point or (d.itemsize == 2 and input.device.type == "cpu"):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{type_name(d)}'")
    if target.dtype.name != "int64":
        raise RuntimeError(f"expected scalar type Long but found {type_name(target.dtype)}")


def _report_bad(bad: Tensor, message: str) -> Tensor | None:
    """Note [Composed margin losses]: raise on the CPU (a host read, free there); elsewhere return the
    mask for ``nan``."""
    if bad.device.type != "cpu":
        return bad
    if bad.numel() and bad.any().item():
        raise RuntimeError(message)
    return None


def _reduce_frames(loss: Tensor, bad: Tensor | None, code: int, scalar: bool) -> Tensor:
    if bad is not None:
        loss = ops.where(bad, float("nan"), loss)
    if code == 0 and scalar:
        return loss.reshape(())
    return apply_reduction(loss, code)


def multi_margin_loss(
    input: Tensor,
    target: Tensor,
    p: int = 1,
    margin: float = 1.0,
    weight: Tensor | None = None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """Multi-class hinge: per sample ``sum_{d != y} w[y] max(0, margin - x[y] + x[d])**p / C``
    (``p`` is 1 or 2), for class indices ``target`` (int64)."""
    check_args("multi_margin_loss", ("input", 1, input, "Tensor"),
               ("target", 2, target, "Tensor"),
               ("weight", 5, weight, "Tensor?"))
    code = _code(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    nframe, dim = _frames(input)
    if not (target.dim() <= 1 and target.numel() == nframe):
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of input samples "
            f"(batch size). Expected target size [{nframe}], but got {list(target.shape)}. Input has shape "
            f"{list(input.shape)}."
        )
    if weight is not None and weight.numel() != dim:
        raise RuntimeError(f"inconsistent weight size, expected {dim} but got {list(weight.shape)}")
    _check_dtypes(input, target, "multi_margin_loss_cpu_kernel")
    if weight is not None and weight.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {type_name(input.dtype)} but found {type_name(weight.dtype)}")
    t = target.reshape(nframe, 1)
    out_of_range = ops.logical_or(ops.lt(t, 0), ops.ge(t, dim))
    bad = _report_bad(out_of_range, "target out of range")
    safe = ops.where(out_of_range, 0, t)
    x = input.reshape(nframe, dim)
    z = (margin - x.gather(1, safe)) + x
    others = ops.ne(ops.arange(0, dim, device=input.device), safe)
    h = ops.where(ops.logical_and(others, ops.gt(z, 0)), z, 0.0)
    if p == 2:
        h = h * h
    if weight is not None:
        h = h * weight.index_select(0, safe.reshape(-1)).reshape(nframe, 1)
    loss = h.sum(1) / dim
    return _reduce_frames(loss, None if bad is None else bad.reshape(-1), code, target.dim() == 0)


def multilabel_margin_loss(
    input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean"
) -> Tensor:
    """Multi-label hinge: per sample ``sum_{j, d} max(0, 1 - x[y_j] + x[d]) / C`` over the targets ``y_j``
    before the first -1 of ``target`` (int64, the input's shape) and the classes ``d`` none of them names."""
    check_args("multilabel_margin_loss", ("input", 1, input, "Tensor"), ("target", 2, target, "Tensor"))
    code = _code(size_average, reduce, reduction)
    nframe, dim = _frames(input)
    if input.dim() <= 1:
        fits = target.dim() <= 1 and target.numel() == dim
    else:
        fits = target.dim() == 2 and tuple(target.shape) == (nframe, dim)
    if not fits:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}")
    _check_dtypes(input, target, "multilabel_margin_loss_forward_out_frame")
    t = target.reshape(nframe, dim)
    out_of_range = ops.logical_or(ops.lt(t, -1), ops.ge(t, dim))
    bad = _report_bad(out_of_range, "argument #2 'target' is out of range")
    counted = ops.ne(ops.cumprod(ops.ge(t, 0), 1), 0)
    safe = ops.where(ops.logical_and(counted, ops.logical_not(out_of_range)), t, 0)
    classes = ops.arange(0, dim, device=input.device)
    named = ops.logical_and(ops.eq(safe.unsqueeze(2), classes), counted.unsqueeze(2)).any(1)
    x = input.reshape(nframe, dim)
    z = (1 - x.gather(1, safe)).unsqueeze(2) + x.unsqueeze(1)
    pairs = ops.logical_and(counted.unsqueeze(2), ops.logical_not(named).unsqueeze(1))
    h = ops.where(ops.logical_and(pairs, ops.gt(z, 0)), z, 0.0)
    loss = h.sum((1, 2)) / dim
    return _reduce_frames(loss, None if bad is None else bad.any(1), code, target.dim() <= 1)


def _check_triplet_dims(anchor: Tensor, positive: Tensor, negative: Tensor) -> None:
    a, p, n = anchor.dim(), positive.dim(), negative.dim()
    if not (a == p and p == n):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of dimensions, "
            f"but got: anchor {a}D, positive {p}D, and negative {n}D inputs"
        )


def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, margin + d(a, p) - d(a, n))`` with ``d`` the ``p``-norm pairwise distance; ``swap`` uses
    ``min(d(a, n), d(p, n))``."""
    check_args("triplet_margin_loss", ("anchor", 1, anchor, "Tensor"),
               ("positive", 2, positive, "Tensor"),
               ("negative", 3, negative, "Tensor"))
    code = _code(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = ops.minimum(dist_neg, pairwise_distance(positive, negative, p, eps))
    return apply_reduction(ops.relu(margin + dist_pos - dist_neg), code)


def triplet_margin_with_distance_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    *,
    distance_function=None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """``triplet_margin_loss`` with any ``distance_function(x1, x2)`` (default ``pairwise_distance``)."""
    check_args("triplet_margin_with_distance_loss", ("anchor", 1, anchor, "Tensor"),
               ("positive", 2, positive, "Tensor"),
               ("negative", 3, negative, "Tensor"))
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    distance = pairwise_distance if distance_function is None else distance_function
    dist_pos = distance(anchor, positive)
    dist_neg = distance(anchor, negative)
    if swap:
        dist_neg = ops.minimum(dist_neg, distance(positive, negative))
    return apply_reduction(ops.relu(margin + dist_pos - dist_neg), get_enum(reduction))


from ..amp.composed_functions import wrap_native as _wrap_native  # noqa: E402

# torch's losses here are ops on its CPU and CUDA float32 autocast lists (Note [Autocast
# around composed functions])
_AUTOCAST_FP32 = ("hinge_embedding_loss", "cosine_embedding_loss", "soft_margin_loss", "multi_margin_loss",
                  "multilabel_margin_loss", "triplet_margin_loss")
_wrap_native(globals(), _AUTOCAST_FP32, fp32=_AUTOCAST_FP32)
