"""The CPU backend: NumPy kernels over host storage (see common.py for the array views)."""

from . import (  # noqa: F401
    bitwise,
    complex_ops,
    factories,
    fft,
    indexing,
    linalg,
    linalg_eig,
    linalg_factorizations,
    linalg_ldl,
    math_more,
    normalization,
    optim,
    pointwise,
    pooling,
    pointwise_binary_math,
    pointwise_unary,
    random_fills,
    random_samplers,
    recurrent,
    reductions,
    threads,
)
from .host_malloc import tune_host_malloc  # noqa: E402
from .inplace import register_inplace  # noqa: E402

register_inplace()  # Note [CPU direct in-place kernels]
tune_host_malloc()  # Note [Host malloc thresholds]
