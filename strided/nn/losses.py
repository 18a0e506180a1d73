"""Losses and distances of ``strided.nn.functional``: torch's operators where torch has one, else compositions.

Each follows torch.nn.functional's signature and defaults (legacy ``size_average``/``reduce``
included), its checks and messages (Note [Composed losses]).

Note [Composed losses]
nll_loss, binary_cross_entropy and binary_cross_entropy_with_logits call their operators
(``nll_loss_forward`` / ``nll_loss2d_forward``, Note [NLL loss operator]; Note [Functional operators]), with
torch's checks and, for nll_loss over 3 or more than 4 dims, torch's (N, C, 1, -1) view first. The others are
composed here and differentiate through the ops they call.
"""

from __future__ import annotations

import warnings

from .. import dtypes as _dt
from ..autograd.grad_mode import no_grad
from ..backends.meta.common import broadcast_shapes
from ..backends.meta.normalization import _nll_loss_nd
from ..backends.meta.reductions import type_name
from ..dispatch.argument_checks import check_args
from ..ops import bound as ops
from ..ops.complex_support import refuse_complex
from ..tensor import Tensor
from ._reduction import apply_reduction, get_enum, legacy_get_string

__all__ = [
    "nll_loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "kl_div",
    "cosine_similarity",
    "pairwise_distance",
    "pdist",
    "margin_ranking_loss",
]


def _warn_target_size(input: Tensor, target: Tensor) -> None:
    if target.shape != input.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
            "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
            "same size.",
            stacklevel=3,
        )


def _weighted_reduction(loss: Tensor, weight: Tensor, reduction: str, mean) -> Tensor:
    """The reductions of torch's Python-level ``weight=`` of l1_loss / huber_loss."""
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return mean(loss)
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    ignore_index: int = -100,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """Negative log likelihood of class indices ``target`` under log-probabilities ``input``.

    ``input`` is (N, C), (N, C, d1, ...) or (C,); ``weight`` (C,) rescales each class; targets equal to
    ``ignore_index`` contribute nothing; "mean" divides by the summed weights of the other targets.
    """
    code = get_enum(legacy_get_string(size_average, reduce, reduction))
    if input.dim() <= 2:  # the ops run torch's nll_loss_nd checks themselves
        return ops.nll_loss_forward(input, target, weight, code, ignore_index)[0]
    if input.dim() == 4:
        return ops.nll_loss2d_forward(input, target, weight, code, ignore_index)[0]
    _nll_loss_nd(input, target, weight)  # before the reshape, in the caller's shapes
    # 3 or more than 4 dims: torch's nll_loss_nd views them as (N, C, 1, -1) (an empty batch as (N, C, 0, 0))
    n, c = input.shape[0], input.shape[1]
    x = input.contiguous().view(n, c, 1, -1) if input.numel() else input.contiguous().view(n, c, 0, 0)
    t = target.contiguous().view(n, 1, -1) if target.numel() else target.contiguous().view(n, 0, 0)
    out = ops.nll_loss2d_forward(x, t, weight, code, ignore_index)[0]
    return out.view([n, *input.shape[2:]]) if code == 0 else out


def _broadcast_to_target(target: Tensor, weight: Tensor) -> tuple:
    """torch.broadcast_shapes(target.size(), weight.size()) with its message."""
    shapes = (target.shape, weight.shape)
    common = [1] * max(len(s) for s in shapes)
    for arg, shape in enumerate(shapes):
        for i in range(-1, -1 - len(shape), -1):
            if shape[i] == common[i] or shape[i] == 1:
                continue
            if common[i] == 1:
                common[i] = shape[i]
                continue
            raise RuntimeError(
                f"Attempting to broadcast a dimension of length {shape[i]} at {i}! Mismatching argument "
                f"at index {arg} had {shape}; but expected shape should be broadcastable to {common}"
            )
    return tuple(common)


def binary_cross_entropy(
    input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None, reduce=None, reduction: str = "mean"
) -> Tensor:
    """Binary cross entropy between probabilities ``input`` and ``target`` (same shape); ``weight``
    broadcasts to the target and rescales each element."""
    check_args("binary_cross_entropy", ("input", 1, input, "Tensor"),
               ("target", 2, target, "Tensor"),
               ("weight", 3, weight, "Tensor?"))
    code = get_enum(legacy_get_string(size_average, reduce, reduction))
    if target.shape != input.shape:
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}) "
            "is deprecated. Please ensure they have the same size."
        )
    if weight is not None:
        weight = weight.expand(_broadcast_to_target(target, weight))
    return ops.binary_cross_entropy(input, target, weight, code)  # Note [Functional operators]


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """``binary_cross_entropy(sigmoid(input), target)`` computed stably from the logits;
    ``pos_weight`` (broadcast over the classes, the last dim) rescales the positive term."""
    check_args("binary_cross_entropy_with_logits", ("input", 1, input, "Tensor"), ("target", 2, target, "Tensor"))
    code = get_enum(legacy_get_string(size_average, reduce, reduction))
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    return ops.binary_cross_entropy_with_logits(input, target, weight, pos_weight, code)


def l1_loss(
    input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean", weight: Tensor | None = None
) -> Tensor:
    """Mean (or sum, or elementwise) absolute error; with ``weight`` the mean is ``sum(w |d|) / sum(w)``."""
    check_args("l1_loss", ("input", 1, input, "Tensor"),
               ("target", 2, target, "Tensor"),
               ("weight", 6, weight, "Tensor?"))
    _warn_target_size(input, target)
    reduction = legacy_get_string(size_average, reduce, reduction)
    if input.shape != target.shape:  # torch broadcasts first, so a 0-dim operand promotes as a full one
        input, target = broadcast_operands(input, target)
    if weight is None:
        return apply_reduction((input - target).abs(), get_enum(reduction))
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    loss = (input - target).abs() * weight
    return _weighted_reduction(loss, weight, reduction, lambda x: x.sum() / weight.sum())


def _autocast_on(t: Tensor) -> bool:
    from ..amp.autocast_mode import is_autocast_enabled
    from ..dispatch.dispatcher import autocast_state

    return autocast_state.active and t.device.type in ("cpu", "cuda") and is_autocast_enabled(t.device.type)


def _in_dtype(kind, *operands) -> tuple:
    """The operands in the kernel's dtype where they differ from it (a bool input of a float loss computes in
    float, as torch's kernels, which read their operands in the common dtype)."""
    return tuple(t if t.dtype is kind else t.to(kind) for t in operands)


def broadcast_operands(input: Tensor, target: Tensor) -> tuple:
    """The two operands at their broadcast shape, as torch's F losses pass them to their ops."""
    if input.shape == target.shape:
        return input, target
    return tuple(ops.broadcast_tensors([input, target]))


def smooth_l1_loss(
    input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0
) -> Tensor:
    """``0.5 d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (``beta=0``: l1_loss)."""
    check_args("smooth_l1_loss", ("input", 1, input, "Tensor"), ("target", 2, target, "Tensor"))
    _warn_target_size(input, target)
    code = get_enum(legacy_get_string(size_average, reduce, reduction))
    if beta == 0.0:
        return apply_reduction((input - target).abs(), code)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    refuse_complex(input, "smooth_l1_cpu", "smooth_l1_cuda")
    # the kernel's dtype, of the operands broadcast first (a 0-dim one promotes as a full one; bool input with a
    # float target: float), as torch's
    kind = _dt.promote_types(input.dtype, target.dtype)
    if not kind.is_floating_point:
        raise NotImplementedError(f"\"smooth_l1_{input.device.type}\" not implemented for '{type_name(kind)}'")
    input, target = broadcast_operands(*_in_dtype(kind, input, target))
    return ops.smooth_l1_loss(input, target, code, beta)  # Note [Functional operators]


def huber_loss(
    input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0, weight: Tensor | None = None
) -> Tensor:
    """``0.5 d**2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)``; ``weight`` (input's shape)
    rescales each element."""
    check_args("huber_loss", ("input", 1, input, "Tensor"),
               ("target", 2, target, "Tensor"),
               ("weight", 5, weight, "Tensor?"))
    _warn_target_size(input, target)
    if weight is None:
        code = get_enum(reduction)
    elif weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    refuse_complex(input, "huber_cpu", "huber_cuda")
    kind = _dt.promote_types(input.dtype, target.dtype)
    if kind is not input.dtype and not _dt.can_cast(kind, input.dtype):  # torch's kernel writes input's dtype
        raise RuntimeError(f"result type {type_name(kind)} can't be cast to the desired output type "
                           f"{type_name(input.dtype)}")
    if not kind.is_floating_point:
        raise NotImplementedError(f"\"huber_{input.device.type}\" not implemented for '{type_name(kind)}'")
    out = None if _autocast_on(input) else input.dtype  # under autocast the op's float32 input decides
    input, target = broadcast_operands(*_in_dtype(kind, input, target))
    if weight is None:
        loss = ops.huber_loss(input, target, code, delta)  # Note [Functional operators]
        return loss if out is None or loss.dtype is out else loss.to(out)
    loss = ops.huber_loss(input, target, 0, delta)
    loss = loss if out is None or loss.dtype is out else loss.to(out)
    return _weighted_reduction(loss * weight, weight, reduction, lambda x: x.mean())


def kl_div(
    input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean", log_target: bool = False
) -> Tensor:
    """Kullback-Leibler divergence ``target * (log target - input)`` of log-probabilities ``input``
    (``log_target``: ``target`` holds log-probabilities too); "batchmean" divides the sum by the batch size."""
    check_args("kl_div", ("input", 1, input, "Tensor"), ("target", 2, target, "Tensor"))
    if size_average is not None or reduce is not None:
        code = get_enum(legacy_get_string(size_average, reduce, reduction))
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the support size."
                "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                stacklevel=2,
            )
        code = 2 if reduction == "batchmean" else get_enum(reduction)
    if input.dtype.is_complex or target.dtype.is_complex:
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if not (input.dtype.is_floating_point and target.dtype.is_floating_point):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        out = ops.exp(target) * (target - input)
    else:
        out = ops.xlogy(target, target) - target * input
    reduced = apply_reduction(out, code)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.size(0)
    return reduced


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``<x1, x2> / (max(|x1|, eps) max(|x2|, eps))`` along ``dim`` (torch's normalize-first form)."""
    check_args("cosine_similarity", ("x1", 1, x1, "Tensor"), ("x2", 2, x2, "Tensor"))
    common = _dt.result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {type_name(common)}")
    x1 = x1 if x1.dtype.is_floating_point else x1.to(common)
    x2 = x2 if x2.dtype.is_floating_point else x2.to(common)
    shape = broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    x1, x2 = x1.expand(shape), x2.expand(shape)
    # torch clamps clones of the norms in place with grad off: the gradient flows as if unclamped.
    n1 = ops.norm(x1, 2, [dim], True).clone()  # the ATen norm, as torch's C++ cosine_similarity
    n2 = ops.norm(x2, 2, [dim], True).clone()
    with no_grad():
        n1.clamp_(min=eps)
        n2.clamp_(min=eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """``p``-norm of ``x1 - x2 + eps`` over the last dim."""
    return ops.norm(x1 - x2 + eps, p, [max(x1.dim(), x2.dim()) - 1], keepdim)


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """``p``-norm distances between the rows of an (N, M) input, for every pair i < j in row-major order
    (the upper triangle of ``cdist(input, input)``): N (N - 1) / 2 values.

    For ``p = inf`` the gradient goes in full to every coordinate that ties for the maximum, as torch's
    pdist backward does (``norm``'s splits it between them): the value is the detached maximum plus
    ``|d| - |d|.detach()`` over the tied coordinates, which is zero but carries that gradient.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"pdist(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if input.dtype.itemsize == 2:  # torch's pdist kernels: float32 and float64 only
        raise NotImplementedError(f"\"pdist{'_cuda' if input.device.type == 'cuda' else ''}\" not implemented for "
                                  f"'{type_name(input.dtype)}'")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    rows = ops.triu_indices(n, n, 1, device=input.device)
    diff = ops.index_select(input, 0, rows[0]) - ops.index_select(input, 0, rows[1])
    if p != float("inf"):
        return ops.norm(diff, p, [1])
    size = ops.abs(diff)
    with no_grad():
        dist = ops.amax(size, [1]) if input.shape[1] else ops.zeros(diff.shape[0], dtype=input.dtype,
                                                                        device=input.device)
        ties = ops.eq(size, ops.unsqueeze(dist, 1))
    return dist + ops.sum(ops.where(ties, size - size.detach(), 0.0), [1])


def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``, with ``target`` in {1, -1}."""
    check_args("margin_ranking_loss", ("input1", 1, input1, "Tensor"),
               ("input2", 2, input2, "Tensor"),
               ("target", 3, target, "Tensor"))
    code = get_enum(legacy_get_string(size_average, reduce, reduction))
    if isinstance(margin, (str, bytes)) or not hasattr(margin, "__float__"):  # numbers, bools, 1-element tensors
        raise TypeError(f"margin_ranking_loss(): argument 'margin' (position 4) must be float, not "
                        f"{type(margin).__name__}")
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} "
        )
    # torch adds margin as a double: integer inputs give the default float dtype (the mean then exists)
    diff = input1 - input2  # first, as torch's C++ evaluates it (bool inputs fail at the subtraction there)
    return apply_reduction(ops.clamp_min(-target * diff + float(margin), 0), code)


from ..amp.composed_functions import wrap_native as _wrap_native  # noqa: E402
from ..amp.composed_functions import wrap_policies as _wrap_policies  # noqa: E402

# torch's losses here are ops on its CPU and CUDA float32 autocast lists (Note [Autocast
# around composed functions])
_AUTOCAST_FP32 = ("l1_loss", "kl_div", "margin_ranking_loss")
_wrap_native(globals(), _AUTOCAST_FP32, fp32=_AUTOCAST_FP32)
# torch's CUDA float32 list; on the CPU cosine_similarity composes (its parts are on no CPU list) and pdist is the
# native _pdist_forward
_wrap_policies(globals(), {"cosine_similarity": {"cuda": "fp32"}, "pdist": {"cpu": "native", "cuda": "fp32"}})
