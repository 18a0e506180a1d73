"""``strided.nn.utils``: gradient clipping and total norms, parameters as one vector, packed sequences
(``rnn``), parametrizations (``parametrize``, ``parametrizations``), the hook forms of weight / spectral norm,
``stateless.functional_call``, BatchNorm folding (``fusion``), ``skip_init``, the conv weight memory-format
converters, and ``prune`` (imported on its own, as torch's)."""

from __future__ import annotations

from . import fusion, parametrizations, parametrize, rnn, stateless
from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights
from .init_and_format import convert_conv2d_weight_memory_format, convert_conv3d_weight_memory_format, skip_init
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

__all__ = ["rnn", "parametrize", "parametrizations", "stateless", "fusion", "clip_grad_norm_", "clip_grad_norm",
           "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_", "parameters_to_vector",
           "vector_to_parameters",
           "weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm", "fuse_conv_bn_eval",
           "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights", "skip_init",
           "convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]
