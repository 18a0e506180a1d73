"""The operator database: every YAML overload has an OpInfo (or is listed in one's ``covers``)."""

from __future__ import annotations

import importlib

GROUPS = ("factories", "views", "pointwise", "reductions", "normalization", "linalg", "linalg_fused", "indexing",
          "linalg_einsum", "foreach", "rearranging", "bitwise", "selection",
          "pointwise_binary_math", "reductions_nan",
          "order_statistics", "combining", "uniqueness", "recurrent", "recurrent_fused",
          "linalg_kernels_triangular", "linalg_kernels_lu", "linalg_kernels_orthogonal", "random_samplers",
          "aliases_inplace", "linalg_helpers", "indexing_compositions", "math_more", "random_fills", "complex_ops",
          "linalg_eig", "linalg_ldl", "fft", "complex_math", "pooling", "columns", "convolution", "batch_norm",
          "group_norm", "losses", "activations")


def op_db() -> list:
    """All OpInfos, from each group module's ``OPS`` list."""
    ops = []
    for group in GROUPS:
        module = importlib.import_module(f"{__name__}.{group}")
        ops.extend(module.OPS)
    return ops
