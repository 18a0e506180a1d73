"""``strided.nn.utils``: gradient clipping, parameters as one vector, packed sequences (``rnn``),
parametrizations (``parametrize``, ``parametrizations``), the hook forms of weight / spectral norm and
``stateless.functional_call``."""

from __future__ import annotations

from . import parametrizations, parametrize, rnn, stateless
from .clip_grad import clip_grad_norm_, clip_grad_value_
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

__all__ = ["rnn", "parametrize", "parametrizations", "stateless", "clip_grad_norm_", "clip_grad_value_",
           "parameters_to_vector", "vector_to_parameters", "weight_norm", "remove_weight_norm", "spectral_norm",
           "remove_spectral_norm"]
