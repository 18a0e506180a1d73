"""``strided.nn.functional``: the stateless forms of the layers and losses (torch.nn.functional).

The functions here validate their Python-level arguments (reduction names, padding_idx,
probabilities) as torch does and call one operator from the schema file, so Autocast, Autograd and
every backend apply unchanged. Those composed of several operators live beside this module and are
re-exported: ``activations`` (leaky_relu, elu, hardtanh, glu, rms_norm, ...), ``losses`` (nll_loss,
binary cross entropy, l1/smooth_l1/huber, kl_div, cosine_similarity, ...), ``convolution``
(conv1d/2d, max/avg/adaptive pooling), ``batch_norm`` and ``padding`` (pad).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import dtypes as _dt
from ..backends.meta.pointwise import scalar_type_name
from ..dispatch.argument_checks import check_args
from ..dispatch.dispatcher import autocast_state, grad_mode
from ..ops import bound as ops
from ..ops.complex_support import refuse_complex
from ..tensor import Tensor
from ..toplevel_aten_forms import conv_tbc  # torch.nn.functional's conv_tbc is torch.conv_tbc
from . import activations as _activations
from . import adaptive_max_pooling as _adaptive_max_pooling
from . import attention as _attention
from . import batch_norm as _batch_norm
from . import bilinear as _bilinear
from . import convolution as _convolution
from . import convolution3d as _convolution3d
from . import convolution_transpose as _convolution_transpose
from . import convolution_transpose3d as _convolution_transpose3d
from . import ctc_loss as _ctc_loss
from . import dropout as _dropout
from . import embedding_bag as _embedding_bag
from . import fold as _fold
from . import fractional_max_pooling as _fractional_max_pooling
from . import grid_sampling as _grid_sampling
from . import interpolation as _interpolation
from . import likelihood_losses as _likelihood_losses
from . import local_response_norm as _local_response_norm
from . import losses as _losses
from . import lp_pooling as _lp_pooling
from . import margin_losses as _margin_losses
from . import pooling as _pooling
from . import pooling3d as _pooling3d
from . import rearrangement as _rearrangement
from . import shrinkage as _shrinkage
from . import unpooling as _unpooling
from ._reduction import get_enum as _reduction_enum
from ._reduction import legacy_get_string as _legacy_reduction
from .activations import *  # noqa: F403 - the composed forms, listed in each module's __all__
from .activations import _softmax_dim
from .adaptive_max_pooling import *  # noqa: F403
from .batch_norm import *  # noqa: F403
from .bilinear import *  # noqa: F403
from .convolution import *  # noqa: F403
from .convolution3d import *  # noqa: F403
from .convolution_transpose import *  # noqa: F403
from .convolution_transpose3d import *  # noqa: F403
from .ctc_loss import *  # noqa: F403
from .dropout import *  # noqa: F403
from .embedding_bag import *  # noqa: F403
from .fold import *  # noqa: F403
from .fractional_max_pooling import *  # noqa: F403
from .grid_sampling import *  # noqa: F403
from .interpolation import *  # noqa: F403
from .likelihood_losses import *  # noqa: F403
from .linear_cross_entropy import linear_cross_entropy
from .local_response_norm import *  # noqa: F403
from .losses import *  # noqa: F403
from .lp_pooling import *  # noqa: F403
from .margin_losses import *  # noqa: F403
from .multihead_attention import multi_head_attention_forward
from .padding import pad
from .pooling import *  # noqa: F403
from .pooling3d import *  # noqa: F403
from .rearrangement import *  # noqa: F403
from .shrinkage import *  # noqa: F403
from .unpooling import *  # noqa: F403

__all__ = [
    "linear", "linear_cross_entropy", "grouped_mm", "relu", "gelu", "silu", "sigmoid", "tanh", "softplus", "one_hot",
    "softmax", "pad", "normalize",
    "log_softmax", "dropout", "layer_norm", "embedding", "cross_entropy", "mse_loss", "scaled_dot_product_attention",
    "multi_head_attention_forward", "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
    "conv_tbc", *_activations.__all__, *_losses.__all__, *_convolution.__all__, *_convolution3d.__all__,
    *_pooling3d.__all__, *_pooling.__all__, *_convolution_transpose.__all__, *_rearrangement.__all__,
    *_batch_norm.__all__, *_interpolation.__all__, *_adaptive_max_pooling.__all__, *_dropout.__all__,
    *_fold.__all__, *_likelihood_losses.__all__, *_lp_pooling.__all__, *_margin_losses.__all__, *_shrinkage.__all__,
    *_unpooling.__all__, *_convolution_transpose3d.__all__, *_bilinear.__all__, *_local_response_norm.__all__,
    *_embedding_bag.__all__, *_grid_sampling.__all__, *_ctc_loss.__all__, *_fractional_max_pooling.__all__,
]


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``."""
    return ops.linear(input, weight, bias)


def grouped_mm(mat_a: Tensor, mat_b: Tensor, *, offs: Tensor | None = None, bias: Tensor | None = None,
               out_dtype=None) -> Tensor:
    """A Mixture-of-Experts layer's grouped matrix product: ``mat_a``'s rows (or ``mat_b``'s columns, or the
    contraction) split into groups by the int32 end offsets ``offs``, one product per group; two 3-d operands are a
    batched product without ``offs`` (Note [Grouped GEMM as GEMMs])."""
    return ops._grouped_mm(mat_a, mat_b, offs=offs, bias=bias, out_dtype=out_dtype)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    return ops.relu_(input) if inplace else ops.relu(input)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit; ``approximate="tanh"`` for the tanh approximation."""
    return ops.gelu(input, approximate=approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    out = ops.silu(input)
    return input.copy_(out) if inplace else out


def sigmoid(input: Tensor) -> Tensor:
    """``1 / (1 + exp(-input))`` (torch's ``F.sigmoid``)."""
    return ops.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    """Hyperbolic tangent (torch's ``F.tanh``)."""
    return ops.tanh(input)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, linear where ``beta * x > threshold``."""
    return ops.softplus(input, beta, threshold)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot encoding of class indices (``num_classes=-1``: max index + 1)."""
    return ops.one_hot(tensor, num_classes)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None) -> Tensor:
    """``input`` divided by its ``p``-norm along ``dim`` (at least ``eps``); into ``out`` when given."""
    if not isinstance(input, Tensor):
        raise TypeError(f"normalize(): argument 'input' must be Tensor, not {type(input).__name__}")
    if out is not None and not isinstance(out, Tensor):
        raise TypeError(f"normalize(): argument 'out' must be Tensor, not {type(out).__name__}")
    denom = ops.clamp(ops.norm(input, p, [dim] if isinstance(dim, int) else dim, True), eps).expand_as(input)
    return input / denom if out is None else ops.div(input, denom, out=out)


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``exp(x) / exp(x).sum(dim)``; ``dtype`` casts the input first (avoids overflow in half types)."""
    check_args("softmax", ("input", 1, input, "Tensor"))
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    return ops.softmax(input, dim, dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    check_args("log_softmax", ("input", 1, input, "Tensor"))
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    return ops.log_softmax(input, dim, dtype)


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False, generator=None) -> Tensor:
    """Zero elements with probability ``p`` and scale the rest by ``1/(1-p)`` (only when training)."""
    check_args("dropout", ("input", 1, input, "Tensor"))
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0 or input.numel() == 0:
        return input  # torch's _dropout_impl returns its input unchanged here
    d = input.dtype
    if not (d.is_floating_point or d.is_complex):
        if p < 1.0:  # torch scales a mask of the input's dtype by the float 1 / (1 - p), in place
            raise RuntimeError(f"result type Float can't be cast to the desired output type {scalar_type_name(d)}")
        out = ops.zeros_like(input)  # p == 1: torch multiplies by a zero of the input's dtype
        return input.copy_(out) if inplace else out
    out = ops.dropout(input, p, training, generator=generator)
    return input.copy_(out) if inplace else out


def layer_norm(
    input: Tensor, normalized_shape, weight: Tensor | None = None, bias: Tensor | None = None, eps: float = 1e-5
) -> Tensor:
    """Normalize over the last ``len(normalized_shape)`` dims, then scale and shift."""
    check_args("layer_norm", ("input", 1, input, "Tensor"),
               ("weight", 3, weight, "Tensor?"),
               ("bias", 4, bias, "Tensor?"))
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    return ops.layer_norm(input, list(normalized_shape), weight, bias, eps)


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Rows of ``weight`` selected by the integer tensor ``input``.

    With ``max_norm``, the referenced rows whose ``norm_type``-norm exceeds it are first rescaled
    in place to norm ``max_norm`` (torch's ``embedding_renorm_``).
    """
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.size(0) + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    return ops.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def _embedding_renorm_(weight: Tensor, input: Tensor, max_norm: float, norm_type: float) -> None:
    from ..autograd.grad_mode import no_grad
    from ..factories import from_numpy

    rows = np.unique(input.detach().cpu().numpy().reshape(-1))
    if rows.size == 0:
        return
    idx = from_numpy(rows.astype(np.int64)).to(weight.device)
    with no_grad():
        selected = weight.index_select(0, idx)
        norms = ops.norm(selected, norm_type, [1], True)
        scale = ops.where(ops.gt(norms, max_norm), max_norm / (norms + 1e-7), ops.ones_like(norms))
        weight.index_put_((idx,), selected * scale)


def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    ignore_index: int = -100,
    reduce=None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """Cross entropy between logits ``input`` (N, C, ...) or (C,) and class indices or probabilities.

    ``reduction``: "mean" (weighted mean over non-ignored targets), "sum" or "none";
    ``ignore_index`` targets contribute nothing; ``label_smoothing`` mixes in the uniform distribution.
    """
    check_args("cross_entropy", ("input", 1, input, "Tensor"),
               ("target", 2, target, "Tensor"),
               ("weight", 3, weight, "Tensor?"))
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if weight is not None and weight._requires_grad and grad_mode.enabled and not target.dtype.is_floating_point:
        # torch's cross_entropy reaches nll_loss_forward / nll_loss2d_forward, whose weight has no gradient
        fn = "nll_loss_forward" if input.dim() <= 2 else "nll_loss2d_forward"
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument 'weight'. This "
                           "input cannot have requires_grad True.")
    return ops.cross_entropy_loss(input, target, weight, _reduction_enum(reduction), ignore_index, label_smoothing)


def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
             weight: Tensor | None = None) -> Tensor:
    """Mean (or sum, or elementwise) squared error; runs in float32 under autocast, as torch. ``weight`` (input's
    size) scales each squared error, and the mean is then their sum over the weights' sum, as torch's."""
    check_args("mse_loss", ("input", 1, input, "Tensor"),
               ("target", 2, target, "Tensor"),
               ("weight", 6, weight, "Tensor?"))
    reduction = _legacy_reduction(size_average, reduce, reduction)
    code = _reduction_enum(reduction)
    refuse_complex(input, "mse_cpu", "mse_cuda")
    kind = _dt.promote_types(input.dtype, target.dtype) if isinstance(target, Tensor) else input.dtype
    if not kind.is_floating_point:  # torch's mse kernel, on the operands' promoted dtype: floating dtypes only
        raise NotImplementedError(f"\"mse_{input.device.type}\" not implemented for '{scalar_type_name(kind)}'")
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            stacklevel=2,
        )
    if autocast_state.active:
        from ..amp.autocast_mode import is_autocast_enabled

        if input.device.type in ("cpu", "cuda") and is_autocast_enabled(input.device.type):
            input, target = (t.float() if t.dtype in (_dt.float16, _dt.bfloat16) else t for t in (input, target))
    if _dt.bool in (input.dtype, target.dtype):  # the kernel reads both in the common (floating) dtype
        input, target = _losses._in_dtype(kind, input, target)
    input, target = _losses.broadcast_operands(input, target)  # one shape: the op's count is the loss's
    if weight is not None:  # torch's weighted form, composed of ops
        if not isinstance(weight, Tensor):
            raise TypeError(f"mse_loss(): argument 'weight' must be Tensor, not {type(weight).__name__}")
        if tuple(weight.shape) != tuple(input.shape):
            raise ValueError("Weights and input must have the same size.")
        weighted = ops.pow(input - target, 2) * weight
        if reduction == "none":
            return weighted
        return ops.sum(weighted) if reduction == "sum" else ops.sum(weighted) / ops.sum(weight)
    return ops.mse_loss(input, target, code)


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
    generator=None,
) -> Tensor:
    """``softmax(q @ k^T * scale + mask) @ v`` over (..., L, E) queries and (..., S, E) keys (torch's
    math reference). ``is_causal`` masks keys after each query; a bool ``attn_mask`` keeps True
    positions, a float one is added to the scores. ``enable_gqa``: keys and values with fewer heads (dim -3)
    than the queries serve groups of query heads, each head repeated (grouped-query attention, as torch's)."""
    _attention.check_math_enabled()  # Note [One attention implementation]
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    if enable_gqa and query.dim() >= 3:
        key, value = _repeat_kv_heads(query, key), _repeat_kv_heads(query, value)
    L, S = query.size(-2), key.size(-2)
    scale = 1.0 / math.sqrt(query.size(-1)) if scale is None else scale
    scores = ops.matmul(query, key.transpose(-2, -1)) * scale
    if is_causal:
        attn_mask = ops.ones((L, S), dtype=_dt.bool, device=query.device).tril()
    if attn_mask is not None:
        if attn_mask.dtype is _dt.bool:
            scores = scores.masked_fill(ops.logical_not(attn_mask), float("-inf"))
        else:
            scores = scores + attn_mask
    weights = ops.softmax(scores, -1)
    if dropout_p > 0.0:
        weights = ops.dropout(weights, dropout_p, True, generator=generator)
    return ops.matmul(weights, value)


def _repeat_kv_heads(query: Tensor, kv: Tensor) -> Tensor:
    """``kv`` with each of its heads (dim -3) repeated to the query's head count (torch's math reference for
    ``enable_gqa``: ``repeat_interleave``)."""
    hq, hkv = query.size(-3), kv.size(-3)
    if hq == hkv:
        return kv
    if hkv == 0 or hq % hkv:
        raise RuntimeError("Number of heads in key and value must divide the number of heads in query")
    return kv.repeat_interleave(hq // hkv, dim=-3)


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False):
    """``max_pool1d`` returning (values, indices), whatever ``return_indices`` says (torch's form)."""
    return _pooling.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False):
    """``max_pool2d`` returning (values, indices), whatever ``return_indices`` says (torch's form)."""
    return _pooling.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False):
    """``max_pool3d`` returning (values, indices), whatever ``return_indices`` says (torch's form)."""
    return _pooling3d.max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)
