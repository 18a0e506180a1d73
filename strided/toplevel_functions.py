"""Top-level functions torch has that are not function variants of the YAML: the in-place ops torch binds
at ``torch.*``, Python forms taking ``*tensors`` or ``*shapes``, and the ``torch.nn.functional`` names torch
also exports at top level, with torch's top-level signatures.

Note [Top-level re-exports]
torch's top-level ``batch_norm``, ``kl_div``, ``max_pool1d``... are the ATen ops, not ``F``'s Python
functions: their arguments are positional, reductions are ints (0 none, 1 mean, 2 sum), ``dropout``-like
ones take ``(input, p, train)``, and ``adaptive_max_pool1d`` / ``max_pool1d_with_indices`` return
``(values, indices)``. Each function here maps that signature onto strided.nn.functional.
"""

from __future__ import annotations

import numbers
import warnings

from .nn import functional as _nnf
from .ops import bound as _bound
from .tensor import Tensor

# in-place overloads (autogen or composite) that torch also binds at top level
_INPLACE = ("abs_", "acos_", "acosh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "cos_", "cosh_",
            "erf_", "erfc_", "exp2_", "exp_", "expm1_", "floor_", "index_put_", "log10_", "log1p_", "log2_", "log_",
            "neg_", "reciprocal_", "relu_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinh_", "sqrt_", "tan_",
            "tanh_", "trunc_")

_NN = ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "pixel_shuffle",
       "pixel_unshuffle", "channel_shuffle", "cosine_similarity", "pairwise_distance", "pdist", "rms_norm", "celu_",
       "selu_", "hardshrink", "prelu", "bilinear")

__all__ = [*_INPLACE, *_NN, "norm", "detach_", "split", "fill", "nonzero_static", "get_device",
           "atleast_1d", "atleast_2d", "atleast_3d",
           "broadcast_shapes", "celu", "selu", "rrelu", "rrelu_", "threshold", "threshold_", "dropout_",
           "alpha_dropout", "alpha_dropout_",
           "feature_alpha_dropout", "feature_alpha_dropout_", "feature_dropout", "feature_dropout_", "group_norm",
           "instance_norm", "batch_norm", "kl_div", "binary_cross_entropy_with_logits", "cosine_embedding_loss",
           "hinge_embedding_loss", "margin_ranking_loss", "poisson_nll_loss", "triplet_margin_loss", "ctc_loss",
           "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "avg_pool1d", "adaptive_avg_pool1d",
           "adaptive_max_pool1d"]

for _name in _INPLACE:
    globals()[_name] = getattr(_bound, _name)
for _name in _NN:
    globals()[_name] = getattr(_nnf, _name)
del _name


def norm(input: Tensor, p="fro", dim=None, keepdim: bool = False, out=None, dtype=None) -> Tensor:  # noqa: A002
    """torch.norm (and ``Tensor.norm``): ``linalg.vector_norm`` for a number ``p`` (2 when None) and for "fro"
    over at most two dims, else ``linalg.matrix_norm`` ("nuc", or "fro" over more dims, which raises there);
    ``dim=None`` is every element."""
    from .linalg import matrix_norm, vector_norm

    dims = None if dim is None else ([dim] if isinstance(dim, int) else dim)
    if isinstance(p, str) and not (p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2)):
        fn, args, key = matrix_norm, (input, p, list(range(input.dim())) if dims is None else dims, keepdim), \
            "linalg.matrix_norm"
    else:
        fn, args, key = vector_norm, (input, 2 if p == "fro" or p is None else p, dims, keepdim), "norm"
    if out is None:
        return fn(*args, dtype=dtype)
    from .dispatch.out_arguments import run_with_out

    return run_with_out(fn, "norm", args, {"dtype": dtype}, out, key=key)  # Note [Exact out dtypes]


def detach_(input: Tensor) -> Tensor:  # noqa: A002 - torch's argument name
    """``input.detach_()``."""
    if not isinstance(input, Tensor):
        from .dispatch.argument_checks import arg_tensor

        arg_tensor("detach_", "input", 1, input)
    return input.detach_()


def split(tensor: Tensor, split_size_or_sections, dim: int = 0) -> tuple:
    """torch.split: equal pieces of ``split_size_or_sections`` (an int), or pieces of the listed sizes."""
    return tensor.split(split_size_or_sections, dim)


def fill(input: Tensor, value) -> Tensor:  # noqa: A002
    """A tensor like ``input`` filled with ``value`` (a number or a 0-dim tensor): torch.fill, out of place."""
    if not isinstance(value, (numbers.Number, Tensor)) or isinstance(value, str):
        raise TypeError(f"fill(): argument 'value' must be Number or Tensor, not {type(value).__name__}")
    return _bound.fill_(_bound.clone(input), value)


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:  # noqa: A002
    """``nonzero(input)`` with exactly ``size`` rows: the first ``size`` indices, then rows of ``fill_value``.
    torch's CUDA kernel avoids nonzero's host sync; strided's computes nonzero, so it synchronizes."""
    for name, v in (("size", size), ("fill_value", fill_value)):
        if v.__class__ is not int:
            raise TypeError(f"nonzero_static(): argument '{name}' must be int, not {type(v).__name__}")
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    found = _bound.nonzero(input)
    n = found.shape[0]
    if n >= size:
        return found[:size]
    pad = _bound.full((size - n, input.dim()), fill_value, dtype=found.dtype, device=found.device)
    return _bound.cat([found, pad], 0)


def get_device(input: Tensor) -> int:  # noqa: A002
    """``input.get_device()``: the CUDA device index, -1 for a CPU tensor."""
    if not isinstance(input, Tensor):
        raise TypeError(f"get_device(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input.get_device()


def _atleast(op, tensors):
    if len(tensors) == 1:
        tensors = tensors[0]
    if isinstance(tensors, Tensor):
        return op(tensors)
    return tuple(op(list(tensors)))


def atleast_1d(*tensors):
    """Each input viewed with at least one dimension (a tensor for one input, else a tuple)."""
    return _atleast(_bound.atleast_1d, tensors)


def atleast_2d(*tensors):
    """Each input viewed with at least two dimensions (a tensor for one input, else a tuple)."""
    return _atleast(_bound.atleast_2d, tensors)


def atleast_3d(*tensors):
    """Each input viewed with at least three dimensions (a tensor for one input, else a tuple)."""
    return _atleast(_bound.atleast_3d, tensors)


def broadcast_shapes(*shapes):
    """The shape ``broadcast_tensors`` would give tensors of these shapes (ints count as 1-d shapes)."""
    from .tensor import Size

    dims = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    n = max((len(d) for d in dims), default=0)
    out = [1] * n
    for i, d in enumerate(dims):
        for k, size in enumerate(d):
            if size < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {size}: {list(d)}")
            j = n - len(d) + k
            if out[j] == 1:
                out[j] = size
            elif size not in (1, out[j]):
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {size} at {k - len(d)}! Mismatching argument at "
                    f"index {i} had {tuple(d)}; but expected shape should be broadcastable to {out}")
    return Size(out)


# Note [Top-level reduction default]: torch's schemas say ``int reduction=Mean``, but its Python bindings
# pass 0 when the argument is left out, so ``torch.kl_div(a, b)`` is unreduced; strided does the same.
_REDUCTION = {0: "none", 1: "mean", 2: "sum"}


def _F():
    return _nnf


def celu(input: Tensor, alpha: float = 1.0) -> Tensor:  # noqa: A002
    """torch.celu (Note [Top-level re-exports])."""
    return _F().celu(input, alpha)


def selu(input: Tensor) -> Tensor:  # noqa: A002
    """torch.selu (Note [Top-level re-exports])."""
    return _F().selu(input)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,  # noqa: A002
          generator=None) -> Tensor:
    """torch.rrelu (Note [Top-level re-exports])."""
    return _F().rrelu(input, lower, upper, training)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,  # noqa: A002
           generator=None) -> Tensor:
    """torch.rrelu_ (Note [Top-level re-exports])."""
    return _F().rrelu_(input, lower, upper, training)


def threshold(input: Tensor, threshold: float, value: float) -> Tensor:  # noqa: A002
    """torch.threshold (Note [Top-level re-exports])."""
    return _F().threshold(input, threshold, value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:  # noqa: A002
    """torch.threshold_ (Note [Top-level re-exports])."""
    return _F().threshold_(input, threshold, value)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """torch.dropout_: ``dropout(input, p, train)`` written into ``input``."""
    return _F().dropout(input, p, train, inplace=True)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """torch.alpha_dropout (Note [Top-level re-exports])."""
    return _F().alpha_dropout(input, p, train)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """torch.alpha_dropout_ (Note [Top-level re-exports])."""
    return _F().alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """torch.feature_alpha_dropout (Note [Top-level re-exports])."""
    return _F().feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """torch.feature_alpha_dropout_ (Note [Top-level re-exports])."""
    return _F().feature_alpha_dropout(input, p, train, inplace=True)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """torch.feature_dropout: zeroes whole channels (dim 1) with probability ``p``, scales the rest."""
    if input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return _feature_mask(input, p, train, False)


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """torch.feature_dropout_ (in place)."""
    if input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return _feature_mask(input, p, train, True)


def _feature_mask(input, p, train, inplace):
    if p < 0 or p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not train or p == 0:
        return input
    from .factories import empty

    shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    keep = empty(shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p)
    mask = keep.div_(1 - p) if p < 1 else keep
    return input.mul_(mask) if inplace else input * mask


def group_norm(input: Tensor, num_groups: int, weight=None, bias=None, eps: float = 1e-05,  # noqa: A002
               cudnn_enabled: bool = True) -> Tensor:
    """torch.group_norm (Note [Top-level re-exports])."""
    return _F().group_norm(input, num_groups, weight, bias, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,  # noqa: A002
                  cudnn_enabled) -> Tensor:
    """torch.instance_norm (Note [Top-level re-exports])."""
    return _F().instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,  # noqa: A002
               cudnn_enabled) -> Tensor:
    """torch.batch_norm (Note [Top-level re-exports])."""
    return _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def _reduction(reduction) -> str:
    if reduction not in _REDUCTION:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _REDUCTION[reduction]


def kl_div(input, target, reduction: int = 0, *, log_target: bool = False) -> Tensor:  # noqa: A002
    """torch.kl_div (int reduction, Note [Top-level re-exports])."""
    with warnings.catch_warnings():  # F's warning about 'mean' is F's, not the op's
        warnings.simplefilter("ignore")
        return _F().kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction: int = 0):  # noqa: A002
    """torch.binary_cross_entropy_with_logits (int reduction, Note [Top-level re-exports])."""
    return _F().binary_cross_entropy_with_logits(input, target, weight, reduction=_reduction(reduction),
                                                 pos_weight=pos_weight)


def cosine_embedding_loss(input1, input2, target, margin: float = 0.0, reduction: int = 0) -> Tensor:
    """torch.cosine_embedding_loss (int reduction, Note [Top-level re-exports])."""
    return _F().cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def hinge_embedding_loss(input, target, margin: float = 1.0, reduction: int = 0) -> Tensor:  # noqa: A002
    """torch.hinge_embedding_loss (int reduction, Note [Top-level re-exports])."""
    return _F().hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def margin_ranking_loss(input1, input2, target, margin: float = 0.0, reduction: int = 0) -> Tensor:
    """torch.margin_ranking_loss (int reduction, Note [Top-level re-exports])."""
    return _F().margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def poisson_nll_loss(input, target, log_input, full, eps, reduction) -> Tensor:  # noqa: A002
    """torch.poisson_nll_loss (all arguments positional, int reduction)."""
    return _F().poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_reduction(reduction))


def triplet_margin_loss(anchor, positive, negative, margin: float = 1.0, p: float = 2, eps: float = 1e-06,
                        swap: bool = False, reduction: int = 0) -> Tensor:
    """torch.triplet_margin_loss (int reduction, Note [Top-level re-exports])."""
    return _F().triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                    reduction=_reduction(reduction))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank: int = 0, reduction: int = 0,
             zero_infinity: bool = False) -> Tensor:
    """torch.ctc_loss (int reduction, Note [Top-level re-exports])."""
    return _F().ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _reduction(reduction),
                         zero_infinity)


def _pool_stride(stride):
    return None if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else stride


def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False):  # noqa: A002
    """torch.max_pool1d (Note [Top-level re-exports])."""
    return _F().max_pool1d(input, kernel_size, _pool_stride(stride), padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False):  # noqa: A002
    """torch.max_pool2d (Note [Top-level re-exports])."""
    return _F().max_pool2d(input, kernel_size, _pool_stride(stride), padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False):  # noqa: A002
    """torch.max_pool3d (Note [Top-level re-exports])."""
    return _F().max_pool3d(input, kernel_size, _pool_stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,  # noqa: A002
                            ceil_mode: bool = False):
    """torch.max_pool1d_with_indices: ``(values, indices)``."""
    return tuple(_F().max_pool1d(input, kernel_size, _pool_stride(stride), padding, dilation, ceil_mode,
                                 return_indices=True))


def avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode: bool = False,  # noqa: A002
               count_include_pad: bool = True):
    """torch.avg_pool1d (Note [Top-level re-exports])."""
    return _F().avg_pool1d(input, kernel_size, _pool_stride(stride), padding, ceil_mode, count_include_pad)


def adaptive_avg_pool1d(input, output_size):  # noqa: A002
    """torch.adaptive_avg_pool1d (Note [Top-level re-exports])."""
    return _F().adaptive_avg_pool1d(input, output_size)


def adaptive_max_pool1d(input, output_size):  # noqa: A002
    """torch.adaptive_max_pool1d: ``(values, indices)``."""
    return tuple(_F().adaptive_max_pool1d(input, output_size, return_indices=True))
