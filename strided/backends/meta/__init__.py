"""The Meta backend: output metadata (sizes, strides, dtype) for every op, no data.

Each module registers its functions with ``@kernel("Meta")``; CPU and CUDA kernels import the
same functions to allocate their outputs.
"""

from . import (  # noqa: F401
    bitwise,
    complex_ops,
    factories,
    fft,
    indexing,
    linalg,
    linalg_eig,
    linalg_ldl,
    math_more,
    normalization,
    optim,
    pointwise,
    pointwise_binary_math,
    pointwise_unary,
    random_samplers,
    recurrent,
    reductions,
)
