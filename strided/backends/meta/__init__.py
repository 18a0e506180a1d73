"""The Meta backend: output metadata (sizes, strides, dtype) for every op, no data.

Each module registers its functions with ``@kernel("Meta")``; CPU and CUDA kernels import the
same functions to allocate their outputs.
"""

from . import bitwise, factories, indexing, linalg, normalization, optim, pointwise, pointwise_unary, reductions  # noqa: F401
