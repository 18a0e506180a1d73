"""Channel-wise and self-normalizing dropout of ``strided.nn.functional``: dropout1d / 2d / 3d, alpha_dropout and
feature_alpha_dropout, composed of ``bernoulli_`` and elementwise ops (torch's ``_dropout_impl`` in
aten/src/ATen/native/Dropout.cpp).

Note [Feature noise]
Feature (channel-wise) dropout draws one Bernoulli(1 - p) value per (sample, channel): the noise has shape
(N, C, 1, ...) and broadcasts over the spatial dims, so a whole channel is kept or zeroed together. Plain
dropout scales kept values by 1 / (1 - p). Alpha dropout keeps SELU's self-normalization: a dropped value
becomes SELU's negative saturation -alpha' (alpha' = 1.7580993408473766), then the affine map ``a * x + b``
with ``a = 1 / sqrt((alpha'^2 p + 1)(1 - p))``, ``b = a alpha' p`` restores mean 0 and variance 1; as torch
computes it, ``out = input * (noise * a) + (noise - 1) * alpha' a + alpha' a p``. The gradient is the noise
times ``a`` (the noise is a constant). The input comes back unchanged when not training, for p = 0 and for an
empty input; p = 1 multiplies by zero (alpha dropout too, as torch's implementation does).
"""

from __future__ import annotations

import math
import warnings

from ..dispatch.argument_checks import check_args
from ..ops import bound as ops
from ..tensor import Tensor

__all__ = ["dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"]

_SELU_ALPHA = 1.7580993408473766  # -SELU's negative saturation (scale * alpha of selu)


def _check_p(p) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout_impl(input: Tensor, p: float, train: bool, inplace: bool, feature: bool, alpha: bool) -> Tensor:
    """torch's ``_dropout_impl<feature_dropout, alpha_dropout, inplace>`` (Note [Feature noise])."""
    if not isinstance(input, Tensor):
        raise TypeError(f"dropout(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if p == 0 or not train or input.numel() == 0:
        return input
    if feature and input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if p == 1:
        zero = ops.zeros((), dtype=input.dtype, device=input.device)
        return ops.mul_(input, zero) if inplace else ops.mul(input, zero)
    shape = (*input.shape[:2], *([1] * (input.dim() - 2))) if feature else tuple(input.shape)
    noise = ops.bernoulli_(ops.empty(shape, dtype=input.dtype, device=input.device), 1.0 - p)
    if alpha:
        a = 1.0 / math.sqrt((_SELU_ALPHA * _SELU_ALPHA * p + 1) * (1 - p))
        shift = (noise - 1.0) * (_SELU_ALPHA * a) + _SELU_ALPHA * a * p
        scaled = noise * a
        if inplace:
            return ops.add_(ops.mul_(input, scaled), shift)
        return input * scaled + shift
    noise = noise / (1.0 - p)
    return ops.mul_(input, noise) if inplace else input * noise


def _unbatched(input: Tensor, batched_dim: int, inplace: bool, fn) -> Tensor:
    """Run ``fn`` on ``input`` with a batch dim of one added when it has fewer than ``batched_dim`` dims."""
    if input.dim() == batched_dim:
        return fn(input)
    if inplace:  # the batched view is written through, so the result is ``input`` itself
        fn(ops.unsqueeze(input, 0))
        return input
    return ops.squeeze(fn(ops.unsqueeze(input, 0)), [0])


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, L) or (C, L) with probability ``p``; scale the rest by 1 / (1 - p)."""
    check_args("dropout1d", ("input", 1, input, "Tensor"))
    _check_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note that dropout1d exists "
            "to provide channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an "
            "optional batch dimension (i.e. 2D or 3D inputs)."
        )
    return _unbatched(input, 3, inplace, lambda x: _dropout_impl(x, p, training, inplace, True, False))


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, H, W) with probability ``p``; as torch, a 3-D input is read as (N, C, L)."""
    check_args("dropout2d", ("input", 1, input, "Tensor"))
    _check_p(p)
    nd = input.dim()
    if nd not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {nd}-D input to dropout2d, which is deprecated and will result in an error in a "
            "future release. To retain the behavior and silence this warning, please use dropout instead. Note "
            "that dropout2d exists to provide channel-wise dropout on inputs with 2 spatial dimensions, a channel "
            "dimension, and an optional batch dimension (i.e. 3D or 4D inputs).",
            stacklevel=2,
        )
    if nd == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior is "
            "desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior will "
            "change in a future release to interpret the input as one without a batch dimension, i.e. shape "
            "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2,
        )
    return _dropout_impl(input, p, training, inplace, True, False)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) with probability ``p``."""
    check_args("dropout3d", ("input", 1, input, "Tensor"))
    _check_p(p)
    nd = input.dim()
    if nd not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {nd}-D input to dropout3d, which is deprecated and will result in an error in a "
            "future release. To retain the behavior and silence this warning, please use dropout instead. Note "
            "that dropout3d exists to provide channel-wise dropout on inputs with 3 spatial dimensions, a channel "
            "dimension, and an optional batch dimension (i.e. 4D or 5D inputs).",
            stacklevel=2,
        )
    return _unbatched(input, 5, inplace, lambda x: _dropout_impl(x, p, training, inplace, True, False))


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Dropout that keeps a SELU network's mean and variance (Note [Feature noise]); off unless ``training``."""
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, False, True)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """:func:`alpha_dropout` of whole channels (dim 1); off unless ``training``."""
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, True, True)
